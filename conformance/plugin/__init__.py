"""The pytest plugin: ``pytest --conformance-protocol ...`` and the ``conformance_run`` fixture."""
