import sys

from .launch import entry

sys.exit(entry())
