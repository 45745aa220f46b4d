"""The command line: ``agent-conformance``'s commands, their progress lines and shell completion."""
