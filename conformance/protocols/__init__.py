"""One folder per protocol, each declaring its suite side in one descriptor (``SUITE``,
conformance/run/descriptor.py): its requirements and scenario checks (``requirements``), its model
for the model-based phase (``model``) and what the proxy judges from traffic (``passive``). The
suites built from them are in conformance/run/suites.py; nothing beneath imports a protocol: it is
found through its manifest."""
