"""The ground both halves stand on: protocol documents and their loading (``specs``), compiled
validators (``schemas``) and the threaded server start-up (``serving``). It imports neither
``conformance`` nor ``mockserver``; both import it (the import contracts in pyproject.toml)."""
