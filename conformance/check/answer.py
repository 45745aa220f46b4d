"""A server's JSON as a check reads it: what the server sent decides a verdict, never a crash.

A check reads the fields its requirement needs (``body["task_messages"][0]["text"]``). When the
server sent another shape (a renamed or missing key, an object where the document has an array, an
index past the end), Python would raise ``KeyError``, ``TypeError`` or ``IndexError``, and the
requirement would end as a suite "error", which belongs to the suite's own bugs. So the JSON of an
answer is read through ``Object`` and ``Array`` (a ``dict`` and a ``list`` that know where in
which answer they stand): a read the answer cannot satisfy raises ``Unreadable``,
a ``CheckFailed`` naming the path read and carrying the answer's exchange as the evidence that shows
it. Each is also the ``KeyError``/``TypeError``/``IndexError`` Python would have raised, so code
that handles a missing key (``except KeyError``) behaves as before. Strings, numbers and ``null``
stay Python's own (the schema validator takes no subclass of ``str``): one read as a container
is not covered, nor an object iterated as an array; checks test those with ``isinstance``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NoReturn

from ..verdicts.results import CheckFailed, Exchange
from .shown import shown


class Unreadable(CheckFailed):
    """The answer has not the shape a check read it by: the path read, and the answer shown."""


class MissingKey(Unreadable, KeyError):
    pass


class WrongType(Unreadable, TypeError):
    pass


class BadIndex(Unreadable, IndexError):
    pass


def _unreadable(kind: type[Unreadable], message: str, exchange: Exchange | None) -> NoReturn:
    raise kind(f"the answer {message}", shown_by=exchange)


def _path(up: Object | Array | None, key: object) -> str:
    """Where a value stands in its answer (``$.steps[0].output``), built only when a read fails."""
    if up is None:  # the root: its label
        return key if isinstance(key, str) else "$"
    where = up.path
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if isinstance(key, str) and key.isidentifier() else f"{where}[{shown(key)}]"


def _wrapped(value: Any, exchange: Exchange | None, up: Object | Array | None, key: object) -> Any:
    """``value`` as read from ``up`` at ``key``: an object or array wrapped (its own parts are
    wrapped when they are read in turn, so a check pays only for what it reads)."""
    kind = type(value)
    if kind is dict:
        node: Object | Array = Object(value, exchange)
    elif kind is list:
        node = Array(value, exchange)
    else:
        return value
    node._up, node._key = up, key
    return node


class Object(dict[str, Any]):
    """A JSON object of an answer."""

    __slots__ = ("_key", "_up", "exchange")

    def __init__(self, items: Any = (), exchange: Exchange | None = None) -> None:
        super().__init__(items)
        self.exchange = exchange
        self._up: Object | Array | None = None
        self._key: object = None

    @property
    def path(self) -> str:
        return _path(self._up, self._key)

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)  # a missing key: __missing__
        if type(value) is dict or type(value) is list:
            value = _wrapped(value, self.exchange, self, key)
            dict.__setitem__(self, key, value)  # read once, wrapped once
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401  # self.get is this method: read through __getitem__

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[key] for key in self]

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(key, self[key]) for key in self]

    def __missing__(self, key: object) -> NoReturn:
        if isinstance(key, int):  # read as an array
            _unreadable(WrongType, f"has an object at {self.path}, read as an array (item {key})", self.exchange)
        keys = shown(sorted(self), 120)
        _unreadable(MissingKey, f"has no {shown(key)} at {self.path} (its keys: {keys})", self.exchange)


class Array(list[Any]):
    """A JSON array of an answer."""

    __slots__ = ("_key", "_up", "exchange")

    def __init__(self, items: Any = (), exchange: Exchange | None = None) -> None:
        super().__init__(items)
        self.exchange = exchange
        self._up: Object | Array | None = None
        self._key: object = None

    @property
    def path(self) -> str:
        return _path(self._up, self._key)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            _unreadable(WrongType, f"has an array at {self.path}, read as an object (key {shown(key)})", self.exchange)
        if isinstance(key, slice):
            return [self[n] for n in range(*key.indices(len(self)))]
        try:
            value = list.__getitem__(self, key)
        except IndexError:
            items = f"{len(self)} item{'s' if len(self) != 1 else ''}"
            _unreadable(BadIndex, f"has {items} at {self.path}, read at item {key}", self.exchange)
        if type(value) is dict or type(value) is list:
            at = key + len(self) if key < 0 else key
            value = _wrapped(value, self.exchange, self, at)
            list.__setitem__(self, at, value)
        return value

    def __iter__(self) -> Iterator[Any]:
        return (self[n] for n in range(len(self)))


def readable(value: Any, exchange: Exchange | None, root: str = "$") -> Any:
    """``value`` (parsed JSON) as a check reads it, each part knowing where it stands in the answer
    ``exchange`` (``root``: how a path names the value itself, ``$``, or ``frame 3``'s)."""
    return _wrapped(value, exchange, None, root)
