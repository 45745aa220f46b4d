"""The protocols' documents and what both halves need of them: each ``<id>/`` folder holds a
document and its manifest; ``documents`` discovers and loads them (once per process), ``schemas``
compiles their validators, and ``serving`` starts an aiohttp app on loopback in a thread. This
package imports neither ``conformance`` nor ``mockserver``; both import it (the import contracts
in pyproject.toml)."""
