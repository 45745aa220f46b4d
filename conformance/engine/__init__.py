"""Runs a protocol's requirements against a target: one run, or several protocols in worker processes."""
