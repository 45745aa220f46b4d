"""neuro_san requirements judged from traffic: placeholder until the checks land."""

from __future__ import annotations

from . import Checks


class Passive(Checks):
    judges = ()
