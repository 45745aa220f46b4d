"""The certificate a report carries, so anyone can re-check it: what ran (suite version, seed, hash
seed, options), against which documents (their digests), the digest of every other report file,
and the digest of results.json itself.

``results.json``'s own digest is the sha256 of its exact bytes with the digest's place holding
``PLACEHOLDER``: any byte changed anywhere else, or the digest itself, shows (``intact``). One
module for every writer of results.json (a run, the proxy, a merged campaign): build the block
with ``certificate``, write the JSON with it, then ``seal`` the text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..verdicts.results import RunResult

PLACEHOLDER = "sha256:" + "0" * 64
_DIGEST = re.compile(r'"digest": "(sha256:[0-9a-f]{64})"')
OPTIONS = ("profile", "level", "max_examples", "timeout", "budget_s", "phases", "only", "skip", "requirement_set")
"""The recorded options ``conformance verify --base-url`` runs the suite with again."""


def file_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def certificate(run: RunResult, files: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The block results.json carries under ``certificate`` (its ``digest`` still the placeholder)."""
    meta = run.meta
    found = meta.get("spec")
    spec: dict[str, Any] = found if isinstance(found, dict) else {}
    options: dict[str, Any] = {"protocol": run.protocol, "level": run.level.value}
    options.update({k: meta[k] for k in OPTIONS if k in meta and k != "level"})
    if spec:
        options["profile"] = spec.get("profile")
    documents = {str(spec["document"]): f"sha256:{spec['sha256']}"} if spec.get("sha256") else {}
    return {
        "suite_version": run.suite_version,
        "requirement_set": run.requirement_set or None,
        "seed": run.seed,
        "hash_seed": meta.get("hash_seed"),
        "options": options,
        "documents": documents,
        "files": dict(sorted((files or {}).items())),
        "digest": PLACEHOLDER,
    }


def seal(text: str) -> str:
    """``text`` (results.json holding the placeholder once) with its own digest in its place."""
    if text.count(PLACEHOLDER) != 1:
        raise ValueError("results.json must hold the digest placeholder exactly once")
    return text.replace(PLACEHOLDER, file_digest(text.encode("utf-8")))


def intact(data: bytes) -> tuple[bool, str]:
    """Whether results.json's bytes are the ones its digest was made of, and the digest it names."""
    text = data.decode("utf-8", "replace")
    found = _DIGEST.findall(text)
    if len(found) != 1:
        return False, ""
    recorded = found[0]
    return file_digest(
        text.replace(f'"digest": "{recorded}"', f'"digest": "{PLACEHOLDER}"').encode()
    ) == recorded, recorded


def digests_of(directory: Path, names: list[str]) -> dict[str, str]:
    """sha256 of each named file of a report folder (a path relative to it)."""
    return {name: file_digest((directory / name).read_bytes()) for name in names}
