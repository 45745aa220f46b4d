"""One folder per protocol: its requirements and scenario checks (``requirements``), its model for
the model-based phase (``model``) and what the proxy judges from traffic (``passive``). The suites
built from them are in conformance/run/suites.py."""

from ..run.suites import ProtocolSuite, suite

__all__ = ["ProtocolSuite", "suite"]
