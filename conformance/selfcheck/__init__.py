"""The suite proves itself against the mock's fault catalogue: each fault alone, and faults together."""
