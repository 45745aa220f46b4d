"""The model-based phase: random, reproducible sequences of writes and reads, every answer
compared with a model of the state the documents determine.

``engine`` drives a protocol's model (a Hypothesis state machine) against a live target and turns
what it finds into requirement verdicts; ``oracle`` judges single values (timestamps, units,
ordered pairs, enums taken from outside standards). One module per protocol holds its model and
registers its requirements (``agent_protocol.py``, ...).
"""
