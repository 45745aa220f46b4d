"""Shards of one campaign running at once against ONE target merge into the verdicts of a single
run on a clean target (issue 34, class 5): each shard's model-based phase sees the other's
resources in the lists it reads, and accepts them because they read by id (check/listing.py).

SGR Agent Core is the protocol: its campaign is cheap, its model lists every agent of every writer
(GET /agents), and the other shard deletes some of its own while this one reads. The property-based
phase is left out: it judges each answer alone, and the model-based phase is what others disturb.
"""

from __future__ import annotations

from pathlib import Path

from conformance.run.targets import embedded
from specs.documents import load
from tests.warmcli import WarmCli

from .test_merge import conformance, finish, verdicts

PROTOCOL = "sgr-agent-core"


def args(base_url: str, report_dir: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--protocol",
        PROTOCOL,
        "--base-url",
        base_url,
        "--depth",
        "smoke",
        "--timeout",
        "8",
        # two ranges of model sequences, one a shard, run at once (the depth's 5 are one range)
        "--max-examples",
        "20",
        "--phase",
        "model",
        "--phase",
        "scenario",
        "-q",
        "--report-dir",
        str(report_dir),
        *extra,
    ]


def test_two_shards_at_one_target_merge_into_a_single_run_s_verdicts(tmp_path: Path, warm_cli: WarmCli) -> None:
    base = load(PROTOCOL).info.base_path
    with embedded().serve(PROTOCOL) as shared:
        shards = [
            conformance(warm_cli, *args(shared.url + base, tmp_path / f"shard{k}", "--shard", f"{k}/2"), cwd=tmp_path)
            for k in (1, 2)
        ]
        for code, output in [finish(p) for p in shards]:
            assert code in (0, 1), output
    with embedded().serve(PROTOCOL) as clean:
        code, output = finish(conformance(warm_cli, *args(clean.url + base, tmp_path / "single"), cwd=tmp_path))
        assert code == 0, output
    merged_code, merged_output = finish(
        conformance(warm_cli, "merge", "shard1", "shard2", "-o", "merged", cwd=tmp_path)
    )
    assert merged_code == code, merged_output
    single, _ = verdicts(tmp_path / "single")
    joined, _ = verdicts(tmp_path / "merged")
    assert set(single.values()) == {"passed"}
    assert joined == single
