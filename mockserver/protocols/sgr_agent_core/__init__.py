"""The reference mock of sgr-agent-core: its handlers, store and named faults."""
