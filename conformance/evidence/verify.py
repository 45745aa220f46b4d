"""``conformance verify REPORT_DIR [--base-url URL]``: re-check a report's certificate.

Without ``--base-url``: results.json is the file its digest was made of (any byte edited shows),
every other report file listed in its certificate is unchanged, and each document it names has the
digest of the document this suite holds (a report made against another or an edited contract
shows). With ``--base-url``: the suite runs again as recorded (protocol, profile, seed, options;
the hash seed too, since it steers which cases are drawn) against that URL, and each verdict is
compared with the recorded one: ``31/31 verdicts reproduced``, or the ones that changed, named.

Those digests prove integrity only: whoever edits a report can compute them again. With
``--public-key`` the report's signature (``signature.json``, ``reporting/signature.py``) must be that
key's signature of results.json's digest, which no edit of results.json or of a file it lists keeps.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.check.credentials import NONE, Credentials
from conformance.reporting import signature
from conformance.reporting.certificate import file_digest, intact
from specs.documents import SpecError, load


class VerifyError(Exception):
    """The folder holds no report verify can read."""


@dataclass
class Checked:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read(directory: Path) -> tuple[bytes, dict[str, Any]]:
    file = directory / "results.json" if directory.is_dir() else directory
    try:
        data = file.read_bytes()
        report = json.loads(data)
    except (OSError, ValueError) as exc:
        raise VerifyError(f"cannot read {file}: {exc}") from None
    if not isinstance(report, dict) or not isinstance(report.get("certificate"), dict):
        raise VerifyError(f"{file} carries no certificate (a report of an older suite, or not a report)")
    return data, report


def check_files(directory: Path) -> Checked:
    """The certificate's digests against the bytes: results.json, each report file, each document."""
    folder = directory if directory.is_dir() else directory.parent
    out = Checked()
    file = directory / "results.json" if directory.is_dir() else directory
    try:
        data, report = read(directory)
    except VerifyError:
        if file.is_file() and intact(file.read_bytes())[1]:  # it held a digest: an edit broke the JSON
            out.problems.append("results.json was edited: it is no longer the JSON its digest was made of")
            return out
        raise
    cert = report["certificate"]
    ok, digest = intact(data)
    if ok:
        out.notes.append(f"results.json intact ({digest})")
    else:
        out.problems.append("results.json was edited: its bytes are not the ones its digest was made of")
    for name, recorded in sorted((cert.get("files") or {}).items()):
        path = folder / name
        if not path.is_file():
            out.problems.append(f"{name} is missing")
        elif file_digest(path.read_bytes()) != recorded:
            out.problems.append(f"{name} was edited (its digest is not the recorded one)")
    if cert.get("files"):
        out.notes.append(f"{len(cert['files'])} report files checked")
    profile = (cert.get("options") or {}).get("profile")
    for document, recorded in sorted((cert.get("documents") or {}).items()):
        try:
            now = "sha256:" + load(str(report.get("protocol")), profile).digest
        except SpecError as exc:
            out.problems.append(f"{document}: this suite cannot load it ({exc})")
            continue
        if now != recorded:
            out.problems.append(f"{document} changed: the report was made against {recorded}, this suite holds {now}")
        else:
            out.notes.append(f"{document} is the document this suite holds ({now})")
    if report.get("suite_version") != _version():
        out.notes.append(f"the report was made by suite {report.get('suite_version')}, this is {_version()}")
    return out


def check_signature(directory: Path, public_key: Path | None) -> Checked:
    """The report's signature: with ``public_key``, that key's of results.json's digest (missing,
    foreign or not matching is a problem); without, only named (a note)."""
    folder = directory if directory.is_dir() else directory.parent
    file = folder / "results.json"
    out = Checked()
    try:
        signed = signature.read(folder)
    except signature.SignatureError as exc:
        out.problems.append(str(exc))
        return out
    if public_key is None:
        if signed is not None:
            out.notes.append(f"signed by the key {signed.fingerprint} (not checked: give --public-key)")
        return out
    try:
        key = signature.public_key(public_key)
    except signature.SignatureError as exc:
        raise VerifyError(str(exc)) from None
    if signed is None:
        out.problems.append(f"the report carries no signature ({signature.SIGNATURE} is missing)")
        return out
    _, digest = intact(file.read_bytes()) if file.is_file() else (False, "")
    why = signature.check(signed, digest, key)
    if why:
        out.problems.append(why)
    else:
        out.notes.append(f"signed by --public-key ({signed.fingerprint}): its holder published these bytes")
    return out


def _version() -> str:
    from conformance import __version__

    return __version__


def rerun(directory: Path, base_url: str, credentials: Credentials = NONE) -> tuple[list[str], int]:
    """The suite again as recorded against ``base_url`` (with the tokens the report names, given
    again): the verdicts that changed, and how many were compared."""
    from conformance.engine.runner import run
    from conformance.run.options import PHASE_NAMES, RunOptions
    from conformance.verdicts.requirements import Level
    from conformance.verdicts.results import Status

    _, report = read(directory)
    cert = report["certificate"]
    options = cert.get("options") or {}
    hash_seed = cert.get("hash_seed")
    if hash_seed not in (None, "random") and os.environ.get("PYTHONHASHSEED") != str(hash_seed):
        raise VerifyError(
            f"the report was made with PYTHONHASHSEED={hash_seed}; run verify with that hash seed "
            f"(the command sets 0 unless told otherwise: PYTHONHASHSEED={hash_seed} python -m conformance verify ...)"
        )
    result = run(
        RunOptions(
            protocol=str(report["protocol"]),
            base_url=base_url,
            token=credentials.values.get("TOKEN"),
            second_token=credentials.values.get("SECOND_TOKEN"),
            seed=int(cert.get("seed") or 0),
            max_examples=int(options.get("max_examples") or 10),
            timeout=float(options.get("timeout") or 10.0),
            level=Level(options.get("level") or "may"),
            profile=options.get("profile"),
            budget_s=float(options.get("budget_s") or 600.0),
            phases=tuple(options.get("phases") or PHASE_NAMES),
            only=tuple(options.get("only") or ()),
            skip=tuple(options.get("skip") or ()),
            requirement_set=str(options.get("requirement_set") or ""),
        )
    )
    # Status() reads the words of every format version ("skipped" before 5 is "not verified")
    recorded = {r["id"]: Status(r["status"]).value for r in report.get("requirements") or []}
    now = {r.requirement.id: r.status.value for r in result.results}
    changed = [
        f"{rid}: {recorded.get(rid, 'absent')} -> {now.get(rid, 'absent')}"
        for rid in sorted(set(recorded) | set(now))
        if recorded.get(rid) != now.get(rid)
    ]
    if result.fatal:
        changed.insert(0, f"the run could not test the target: {result.fatal}")
    return changed, len(recorded)
