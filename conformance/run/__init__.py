"""The run machinery, beneath the phases: the options of a run (``options``), each protocol's suite
(``suites``, with the generic schema requirements of ``schema_requirements`` as ``applicability``
decides them), the plan (``plan``), the typed events (``events``), the record of verdicts
(``ledger``), the watchdog and time budget (``watchdog``) and the targets (``targets``)."""
