"""The broken-client catalogue: small stdlib clients that follow the ``client`` contract, each
able to break one client requirement on purpose (``--break NAME``), like the mock's faults.

Run without ``--break`` a client is the fair variant: every requirement its scenarios decide must
pass. ``catalogue.py`` names each break, the scenario that shows it and the requirements it breaks.
"""
