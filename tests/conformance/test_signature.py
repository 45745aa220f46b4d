"""Signed reports: ``keygen``, ``run --sign-key`` and ``verify --public-key``. The certificate's
digests prove integrity only (whoever edits a report can compute them again); the signature refuses
any edit of any byte of results.json or of a file it lists, and a missing or foreign signature."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from conformance.cli.commands import main
from conformance.reporting import SCRIPTS, WRITERS
from conformance.reporting.certificate import PLACEHOLDER, file_digest
from mockserver import EmbeddedServer, MockConfig

FAULT, BROKEN = "ap-task-created-201", "AP-TASK-001"


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One small real run (the requirement a fault breaks, so the report lists a reproduction
    script too), signed with a fresh key: its folder and the public key."""
    keys = tmp_path_factory.mktemp("keys")
    assert main(["keygen", "--out", str(keys / "vendor")]) == 0
    folder = tmp_path_factory.mktemp("signed")
    with EmbeddedServer(MockConfig(protocols=("agent-protocol",), faults=(FAULT,))) as server:
        code = main(
            [
                *("run", "--protocol", "agent-protocol", "--base-url", server.url, "--only", BROKEN),
                *("--report-dir", str(folder), "--sign-key", str(keys / "vendor.key"), "-q"),
            ]
        )
    assert code == 1  # the fault fails its requirement: the report has findings to list
    return folder, keys / "vendor.pub"


