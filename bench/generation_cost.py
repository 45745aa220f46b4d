"""What drawing the property-based phase's request bodies costs, and what of it the document's open
objects cost, side by side (benchmark 14).

For each operation of a protocol's document with a request body, schemathesis draws ``--examples``
cases in each generation mode (positive, negative), as its fuzzing stage draws them, from the
document as the suite hands it over (``Spec.schemathesis_document``) and from the same document
with its open objects closed (``additionalProperties: false`` on every ``type: object`` schema that
left it out or set it to true), the two alternated per round in this process after a warm-up
round. Recorded: CPU milliseconds per case (median of the rounds), the bodies' mean and largest
size as JSON, and the ratio open / closed.

The closed document is a baseline, not a setting the suite could use: it changes the contract (a
server must accept the members an open object admits), and its negative cases are other cases (a
closed object's extra members are one more way to break it): the positive rows compare the same
shapes. It measures what the free members of open objects cost
schemathesis's generation (``generation/jsonschema/strategy.py``: up to five free members an
object, each an arbitrary JSON value), the cost behind SGR's whole runs (docs/development.md, where
the tests' time goes): the evidence for a report upstream.

    python bench/generation_cost.py [--protocol P ...] [--examples 10] [--rounds 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine, median, write_json, write_table

from specs.documents import load

PROTOCOLS = ("agent-protocol", "neuro-san", "sgr-agent-core", "synapse-agent")
VARIANTS = ("open", "closed")


def closed(raw: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A copy of the document whose open object schemas are closed, and how many were."""
    out = json.loads(json.dumps(raw))
    count = 0

    def walk(node: Any) -> None:
        nonlocal count
        if isinstance(node, dict):
            if node.get("type") == "object" and node.get("additionalProperties", True) is True:
                node["additionalProperties"] = False
                count += 1
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out.get("components", {}).get("schemas", {}))
    for item in out.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict):
                walk(operation.get("requestBody"))
    return out, count


def with_bodies(schema: Any) -> Iterator[Any]:
    """The document's operations that take a request body."""
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.definition.raw.get("requestBody"):
            yield operation


def draw(operation: Any, mode: Any, examples: int, seed: int) -> dict[str, Any]:
    """CPU seconds of drawing ``examples`` cases of ``operation`` in ``mode``, and their bodies' sizes."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as pinned_seed

    sizes: list[int] = []

    @pinned_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    @given(operation.as_strategy(generation_mode=mode))
    def cases(case: Any) -> None:
        body = getattr(case, "body", None)
        sizes.append(len(json.dumps(body, default=str)) if body is not None else 0)

    started = time.process_time()
    try:
        cases()
    except Exception as exc:  # a mode schemathesis cannot draw for this body (no negation of it)
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    spent = time.process_time() - started
    return {
        "cpu_s": spent,
        "cases": len(sizes),
        "mean_bytes": sum(sizes) // max(len(sizes), 1),
        "max_bytes": max(sizes, default=0),
    }


def measure(protocol: str, examples: int, rounds: int, seed: int) -> dict[str, Any]:
    import schemathesis
    from schemathesis import GenerationMode

    raw = load(protocol).schemathesis_document(server="/")
    closed_raw, count = closed(raw)
    schemas = {"open": schemathesis.openapi.from_dict(raw), "closed": schemathesis.openapi.from_dict(closed_raw)}
    operations = {variant: {op.label: op for op in with_bodies(schema)} for variant, schema in schemas.items()}
    labels = list(operations["open"])
    samples: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for number in range(rounds + 1):  # round 0 warms the strategies' caches up and is not kept
        order = VARIANTS if number % 2 else VARIANTS[::-1]
        for label in labels:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                for variant in order:
                    got = draw(operations[variant][label], mode, examples, seed)
                    if number:
                        samples.setdefault((label, mode.value, variant), []).append(got)
    rows = []
    for label in labels:
        for named in ("positive", "negative"):
            row: dict[str, Any] = {"operation": label, "mode": named}
            for variant in VARIANTS:
                runs = samples[(label, named, variant)]
                if any("error" in r for r in runs):
                    row[variant] = {"error": next(r["error"] for r in runs if "error" in r)}
                    continue
                per_case = [r["cpu_s"] / max(r["cases"], 1) * 1000 for r in runs]
                row[variant] = {
                    "ms_per_case": round(median(per_case), 2),
                    "mean_bytes": runs[-1]["mean_bytes"],
                    "max_bytes": runs[-1]["max_bytes"],
                    "cases": runs[-1]["cases"],
                }
            if "ms_per_case" in row["open"] and "ms_per_case" in row["closed"] and row["closed"]["ms_per_case"]:
                row["ratio"] = round(row["open"]["ms_per_case"] / row["closed"]["ms_per_case"], 2)
            rows.append(row)
    return {"protocol": protocol, "objects_closed": count, "rows": rows}


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| protocol | operation | mode | open ms/case | closed ms/case | open / closed"
        " | open bodies mean / max | closed bodies mean / max |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        for row in result["rows"]:
            cells = []
            for variant in VARIANTS:
                got = row[variant]
                cells.append(got.get("ms_per_case", got.get("error", "?")))
            sizes = [
                f"{row[v]['mean_bytes']:,} / {row[v]['max_bytes']:,} B" if "mean_bytes" in row[v] else "-"
                for v in VARIANTS
            ]
            lines.append(
                f"| {result['protocol']} ({result['objects_closed']} closed) | `{row['operation']}` | {row['mode']} | "
                f"{cells[0]} | {cells[1]} | {row.get('ratio', '-')} | {sizes[0]} | {sizes[1]} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--protocol", action="append", choices=PROTOCOLS, help="one protocol (repeatable); all by default"
    )
    parser.add_argument("--examples", type=int, default=10, help="cases drawn per operation, mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default="generation_cost", help="results/<output>.json and .md")
    args = parser.parse_args(argv)
    results = [measure(p, args.examples, args.rounds, args.seed) for p in args.protocol or PROTOCOLS]
    facts = machine()
    text = table(results)
    print(text)
    settings = {"examples": args.examples, "rounds": args.rounds, "seed": args.seed}
    write_json(f"{args.output}.json", {"machine": facts, "settings": settings, "results": results})
    write_table(
        f"{args.output}.md", "Drawing request bodies: the document's open objects against them closed", text, facts
    )


if __name__ == "__main__":
    main()
