"""Client conformance: the reference mock plays a named scenario, a client's own command runs
against it, and the client's traffic (the mock's journal) and exit status decide its
``<PREFIX>-CLIENT-NNN`` requirements (docs/client.md)."""
