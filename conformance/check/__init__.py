"""The check kit: what a check is written with. ``context`` is what a scenario check sees (the
target, a bounded client, the verbs of a verdict), ``model`` what a protocol's model for the
model-based phase is written with, ``oracle`` judges single values; ``http`` is the bounded client,
``guard`` the run's stall guard every client tells, ``streams`` the SSE and NDJSON readers,
``curl`` renders an exchange as a command line; ``edges`` is the corpus of hard values every round
trip sends, and says how an echo differs."""
