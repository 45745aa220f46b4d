"""neuro-san's suite side: its requirements, its model of streamed chats, its judge of traffic."""

from ...run.descriptor import declare
from . import hostile  # noqa: F401  # registers the HOSTILE requirements, after requirements: they run last
from .model import MODEL
from .passive import Passive
from .requirements import SIGNATURES, STREAM_MEDIA_TYPES, known_path_values, registry

SUITE = declare(
    "neuro-san",
    registry=registry,
    model=MODEL,
    passive=Passive,
    stream_media_types=STREAM_MEDIA_TYPES,
    known_path_values=known_path_values,
    signatures=SIGNATURES,
)

__all__ = ["SUITE"]
