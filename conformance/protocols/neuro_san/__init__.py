"""neuro-san, the suite's side: ``requirements`` (requirements and scenario checks), ``model``
(the model-based phase), ``passive`` (what the proxy judges from live traffic)."""
