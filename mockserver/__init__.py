"""The reference mock server for the four agent protocols."""

from .api import Call, Handlers, ProtocolApi, operation, route
from .app import create_app
from .config import MockConfig, MockLimits
from .descriptor import DescriptorError, MockProtocol, catalogue, declare, discover, resolve
from .embedded import EmbeddedServer
from .errors import ApiError
from .faults import Fault, FaultSet, Switches, fault_maker
from .reply import Reply

__all__ = [
    "ApiError",
    "Call",
    "DescriptorError",
    "EmbeddedServer",
    "Fault",
    "FaultSet",
    "Handlers",
    "MockConfig",
    "MockLimits",
    "MockProtocol",
    "ProtocolApi",
    "Reply",
    "Switches",
    "catalogue",
    "create_app",
    "declare",
    "discover",
    "fault_maker",
    "operation",
    "resolve",
    "route",
]
