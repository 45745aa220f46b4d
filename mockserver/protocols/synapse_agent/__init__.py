"""The reference mock of synapse-agent: its handlers, store and named faults."""
