"""pytest integration: ``pytest --conformance-protocol ID|all [--conformance-base-url URL] ...``
adds one test item per requirement, marked with its level (``-m must``), and the
``conformance_run`` fixture gives teams a whole run's results inside their own tests.

This module is the session's half, imported and registered by ``pytest_entry.py`` (the options,
the markers, the fixture: what pytest loads in every session) only when a session asks for a run.

Settings resolve as for the CLI (``config.py``): ``--conformance-*`` options, then
``CONFORMANCE_*`` variables, then ``--conformance-config FILE`` / ``conformance.toml`` /
``[tool.conformance]`` in the rootdir's pyproject.toml, then defaults.

Each process (the only one, or each pytest-xdist worker) starts the target once per protocol
(the embedded mock when no base URL is given) and shares the checks' setup memo across the
requirements it is given; a requirement is decided when its item runs. The schema requirements of
a protocol are decided together by one property-based run, so under xdist they form one group
(scheduled to one worker), and so do its model-phase requirements. Every item's verdict travels
back in its report, and the controlling process merges them into one report per protocol (``--conformance-report-dir``).
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from .run.options import RunOptions
from .verdicts.results import RequirementResult, RunResult, Status

_PLANS = pytest.StashKey[dict[str, RunOptions]]()
_WORKER = pytest.StashKey["_Worker"]()
_MERGER = pytest.StashKey["_Merger"]()
_PROPERTY = "conformance_result"


def _cli(config: pytest.Config) -> dict[str, Any]:
    def opt(name: str) -> Any:
        return config.getoption(f"--conformance-{name}")

    only, skip = opt("only"), opt("skip")
    return {
        "protocol": opt("protocol"),
        "base-url": opt("base-url"),
        "token": opt("token"),
        "second-token": opt("second-token"),
        "seed": opt("seed"),
        "max-examples": opt("max-examples"),
        "timeout": opt("timeout"),
        "budget": opt("budget"),
        "level": opt("level"),
        "only": tuple(only) if only else None,
        "skip": tuple(skip) if skip else None,
        "expected-failures": opt("expected-failures"),
        "report-dir": opt("report-dir"),
    }


def pytest_configure(config: pytest.Config) -> None:
    """The CLI's usage validation, as a pytest usage error (exit 4, one line) before collection."""
    plans(config)
    if not hasattr(config, "workerinput"):  # workers' verdicts travel back in their reports
        config.stash[_MERGER] = _Merger()
        config.pluginmanager.register(config.stash[_MERGER], "conformance-merger")


def plans(config: pytest.Config) -> dict[str, RunOptions]:
    """The validated options of each protocol's run (cached), or pytest.UsageError saying what to fix."""
    if _PLANS in config.stash:
        return config.stash[_PLANS]
    from specs.documents import PROTOCOLS

    from . import config as settings
    from .usage import UsageError

    explicit = config.getoption("--conformance-config")
    try:
        file = settings.load(Path(explicit) if explicit else None, config.rootpath, os.environ)
        cli, env = _cli(config), settings.from_env(os.environ)
        protocol = settings.protocol_of(cli, env, file)
        protocols = sorted(PROTOCOLS) if protocol == "all" else [protocol]
        resolved = {pid: settings.resolve(pid, cli, env, file) for pid in protocols}
        chosen = {p.protocol: p for p in settings.run_plans(resolved)}
    except UsageError as exc:
        raise pytest.UsageError(f"conformance: {exc}") from None
    config.stash[_PLANS] = chosen
    return chosen


def _distributed(config: pytest.Config) -> bool:
    """Whether items are spread over xdist workers. Collection happens in the workers, and xdist
    sets each worker's own ``--dist`` to "no": a worker is recognised by its ``workerinput``. (Asked
    of the option alone, the workers named no groups, so a protocol's schema and model requirements
    were spread over both workers and each worker ran the whole phase: ``-n 2`` was slower than one
    process.)"""
    if hasattr(config, "workerinput"):
        return True
    return config.pluginmanager.hasplugin("xdist") and config.getoption("dist", "no") != "no"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's plain load scheduling, except that an ``@group`` suffix keeps a protocol's schema
    requirements on one worker (one property-based run decides them all)."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadGroupScheduling

    return LoadGroupScheduling(config, log)


