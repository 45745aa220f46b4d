"""A deep campaign cut into 4 shards, run by 4 processes against one mock and merged, decides what
one process decides: the same verdicts and the same distinct findings, on the clean mock and with a
fault of each class of the catalogue. Shards of different campaigns are refused.

NeuroSan is the protocol: its deep campaign is the cheapest (three operations). Shards of a
protocol whose lists hold every writer's resources, at one target: test_shared_target_shards.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.commands import main
from conformance.run.targets import embedded
from specs.documents import load
from tests.warmcli import Running, WarmCli

PROTOCOL = "neuro-san"
SHARDS = 4

CLASSES = {
    "an answer edited (mutate), caught by generated cases and scenarios": "ns-function-parameters-string",
    "request validation skipped": "ns-accepts-invalid-input",
    "a behaviour switch only generated cases meet": "ns-unknown-agent-crashes",
    "a behaviour switch only the model-based phase meets": "ns-history-newest-first",
}
"""One fault of each kind the catalogue has for NeuroSan: an answer edit, skipped validation, a
behaviour switch met by each phase (it has no auth faults; a hang costs minutes of stalls in a
deep campaign and is left to the self-check)."""


def conformance(cli: WarmCli, *args: str, cwd: Path) -> Running:
    """``conformance *args`` in a process of its own (PYTHONHASHSEED pinned, as the command pins it;
    ``tests/warmcli.py``), under way: ``finish`` waits for it."""
    return cli.start(list(args), cwd)


def finish(running: Running, timeout: float = 600) -> tuple[int, str]:
    try:
        done = running.wait(timeout)
    except TimeoutError:
        running.kill()
        raise
    return done.returncode, done.stdout + done.stderr


@contextmanager
def mock(fault: str | None) -> Iterator[str]:
    with embedded().serve(PROTOCOL, faults=(fault,) if fault else ()) as server:
        yield server.url + load(PROTOCOL).info.base_path


def campaign_args(base_url: str, report_dir: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--protocol",
        PROTOCOL,
        "--base-url",
        base_url,
        "--depth",
        "deep",
        "--timeout",
        "8",
        "-q",
        "--report-dir",
        str(report_dir),
        *extra,
    ]


def verdicts(report: Path) -> tuple[dict[str, str], set[str]]:
    data: dict[str, Any] = json.loads((report / "results.json").read_text())
    statuses = {r["id"]: r["status"] for r in data["requirements"]}
    keys = {f["key"] for r in data["requirements"] for f in r["findings"]}
    return statuses, keys


@pytest.mark.slow
@pytest.mark.parametrize("fault", [None, *CLASSES.values()], ids=["clean", *CLASSES])
def test_four_shards_merged_decide_what_one_process_decides(
    fault: str | None, tmp_path: Path, warm_cli: WarmCli
) -> None:
    with mock(fault) as url:
        argvs = [campaign_args(url, tmp_path / f"shard{k}", "--shard", f"{k}/{SHARDS}") for k in range(1, SHARDS + 1)]
        shards = [conformance(warm_cli, *argv, cwd=tmp_path) for argv in argvs]
        outcomes = [finish(p) for p in shards]
        for code, output in outcomes:
            assert code in (0, 1), output
        code, output = finish(conformance(warm_cli, *campaign_args(url, tmp_path / "single"), cwd=tmp_path))
        assert code in (0, 1), output
    assert main(["keygen", "--out", str(tmp_path / "lab")]) == 0
    merged = conformance(
        warm_cli,
        *("merge", *(str(tmp_path / f"shard{k}") for k in range(1, SHARDS + 1)), "-o", "merged"),
        *("--sign-key", str(tmp_path / "lab.key")),
        cwd=tmp_path,
    )
    merged_code, merged_output = finish(merged)
    assert merged_code == code, merged_output

    single, single_keys = verdicts(tmp_path / "single")
    joined, joined_keys = verdicts(tmp_path / "merged")
    assert joined == single
    assert joined_keys == single_keys
    if fault is None:
        assert set(single.values()) == {"passed"}
        # the merged report carries a certificate of its own, which verify accepts
        code, output = finish(conformance(warm_cli, "verify", "merged", "--public-key", "lab.pub", cwd=tmp_path))
        assert code == 0, output  # and is signed by the key merge was given
    else:
        # what the fault breaks fails (a deep campaign may catch more of it than the self-check's
        # short runs declare: ns-accepts-invalid-input also fails NS-SCHEMA-006 here)
        [declared] = [f for f in embedded().faults() if f.name == fault]
        assert set(declared.breaks) <= {rid for rid, status in single.items() if status == "failed"}
    # every format is written from the merged run
    assert {p.name for p in (tmp_path / "merged").iterdir()} >= {
        "results.json",
        "junit.xml",
        "report.html",
        "summary.md",
        "badge.svg",
    }
    data = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert "shard" not in data and len(data["merged_from"]) == SHARDS
    single_cases = json.loads((tmp_path / "single" / "results.json").read_text())["stats"]["schema_cases"]
    assert data["stats"]["schema_cases"] == single_cases  # the shards did the run's cases, each once
    single_data = json.loads((tmp_path / "single" / "results.json").read_text())
    # the shards' coverage summed: every operation the single run exercised, some shard did
    assert data["coverage"]["totals"]["operations"] == single_data["coverage"]["totals"]["operations"]


def quick_shard(cli: WarmCli, tmp_path: Path, name: str, shard: str, *extra: str) -> Path:
    code, output = finish(
        conformance(
            cli,
            "run",
            "--protocol",
            PROTOCOL,
            "--phase",
            "scenario",
            "--only",
            "NS-CONN",
            "-q",
            "--shard",
            shard,
            "--report-dir",
            name,
            *extra,
            cwd=tmp_path,
        )
    )
    assert code == 0, output
    return tmp_path / name


def test_shards_of_different_seeds_or_documents_are_refused(tmp_path: Path, warm_cli: WarmCli) -> None:
    one = quick_shard(warm_cli, tmp_path, "one", "1/2")
    two = quick_shard(warm_cli, tmp_path, "two", "2/2", "--seed", "1")
    code, output = finish(conformance(warm_cli, "merge", str(one), str(two), "-o", "out", cwd=tmp_path))
    assert code == 2 and "seed differs (1 against 0)" in output, output

    same_seed = quick_shard(warm_cli, tmp_path, "three", "2/2")
    report = json.loads((same_seed / "results.json").read_text())
    report["shard"]["campaign"]["document_sha256"] = "0" * 64  # the document changed between the runs
    (same_seed / "results.json").write_text(json.dumps(report))
    code, output = finish(conformance(warm_cli, "merge", str(one), str(same_seed), "-o", "out", cwd=tmp_path))
    assert code == 2 and "document_sha256 differs" in output, output

    code, output = finish(conformance(warm_cli, "merge", str(one), "-o", "out", cwd=tmp_path))
    assert code == 2 and "shard(s) 2/2 missing" in output, output
    code, output = finish(conformance(warm_cli, "merge", str(one), str(one), "-o", "out", cwd=tmp_path))
    assert code == 2 and "given twice" in output, output
    assert not (tmp_path / "out").exists()


def test_shards_scoring_a_frozen_set_merge_into_a_report_that_names_it(tmp_path: Path, warm_cli: WarmCli) -> None:
    """The set is part of the campaign (a shard scoring another is refused), the merged report
    names it, and its coverage is the shards' summed."""
    one = quick_shard(warm_cli, tmp_path, "one", "1/2", "--requirements", "2026.12")
    two = quick_shard(warm_cli, tmp_path, "two", "2/2", "--requirements", "2026.12")
    code, output = finish(conformance(warm_cli, "merge", str(one), str(two), "-o", "out", cwd=tmp_path))
    assert code == 0, output
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["requirement_set"] == data["certificate"]["requirement_set"] == "neuro-san/2026.12"
    shares = [json.loads((d / "results.json").read_text())["coverage"] for d in (one, two)]
    sent = sum(op["requests"] for share in shares for op in share["operations"])
    assert sent and sum(op["requests"] for op in data["coverage"]["operations"]) == sent

    unfrozen = quick_shard(warm_cli, tmp_path, "three", "2/2")
    code, output = finish(conformance(warm_cli, "merge", str(one), str(unfrozen), "-o", "out2", cwd=tmp_path))
    assert code == 2 and "requirement_set differs" in output, output
