"""``--example-db``: a Hypothesis example database shared between runs, runners and shards, so a
failure found anywhere is tried first everywhere after.

A location is a directory (Hypothesis's ``DirectoryBasedExampleDatabase``) or a ``redis://``
URL (``RedisExampleDatabase``; the optional ``redis`` extra). ``--example-db-readonly`` wraps it
in ``ReadOnlyDatabase`` (a pull request's run replays what the nightly campaign found and writes
nothing back); for Redis the reads also leave the keys' expiry alone, which Hypothesis's own
``fetch`` resets.

Every key is put under a namespace of the suite version, the protocol, its profile and the
document's digest (``Namespaced``): Hypothesis keys a test by its function and operation label,
which a changed document or suite keeps, and a choice sequence recorded against one document
replays as some other case against another. A run with another document or version reads a
namespace of its own and never replays stale examples as if they were current.

Without ``--example-db`` nothing is kept: the same ``--seed`` gives the same verdicts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_PROFILE = "agent-conformance-example-db"


class ExampleDbError(ValueError):
    """The location cannot be used; the message says what to do."""


@dataclass(frozen=True, slots=True)
class ExampleDb:
    """Where the examples live, and whether this run may write there."""

    location: str
    readonly: bool = False

    @property
    def kind(self) -> str:
        return "redis" if self.location.startswith(REDIS_SCHEMES) else "directory"

    def describe(self) -> dict[str, Any]:
        """What a report records of it: never the location (a Redis URL may carry a password)."""
        return {"kind": self.kind, "readonly": self.readonly}


def namespace(suite_version: str, protocol: str, profile: str | None, document_sha256: str) -> bytes:
    """The key prefix of one suite version's runs against one document."""
    text = f"{suite_version}|{protocol}|{profile or ''}|{document_sha256}"
    return b"agent-conformance/" + hashlib.sha256(text.encode()).hexdigest()[:24].encode() + b"/"


def open_database(db: ExampleDb, prefix: bytes) -> Any:
    """The Hypothesis database for ``db``, its keys under ``prefix``; ExampleDbError when it cannot
    be opened (the redis package missing, a server that does not answer)."""
    from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase

    inner: Any
    if db.kind == "redis":
        inner = _redis(db)
    else:
        path = Path(db.location)
        if path.exists() and not path.is_dir():
            raise ExampleDbError(f"--example-db {db.location}: not a directory")
        inner = DirectoryBasedExampleDatabase(path)
    wrapped = _namespaced(inner, prefix)
    return ReadOnlyDatabase(wrapped) if db.readonly else wrapped


def _redis(db: ExampleDb) -> Any:
    try:
        import redis
    except ImportError:
        raise ExampleDbError(
            f"--example-db {db.kind} needs the redis package: pip install 'agent-api-conformance[redis]'"
        ) from None
    from hypothesis.extra.redis import RedisExampleDatabase

    try:
        client = redis.Redis.from_url(db.location, socket_connect_timeout=5, socket_timeout=10)
        client.ping()
    except (redis.RedisError, ValueError) as exc:
        raise ExampleDbError(f"--example-db: cannot use the Redis server: {exc}") from None
    if db.readonly:
        return _read_only_redis(client)
    return RedisExampleDatabase(client)


def _namespaced(inner: Any, prefix: bytes) -> Any:
    from hypothesis.database import ExampleDatabase

    class Namespaced(ExampleDatabase):  # type: ignore[misc]
        """Every key of ``inner`` under ``prefix``."""

        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def __repr__(self) -> str:
            return f"Namespaced({inner!r}, {prefix!r})"

        def fetch(self, key: bytes) -> Iterable[bytes]:
            yield from inner.fetch(prefix + key)

        def save(self, key: bytes, value: bytes) -> None:
            inner.save(prefix + key, value)

        def delete(self, key: bytes, value: bytes) -> None:
            inner.delete(prefix + key, value)

        def move(self, src: bytes, dest: bytes, value: bytes) -> None:
            inner.move(prefix + src, prefix + dest, value)

    return Namespaced()


def _read_only_redis(client: Any) -> Any:
    from hypothesis.extra.redis import RedisExampleDatabase

    class ReadOnlyRedis(RedisExampleDatabase):  # type: ignore[misc]
        """Reads without Hypothesis's EXPIRE per fetch: a read-only run changes nothing on the server."""

        def fetch(self, key: bytes) -> Iterable[bytes]:
            for value in self.redis.smembers(self._prefix + key):
                yield value if isinstance(value, bytes) else value.encode()

    return ReadOnlyRedis(client)


def keeping(database: Any) -> Any:
    """``database`` that forgets nothing: for a model-based run looking again with a requirement it
    already failed muted, whose replay of the saved failure passes and would have Hypothesis drop
    it as stale."""
    if database is None:
        return None
    from hypothesis.database import ExampleDatabase

    class Keeping(ExampleDatabase):  # type: ignore[misc]
        def fetch(self, key: bytes) -> Iterable[bytes]:
            yield from database.fetch(key)

        def save(self, key: bytes, value: bytes) -> None:
            database.save(key, value)

        def delete(self, key: bytes, value: bytes) -> None:
            pass

        def move(self, src: bytes, dest: bytes, value: bytes) -> None:
            database.save(dest, value)

    return Keeping()


@contextmanager
def hypothesis_default(database: Any) -> Iterator[None]:
    """Hypothesis's default database is ``database`` while the block runs (schemathesis builds its
    tests' settings on the default profile when its own ``database`` option is unset)."""
    if database is None:
        yield
        return
    from hypothesis import settings

    previous = settings.get_current_profile_name()
    settings.register_profile(_PROFILE, settings.get_profile(previous), database=database)
    settings.load_profile(_PROFILE)
    try:
        yield
    finally:
        settings.load_profile(previous)
