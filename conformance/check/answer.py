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
        try:
            return super().__getitem__(key)
        except IndexError:
            items = f"{len(self)} item{'s' if len(self) != 1 else ''}"
            _unreadable(BadIndex, f"has {items} at {self.path}, read at item {key}", self.exchange)


def readable(value: Any, exchange: Exchange | None, root: str = "$") -> Any:
    """``value`` (parsed JSON) as a check reads it, each part knowing where it stands in the answer
    ``exchange`` (``root``: how a path names the value itself, ``$``, or ``event 3``'s)."""
    return _readable(value, exchange, None, root)


def _readable(value: Any, exchange: Exchange | None, up: Object | Array | None, key: object) -> Any:
    if isinstance(value, dict):
        obj = Object((), exchange)
        obj._up, obj._key = up, key
        for k, v in value.items():
            dict.__setitem__(obj, k, _readable(v, exchange, obj, k))
        return obj
    if isinstance(value, list):
        arr = Array((), exchange)
        arr._up, arr._key = up, key
        list.extend(arr, (_readable(v, exchange, arr, n) for n, v in enumerate(value)))
        return arr
    return value
