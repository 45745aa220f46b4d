"""neuro-san, the suite's side, declared in one descriptor (``SUITE``): ``requirements`` (requirements
and scenario checks), ``model`` (the model-based phase and the requirements it decides),
``passive`` (what the proxy judges from live traffic)."""

from ...run.descriptor import declare
from .model import MODEL
from .passive import Passive
from .requirements import STREAM_MEDIA_TYPES, known_path_values, registry

SUITE = declare(
    "neuro-san",
    registry=registry,
    model=MODEL,
    passive=Passive,
    stream_media_types=STREAM_MEDIA_TYPES,
    known_path_values=known_path_values,
)

__all__ = ["SUITE"]
