"""The reference mock of agent-protocol: its handlers, store and named faults."""
