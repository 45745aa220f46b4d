"""Signed reports: an Ed25519 signature of results.json's digest, in ``signature.json`` beside it.

The digest (``certificate.py``) is the sha256 of results.json's bytes, which hold the digest of
every other file of the report, so the signature covers them all: an edit of any byte of any of
them changes a digest nobody can sign again without the private key. The signed message is the
digest as results.json names it, ASCII (``sha256:<64 hex>``). A key's fingerprint is the sha256
of its 32 raw public bytes.

What a signature proves is who published the bytes (the holder of the private key), not that the
run behind them was honest: ``verify --base-url`` runs the suite again for that.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .certificate import intact

SIGNATURE = "signature.json"
ALGORITHM = "Ed25519"


class SignatureError(Exception):
    """A key or a signature file that cannot be used; the message says which and why."""


def fingerprint(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def keygen(prefix: Path) -> tuple[Path, Path]:
    """A new key pair as PEM: ``PREFIX.key`` (private, mode 0600) and ``PREFIX.pub``. Neither file
    may exist: a key is never overwritten (a lost private key cannot sign again)."""
    private, public = prefix.with_name(prefix.name + ".key"), prefix.with_name(prefix.name + ".pub")
    for path in (private, public):
        if path.exists():
            raise SignatureError(f"{path} exists; a key is never overwritten (choose another --out)")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    _create(private, pem, 0o600)
    try:
        _create(
            public,
            key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
            0o644,
        )
    except BaseException:
        private.unlink()
        raise
    return private, public


def _create(path: Path, data: bytes, mode: int) -> None:
    """Written only if it does not exist (O_EXCL: no race with another writer), with ``mode``."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        raise SignatureError(f"{path} exists; a key is never overwritten (choose another --out)") from None
    except OSError as exc:
        raise SignatureError(f"cannot write {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb") as out:
        os.fchmod(out.fileno(), mode)  # the umask may have narrowed it; never widened beyond mode
        out.write(data)


def private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise SignatureError(f"cannot read the signing key {path}: {exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:
        raise SignatureError(f"{path} is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SignatureError(f"{path} is not an Ed25519 key (make one with: keygen --out PREFIX)")
    return key


def public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as exc:
        raise SignatureError(f"cannot read the public key {path}: {exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:
        raise SignatureError(f"{path} is not a PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError(f"{path} is not an Ed25519 public key")
    return key


def sign(directory: Path, key: Ed25519PrivateKey) -> Path:
    """``signature.json`` for the report in ``directory``: its results.json must be sealed and intact."""
    ok, digest = intact((directory / "results.json").read_bytes())
    if not ok:
        raise SignatureError(f"{directory / 'results.json'} is not intact: it cannot be signed")
    record = {
        "algorithm": ALGORITHM,
        "signed": "results.json",
        "digest": digest,
        "fingerprint": fingerprint(key.public_key()),
        "signature": base64.b64encode(key.sign(digest.encode("ascii"))).decode("ascii"),
    }
    path = directory / SIGNATURE
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Signed:
    """What ``signature.json`` claims; ``read`` checks its shape, ``check`` its truth."""

    digest: str
    fingerprint: str
    signature: bytes


def read(directory: Path) -> Signed | None:
    """The report's signature, None when it carries none, SignatureError when it is unreadable."""
    path = directory / SIGNATURE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("algorithm") != ALGORITHM:
            raise ValueError(f"the algorithm is not {ALGORITHM}")
        return Signed(str(data["digest"]), str(data["fingerprint"]), base64.b64decode(data["signature"], validate=True))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SignatureError(f"{SIGNATURE} is unreadable ({exc})") from None


def check(signed: Signed, digest: str, key: Ed25519PublicKey) -> str | None:
    """Why the signature does not vouch for results.json's ``digest`` under ``key``, or None when it does."""
    expected = fingerprint(key)
    if signed.fingerprint != expected:
        return f"the report is signed by another key ({signed.fingerprint}), not by --public-key ({expected})"
    if signed.digest != digest:
        return (
            f"results.json (or a file it lists, its digest rewritten) was edited after it was signed: "
            f"its digest is {digest}, the signed one {signed.digest}"
        )
    try:
        key.verify(signed.signature, signed.digest.encode("ascii"))
    except (InvalidSignature, UnicodeEncodeError):
        return "the signature does not match the digest"
    return None
