"""The model-based phase: random, reproducible sequences of writes and reads, every answer
compared with a model of the state the documents determine.

``engine`` drives a protocol's model (a Hypothesis state machine written with the model kit,
``check/model.py``) against a live target and turns what it finds into requirement verdicts;
``phase`` runs it as a phase of the run. Each protocol's model is its ``protocols/<id>/model.py``.
"""
