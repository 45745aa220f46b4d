"""The property-based phase: schemathesis's engine run from the document (``engine``), bounded per
stalled operation (``stalls``), as a phase of the run (``phase``)."""
