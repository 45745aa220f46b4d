"""The reference mock server for the four agent protocols."""

from .api import Call, ProtocolApi, Reply
from .app import create_app
from .config import Limits, MockConfig
from .embedded import EmbeddedServer
from .errors import ApiError
from .faults import Fault, FaultSet, catalogue

__all__ = [
    "ApiError",
    "Call",
    "EmbeddedServer",
    "Fault",
    "FaultSet",
    "Limits",
    "MockConfig",
    "ProtocolApi",
    "Reply",
    "catalogue",
    "create_app",
]
