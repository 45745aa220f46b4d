"""pytest integration: ``pytest --conformance-protocol agent-protocol [--conformance-base-url URL]``
adds one test item per requirement to the session, and the ``conformance_run`` fixture gives
teams the whole run's results inside their own tests.

The run happens once, on the first item; each item then reports its requirement's verdict, so a
requirement that was not verified shows as skipped and never as passed.
"""

from __future__ import annotations

from typing import Any

import pytest

from .context import RunOptions
from .requirements import Level
from .results import RunResult, Status

_KEY = pytest.StashKey[RunResult]()
_OPTIONS = pytest.StashKey[RunOptions]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "agent API conformance suite")
    group.addoption("--conformance-protocol", help="protocol id; adds one test per requirement")
    group.addoption("--conformance-base-url", default=None, help="target URL (default: embedded reference mock)")
    group.addoption("--conformance-token", default=None)
    group.addoption("--conformance-second-token", default=None)
    group.addoption("--conformance-seed", type=int, default=0)
    group.addoption("--conformance-max-examples", type=int, default=10)
    group.addoption("--conformance-timeout", type=float, default=10.0)
    group.addoption("--conformance-level", choices=[lv.value for lv in Level], default="may")


def pytest_configure(config: pytest.Config) -> None:
    """The CLI's usage validation, as a pytest usage error (exit 4, one line) before collection."""
    if config.getoption("--conformance-protocol", None):
        _options(config)


def _options(config: pytest.Config) -> RunOptions:
    """The validated options of the run (cached), or pytest.UsageError saying what to fix."""
    if _OPTIONS in config.stash:
        return config.stash[_OPTIONS]
    from .usage import UsageError, known_protocol, plan_runs

    base_url = config.getoption("--conformance-base-url")
    try:
        protocol = known_protocol(config.getoption("--conformance-protocol"))
        [options] = plan_runs([protocol], _given(config, protocol, base_url or ""), base_url_given=base_url is not None)
    except UsageError as exc:
        raise pytest.UsageError(f"conformance: {exc}") from None
    config.stash[_OPTIONS] = options
    return options


def _given(config: pytest.Config, protocol: str, base_url: str) -> RunOptions:
    return RunOptions(
        protocol=protocol,
        base_url=base_url,
        token=config.getoption("--conformance-token"),
        second_token=config.getoption("--conformance-second-token"),
        seed=config.getoption("--conformance-seed"),
        max_examples=config.getoption("--conformance-max-examples"),
        timeout=config.getoption("--conformance-timeout"),
        level=Level(config.getoption("--conformance-level")),
    )


def _run(config: pytest.Config) -> RunResult:
    if _KEY not in config.stash:
        from .runner import run

        config.stash[_KEY] = run(_options(config))
    return config.stash[_KEY]


class RequirementItem(pytest.Item):
    def __init__(self, *, requirement_id: str, level: str, statement: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.requirement_id = requirement_id
        self.level = level
        self.statement = statement

    def runtest(self) -> None:
        run = _run(self.config)
        if run.fatal:
            raise RequirementFailed(f"target unusable: {run.fatal}")
        for res in run.results:
            if res.requirement.id == self.requirement_id:
                if res.status in (Status.SKIPPED, Status.BLOCKED):
                    pytest.skip(res.message)
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
    protocol = config.getoption("--conformance-protocol")
    if not protocol:
        return
    from .protocols import suite
    from .runner import selected

    for check in selected(suite(protocol), _options(config)):
        r = check.requirement
        items.append(
            RequirementItem.from_parent(
                session, name=f"{r.id}", requirement_id=r.id, level=r.level.value, statement=r.statement
            )
        )


@pytest.fixture(scope="session")
def conformance_run(pytestconfig: pytest.Config) -> RunResult:
    """The run's results (requires --conformance-protocol)."""
    if not pytestconfig.getoption("--conformance-protocol"):
        pytest.skip("--conformance-protocol not given")
    return _run(pytestconfig)
