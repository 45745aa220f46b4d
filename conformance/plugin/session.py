"""pytest integration: ``pytest --conformance-protocol ID|all [--conformance-base-url URL] ...``
adds one test item per requirement, marked with its level (``-m must``), and the
``conformance_run`` fixture gives teams a whole run's results inside their own tests.

This module is the session's half, imported and registered by ``entry.py`` (the options,
the markers, the fixture: what pytest loads in every session) only when a session asks for a run.

Settings resolve as for the CLI (``config.py``): ``--conformance-*`` options, then
``CONFORMANCE_*`` variables, then ``--conformance-config FILE`` / ``conformance.toml`` /
``[tool.conformance]`` in the rootdir's pyproject.toml, then defaults.

A session runs each protocol's selected requirements once, as ``conformance run`` does, and each
item reports its verdict from that run (``_Shards``, one shard of one). Under pytest-xdist with
local workers (``-n N``) the work is spread as ``--shard`` spreads it: worker k runs shard k/N of
each protocol and every item reports the shards' merge. With remote workers (``--tx ssh=...``, no
shared folder) each worker starts the target once per protocol and decides the requirements it is
given (``_Worker``); a protocol's schema requirements, decided together by one property-based
run, form one group (scheduled to one worker), and so do its model-phase ones.
Every item's verdict travels back in its report, and the controlling process merges them into one
report per protocol (``--conformance-report-dir``).

``pytest --conformance-protocol ID`` with no path collects the conformance items alone; name paths
(``pytest tests --conformance-protocol ID``), or name the protocol in a config file or
``CONFORMANCE_PROTOCOL``, to run them beside a project's own tests.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.plugin.rewrite import unrewritten
from conformance.run.options import RunOptions
from conformance.run.shards import Shard
from conformance.verdicts.results import RequirementResult, RunResult, Status

_PLANS = pytest.StashKey[dict[str, RunOptions]]()
_WORKER = pytest.StashKey["_Worker"]()
_MERGER = pytest.StashKey["_Merger"]()
_PROPERTY = "conformance_result"
_SHARES = pytest.StashKey[Path]()
_SHARES_INPUT = "conformance_shares"
_SHARDS = pytest.StashKey["_Shards"]()


def _given(config: pytest.Config) -> dict[str, Any]:
    """The ``--conformance-*`` options given, by ``RunOptions`` field, as the CLI's are."""
    from conformance.settings.config import KEYS, given

    return given({k.field: config.getoption(f"--conformance-{k.name}", None) for k in KEYS.values()})


def pytest_configure(config: pytest.Config) -> None:
    """The CLI's usage validation, as a pytest usage error (exit 4, one line) before collection."""
    with unrewritten():
        plans(config)
    if config.getoption("--conformance-protocol", None) and config.args_source is not pytest.Config.ArgsSource.ARGS:
        # a command line naming a protocol and no path asks for the conformance items alone: not the
        # testpaths (or the folder) of the project pytest was started in, such as this kit's clone
        config.args = []
    if not hasattr(config, "workerinput"):  # workers' verdicts travel back in their reports
        config.stash[_MERGER] = _Merger()
        config.pluginmanager.register(config.stash[_MERGER], "conformance-merger")
        if _local_workers(config):  # the workers' shards meet in a folder of this machine
            config.stash[_SHARES] = Path(tempfile.mkdtemp(prefix="conformance-shards-"))


def _local_workers(config: pytest.Config) -> bool:
    """pytest-xdist's ``-n N`` workers on this machine (``--tx`` may name remote ones, which share
    no folder with the others: they keep the requirement-by-requirement mode)."""
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("dist", "no") == "no":
        return False
    specs = [str(t) for t in config.getoption("tx", None) or []]  # -n N is N "popen" specs
    return bool(specs) and all(t.split("//")[0] == "popen" and "chdir=" not in t for t in specs)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Each local worker learns where the shards' reports meet (it knows its index and the count
    of workers from xdist's own ``workerid`` and ``workercount``)."""
    shares = node.config.stash.get(_SHARES, None)
    if shares is not None:
        node.workerinput[_SHARES_INPUT] = str(shares)


