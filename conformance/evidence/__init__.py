"""What is done with a finished run: replay its findings, verify its certificate, diff two runs, merge shards."""
