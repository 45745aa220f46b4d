"""The reference mock of neuro-san: its handlers, store and named faults."""
