"""Run settings: the command line's options, ``CONFORMANCE_*`` variables and the config file, checked."""