class _Worker:
    """This process's share of the run: one target per protocol, started once, one setup memo
    per protocol, one run of the schema (or model) phase per protocol when one of its requirements
    is asked for."""

    def __init__(self, plans: dict[str, RunOptions]) -> None:
        self.plans = plans
        self.stack = ExitStack()
        self.started: dict[str, RunOptions] = {}
        self.memo: dict[str, dict[str, object]] = {}
        self.together: dict[tuple[str, str], RunResult] = {}

    def _target(self, pid: str) -> RunOptions:
        if pid not in self.started:
            from .runner import target

            self.started[pid] = self.stack.enter_context(target(self.plans[pid]))
            self.memo[pid] = {}
        return self.started[pid]

    def decide(self, pid: str, rid: str, phase: str) -> RunResult:
        from .run.plan import plan
        from .runner import run

        opts = self._target(pid)
        if phase != "scenario":  # the schema and model phases decide their requirements together
            if (pid, phase) not in self.together:
                ids = tuple(r.id for r in plan(self.plans[pid]).requirements(phase))
                self.together[pid, phase] = run(replace(opts, only=ids, phases=(phase,)), memo=self.memo[pid])
            return self.together[pid, phase]
        return run(replace(opts, only=(rid,), phases=("scenario",)), memo=self.memo[pid])

    def close(self) -> None:
        self.stack.close()


def _worker(config: pytest.Config) -> _Worker:
    if _WORKER not in config.stash:
        config.stash[_WORKER] = _Worker(plans(config))
    return config.stash[_WORKER]


def pytest_unconfigure(config: pytest.Config) -> None:
    if _WORKER in config.stash:
        config.stash[_WORKER].close()


class RequirementItem(pytest.Item):
    def __init__(
        self, *, protocol: str, requirement_id: str, level: str, statement: str, phase: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.protocol = protocol
        self.requirement_id = requirement_id
        self.level = level
        self.statement = statement
        self.phase = phase

    def runtest(self) -> None:
        run = _worker(self.config).decide(self.protocol, self.requirement_id, self.phase)
        if run.fatal:
            self.user_properties.append(
                (_PROPERTY, json.dumps({"protocol": self.protocol, "fatal": run.fatal, "target": run.target}))
            )
            raise RequirementFailed(f"target unusable: {run.fatal}")
        for res in run.results:
            if res.requirement.id == self.requirement_id:
                self.user_properties.append(
                    (
                        _PROPERTY,
                        json.dumps(
                            {
                                "protocol": self.protocol,
                                "target": run.target,
                                "result": res.to_dict(),
                            }
                        ),
                    )
                )
                if res.status in (Status.SKIPPED, Status.BLOCKED):
                    pytest.skip(res.message)
                if res.baseline == "expected":
                    pytest.xfail(f"expected failure ({res.baseline_reason}): {res.message}")
                if res.baseline == "stale":
                    raise RequirementFailed(f"stale: listed as an expected failure but passed ({res.baseline_reason})")
                if res.status is not Status.PASSED:
                    evidence = "\n".join(f"{e.method} {e.url} -> {e.status or e.error}" for e in res.evidence)
                    raise RequirementFailed(f"{res.status.value}: {res.message}\n{evidence}".rstrip())
                return
        raise RequirementFailed("the run produced no result for this requirement")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RequirementFailed):
            return f"{self.requirement_id} [{self.level.upper()}] {self.statement}\n{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int, str]:
        return "conformance", 0, f"{self.requirement_id} {self.statement}"


class RequirementFailed(Exception):
    pass


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    from .run.plan import plan

    chosen = plans(config)
    several, grouped = len(chosen) > 1, _distributed(config)
    for pid, options in chosen.items():
        for check in plan(options).checks:
            r = check.requirement
            name = f"{pid}::{r.id}" if several else r.id
            if grouped and r.phase != "scenario":
                name += f"@{pid}-{r.phase}"
            item = RequirementItem.from_parent(
                session,
                name=name,
                protocol=pid,
                requirement_id=r.id,
                level=r.level.value,
                statement=r.statement,
                phase=r.phase,
            )
            item.add_marker(r.level.value)
            items.append(item)


class _Merger:
    """Collects every item's verdict (also those xdist workers send back) and writes the merged
    reports at the end of the session."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.records += [json.loads(str(v)) for name, v in report.user_properties if name == _PROPERTY]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        directory = session.config.getoption("--conformance-report-dir")
        if not directory:
            return
        from .reporting import write_reports

        runs = merge(self.records, plans(session.config))
        for pid, run in runs.items():
            write_reports(run, Path(directory) / pid if len(runs) > 1 else Path(directory))


def merge(records: list[dict[str, Any]], plans: dict[str, RunOptions]) -> dict[str, RunResult]:
    """One RunResult per protocol from the items' records, in registry order."""
    from . import __version__
    from .run.suites import suite

    runs: dict[str, RunResult] = {}
    for pid, options in plans.items():
        mine = [r for r in records if r["protocol"] == pid]
        run = RunResult(pid, mine[0]["target"] if mine else "", __version__, options.seed, options.level, "")
        registry = {c.requirement.id: c.requirement for c in suite(pid, options.profile).registry}
        for record in mine:
            if "fatal" in record:
                run.fatal = record["fatal"]
                continue
            data = record["result"]
            run.results.append(RequirementResult.from_dict(data, pid, registry[data["id"]]))
        order = list(registry)
        run.results.sort(key=lambda r: order.index(r.requirement.id))
        run.duration_s = sum(r.duration_s for r in run.results)
        runs[pid] = run
    return runs