def _copy(folder: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    return copy


def _listed(folder: Path) -> list[str]:
    return sorted(json.loads((folder / "results.json").read_text(encoding="utf-8"))["certificate"]["files"])


def test_a_correctly_signed_report_verifies(signed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder, public = signed
    assert main(["verify", str(folder), "--public-key", str(public)]) == 0
    out = capsys.readouterr().out
    assert "verify: the report is intact and signed by --public-key" in out


def test_without_a_key_verify_says_it_checked_integrity_only_and_names_the_signer(
    signed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    folder, _ = signed
    fingerprint = json.loads((folder / "signature.json").read_text(encoding="utf-8"))["fingerprint"]
    assert main(["verify", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "integrity only" in out
    assert f"signed by the key {fingerprint} (not checked" in out


def test_the_report_lists_every_writer_and_a_reproduction_script(signed: tuple[Path, Path]) -> None:
    """The files the byte-edit test below covers are every file the certificate lists."""
    folder, _ = signed
    listed = _listed(folder)
    scripts = [name for name in listed if name.startswith(f"{SCRIPTS}/")]
    assert scripts and set(listed) - set(scripts) == set(WRITERS) - {"results.json"}


def test_flipping_failed_to_passed_and_recomputing_the_digest_is_refused(
    signed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The edit a buyer can make in five lines: it keeps the certificate intact, not the signature."""
    folder, public = signed
    copy = _copy(folder, tmp_path)
    text = (copy / "results.json").read_text(encoding="utf-8")
    recorded = json.loads(text)["certificate"]["digest"]
    assert '"status": "failed"' in text
    text = text.replace('"status": "failed"', '"status": "passed"').replace(recorded, PLACEHOLDER)
    (copy / "results.json").write_text(text.replace(PLACEHOLDER, file_digest(text.encode())), encoding="utf-8")
    assert main(["verify", str(copy)]) == 0  # integrity alone cannot tell
    capsys.readouterr()
    assert main(["verify", str(copy), "--public-key", str(public)]) == 1
    out = capsys.readouterr().out
    assert "NOT SIGNED: results.json (or a file it lists, its digest rewritten) was edited after it was signed" in out


def test_a_signature_made_to_name_the_edited_digest_does_not_match_it(
    signed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, public = signed
    copy = _copy(folder, tmp_path)
    text = (copy / "results.json").read_text(encoding="utf-8")
    recorded = json.loads(text)["certificate"]["digest"]
    text = text.replace('"status": "failed"', '"status": "passed"').replace(recorded, PLACEHOLDER)
    digest = file_digest(text.encode())
    (copy / "results.json").write_text(text.replace(PLACEHOLDER, digest), encoding="utf-8")
    record = json.loads((copy / "signature.json").read_text(encoding="utf-8"))
    (copy / "signature.json").write_text(json.dumps({**record, "digest": digest}), encoding="utf-8")
    assert main(["verify", str(copy), "--public-key", str(public)]) == 1
    assert "NOT SIGNED: the signature does not match the digest" in capsys.readouterr().out


@pytest.mark.parametrize("which", ["results.json", *sorted(set(WRITERS) - {"results.json"}), f"a {SCRIPTS}/ script"])
def test_any_single_byte_edited_is_refused_naming_the_file(
    signed: tuple[Path, Path], tmp_path: Path, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, public = signed
    copy = _copy(folder, tmp_path)
    name = which if not which.startswith("a ") else next(n for n in _listed(folder) if n.startswith(f"{SCRIPTS}/"))
    data = bytearray((copy / name).read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit of one byte
    (copy / name).write_bytes(bytes(data))
    assert main(["verify", str(copy), "--public-key", str(public)]) == 1
    assert f"EDITED: {name}" in capsys.readouterr().out


def test_a_missing_signature_is_refused(
    signed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, public = signed
    copy = _copy(folder, tmp_path)
    (copy / "signature.json").unlink()
    assert main(["verify", str(copy), "--public-key", str(public)]) == 1
    assert "NOT SIGNED: the report carries no signature (signature.json is missing)" in capsys.readouterr().out


def test_another_key_is_refused(signed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = signed
    assert main(["keygen", "--out", str(tmp_path / "other")]) == 0
    capsys.readouterr()
    assert main(["verify", str(folder), "--public-key", str(tmp_path / "other.pub")]) == 1
    assert "NOT SIGNED: the report is signed by another key" in capsys.readouterr().out


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 0
    assert stat.S_IMODE((tmp_path / "k.key").stat().st_mode) == 0o600
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    capsys.readouterr()
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 2
    assert "exists; a key is never overwritten" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    (tmp_path / "k.key").unlink()  # one of the pair left: still refused, the public key kept
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 2
    assert not (tmp_path / "k.key").exists()


def test_a_key_that_cannot_sign_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 0
    report = tmp_path / "report"
    code = main(
        ["run", "--protocol", "agent-protocol", "--sign-key", str(tmp_path / "k.pub"), "--report-dir", str(report)]
    )
    assert code == 2
    assert "--sign-key:" in capsys.readouterr().err
    assert not report.exists()


def test_the_sign_key_comes_from_the_command_line_the_environment_or_the_file(tmp_path: Path) -> None:
    """One declaration (config.KEYS): ``--sign-key``, ``CONFORMANCE_SIGN_KEY``, ``sign-key`` in
    conformance.toml (relative to the file), with the usual precedence."""
    from conformance.settings import config

    for name in ("file", "env", "cli"):
        assert main(["keygen", "--out", str(tmp_path / name)]) == 0
    (tmp_path / "conformance.toml").write_text('protocol = "agent-protocol"\nsign-key = "file.key"\n')

    def key(cli: Path | None = None, environ: dict[str, str] | None = None) -> Path | None:
        given = config.given({"sign_key": cli})
        invocation = config.Invocation(given, config.from_env(environ or {}), config.load(None, tmp_path, {}))
        return invocation.runs()[0].sign_key

    assert key() == tmp_path / "file.key"
    assert key(environ={"CONFORMANCE_SIGN_KEY": str(tmp_path / "env.key")}) == tmp_path / "env.key"
    assert key(tmp_path / "cli.key", {"CONFORMANCE_SIGN_KEY": str(tmp_path / "env.key")}) == tmp_path / "cli.key"
