"""neuro-san, the suite's side: ``requirements`` (requirements and scenario checks), ``passive``
(what the proxy judges from live traffic)."""