def plans(config: pytest.Config) -> dict[str, RunOptions]:
    """The validated options of each protocol's run (cached), or pytest.UsageError saying what to fix."""
    if _PLANS in config.stash:
        return config.stash[_PLANS]

    from conformance.settings import config as settings
    from conformance.settings.usage import UsageError

    explicit = config.getoption("--conformance-config")
    try:
        file = settings.load(Path(explicit) if explicit else None, config.rootpath, os.environ)
        invocation = settings.Invocation(_given(config), settings.from_env(os.environ), file)
        chosen = {options.protocol: options for options in invocation.runs()}
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
    """xdist's plain load scheduling, except that, with workers that share no folder, an ``@group``
    suffix keeps a protocol's schema requirements on one worker (one property-based run decides
    them all). Local workers each run a shard of all the work instead (``_Shards``): any worker
    may then report any item."""
    if config.getoption("dist") != "load" or _SHARES in config.stash:
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
            from conformance.engine.runner import target

            self.started[pid] = self.stack.enter_context(target(self.plans[pid]))
            self.memo[pid] = {}
        return self.started[pid]

    def decide(self, pid: str, rid: str, phase: str) -> RunResult:
        from conformance.engine.runner import run
        from conformance.run.plan import plan

        opts = self._target(pid)
        if phase != "scenario":  # the schema and model phases decide their requirements together
            if (pid, phase) not in self.together:
                ids = tuple(r.id for r in plan(self.plans[pid]).requirements(phase))
                self.together[pid, phase] = run(replace(opts, only=ids, phases=(phase,)), memo=self.memo[pid])
            return self.together[pid, phase]
        return run(replace(opts, only=(rid,), phases=("scenario",)), memo=self.memo[pid])

    def close(self) -> None:
        self.stack.close()


class _Shards:
    """Under local pytest-xdist workers, the plugin spreads work as ``--shard`` does: worker k of N
    runs shard k/N of every protocol's selected work (its units, run/shards.py) once, against its
    own target, and writes the shard's report where all the workers' meet; an item's verdict is
    that of the N shards merged (merge.py), as ``conformance merge`` would decide it. So ``-n N``
    splits the property-based and model-based phases too, which one worker used to run whole.
    A worker with no item left runs its shard at the end of its session, so none waits forever.
    Without workers (no xdist) the session is one shard of one: the selected requirements run
    once, as ``conformance run`` runs them, and each item reports its verdict from that run."""

    def __init__(self, plans: dict[str, RunOptions], index: int, count: int, folder: Path | None) -> None:
        self.plans, self.shard, self.folder = plans, Shard(index, count), folder
        self.selected: dict[str, tuple[str, ...]] = {}
        self.done = False
        self.merged: dict[str, RunResult] = {}

    def select(self, items: list[pytest.Item]) -> None:
        """The requirements the session kept (after -m/-k): every worker collects the same."""
        for item in items:
            if isinstance(item, RequirementItem):
                self.selected.setdefault(item.protocol, ())
                self.selected[item.protocol] += (item.requirement_id,)

    def _path(self, pid: str, index: int) -> Path:
        assert self.folder is not None
        return self.folder / pid / f"shard-{index}" / "results.json"

    def run_mine(self) -> None:
        """This worker's shard of every protocol with a selected requirement (once)."""
        if self.done:
            return
        self.done = True
        from conformance.engine.runner import run
        from conformance.reporting.json import render_json
        from conformance.run.plan import plan

        for pid, options in self.plans.items():
            wanted = self.selected.get(pid)
            if not wanted:
                continue
            every = {c.requirement.id for c in plan(options).checks}
            only = options.only if set(wanted) == every else tuple(sorted(wanted))
            result = run(replace(options, shard=self.shard, only=only))
            if self.folder is None:  # the whole run, in this process
                self.merged[pid] = result
                continue
            path = self._path(pid, self.shard.index)
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".partial")
            partial.write_text(render_json(result), encoding="utf-8")
            partial.replace(path)  # whole or absent: the others never read half a report

    def decide(self, pid: str) -> RunResult:
        """The protocol's run, merged from every worker's shard (waiting for the others'), cached."""
        if pid in self.merged:
            return self.merged[pid]
        self.run_mine()
        if self.folder is None:
            return self.merged[pid]
        from conformance.evidence.merge import ShardReport, check_campaign, merge

        paths = [self._path(pid, k) for k in range(1, self.shard.count + 1)]
        deadline = time.monotonic() + self.plans[pid].budget_s + 300
        while not all(p.is_file() for p in paths):
            if time.monotonic() > deadline:
                missing = [f"{k}/{self.shard.count}" for k, p in enumerate(paths, 1) if not p.is_file()]
                raise RequirementFailed(f"no report of shard(s) {', '.join(missing)} in time: did a worker die?")
            time.sleep(0.2)
        reports = [ShardReport(p, json.loads(p.read_text(encoding="utf-8"))) for p in paths]
        check_campaign(reports)
        self.merged[pid] = merge(reports)
        return self.merged[pid]


