"""The pytest plugin: one item per requirement, the verdict of one shared run each.

pytester restores ``sys.modules`` after each test, dropping modules first imported during it
(later imports would then build second copies of classes). Everything in-process happens at
import or in the module-scoped fixture, before pytester takes its snapshot."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.protocols import suite
from mockserver import EmbeddedServer, MockConfig

pytest_plugins = ["pytester"]

NS_REQUIREMENTS = len(suite("neuro-san").registry)


@pytest.fixture(scope="module")
def context_dropping_mock() -> Iterator[str]:
    with EmbeddedServer(MockConfig(protocols=("neuro-san",), faults=("ns-stream-no-context",))) as server:
        yield server.url


def test_one_item_per_requirement_passes_against_the_mock(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_mine(conformance_run):\n    assert conformance_run.exit_code == 0\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--conformance-protocol", "neuro-san", "--conformance-max-examples", "2"
    )
    result.assert_outcomes(passed=NS_REQUIREMENTS + 1)  # each requirement, and the team's own test


def test_a_broken_server_fails_the_items_of_the_requirements_it_breaks(
    context_dropping_mock: str, pytester: pytest.Pytester
) -> None:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--conformance-protocol", "neuro-san", "--conformance-base-url",
        context_dropping_mock, "--conformance-max-examples", "2", "-rf",
    )
    result.stdout.fnmatch_lines(["*FAILED*NS-CTX-001*", "*FAILED*NS-CTX-002*"])
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 2 and outcomes.get("passed", 0) >= 5


def test_without_the_option_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_mine():\n    pass\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