def _worker(config: pytest.Config) -> _Worker:
    if _WORKER not in config.stash:
        config.stash[_WORKER] = _Worker(plans(config))
    return config.stash[_WORKER]


def _shards(config: pytest.Config) -> _Shards | None:
    """This process's share (``_Shards``): a local worker's shard, or a plain session's whole run;
    None on a remote worker (requirement by requirement, ``_Worker``) and on xdist's controller."""
    if _SHARDS in config.stash:
        return config.stash[_SHARDS]
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and _SHARES_INPUT in workerinput:
        index = int(str(workerinput["workerid"]).removeprefix("gw")) + 1
        count = int(workerinput["workercount"])
        config.stash[_SHARDS] = _Shards(plans(config), index, count, Path(workerinput[_SHARES_INPUT]))
    elif workerinput is None and not _distributed(config):
        config.stash[_SHARDS] = _Shards(plans(config), 1, 1, None)
    else:
        return None
    return config.stash[_SHARDS]


def pytest_collection_finish(session: pytest.Session) -> None:
    shards = _shards(session.config)
    if shards is not None:
        shards.select(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    shards = _shards(session.config)
    if shards is not None and shards.folder is not None and not session.config.option.collectonly:
        shards.run_mine()  # a worker that got no item still runs its share: the others wait for it


def pytest_unconfigure(config: pytest.Config) -> None:
    if _WORKER in config.stash:
        config.stash[_WORKER].close()
    shares = config.stash.get(_SHARES, None)
    if shares is not None:
        shutil.rmtree(shares, ignore_errors=True)


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
        shards = _shards(self.config)
        with unrewritten():  # the run imports schemathesis and hypothesis: no test module among them
            if shards is not None:
                run = shards.decide(self.protocol)
            else:
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
                                # how the work behind it was done: the cases, and the shards merged
                                "stats": run.stats,
                                "merged_from": run.meta.get("merged_from", []),
                            }
                        ),
                    )
                )
                if res.status in (Status.NOT_VERIFIED, Status.BLOCKED, Status.NOT_SCORED):
                    pytest.skip(res.message)
                if res.status is Status.ADVICE:  # practice, not the document: never a failure
                    pytest.skip(f"advice (practice, not the document) on {self.requirement_id}: {res.message}")
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
    with unrewritten():
        from conformance.run.plan import plan

    chosen = plans(config)
    several, grouped = len(chosen) > 1, _distributed(config) and _shards(config) is None
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
        from conformance.reporting import write_reports

        chosen = plans(session.config)
        runs = merge(self.records, chosen)
        for pid, run in runs.items():
            write_reports(run, Path(directory) / pid if len(runs) > 1 else Path(directory), chosen[pid].sign_key)


def merge(records: list[dict[str, Any]], plans: dict[str, RunOptions]) -> dict[str, RunResult]:
    """One RunResult per protocol from the items' records, in registry order."""
    from conformance import __version__
    from conformance.run.plan import frozen_set
    from conformance.run.suites import suite
    from conformance.verdicts.sets import framed

    runs: dict[str, RunResult] = {}
    for pid, options in plans.items():
        mine = [r for r in records if r["protocol"] == pid]
        run = RunResult(pid, mine[0]["target"] if mine else "", __version__, options.seed, options.level, "")
        # the requirements at the levels the scored set froze (--conformance-requirements), as the runs judged them
        registry = {
            c.requirement.id: c.requirement for c in framed(suite(pid, options.profile).registry, frozen_set(options))
        }
        run.meta["requirement_set"] = options.requirement_set or None
        for record in mine:
            if "fatal" in record:
                run.fatal = record["fatal"]
                continue
            data = record["result"]
            run.results.append(RequirementResult.from_dict(data, pid, registry[data["id"]]))
            run.stats.update(record.get("stats", {}))
            if record.get("merged_from"):
                run.meta["merged_from"] = record["merged_from"]
        order = list(registry)
        run.results.sort(key=lambda r: order.index(r.requirement.id))
        run.duration_s = sum(r.duration_s for r in run.results)
        runs[pid] = run
    return runs
