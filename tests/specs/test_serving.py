"""The event loop the mock's and the proxy's commands run on: uvloop when installed, or ``--loop``."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sys

import pytest

from specs import serving


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def test_the_default_is_uvloop_exactly_when_it_is_installed() -> None:
    installed = importlib.util.find_spec("uvloop") is not None
    assert serving.default_loop() == ("uvloop" if installed else "asyncio")
    assert serving.run(loop_module()) == serving.default_loop()


def test_the_standard_loop_on_request() -> None:
    assert serving.run(loop_module(), "asyncio") == "asyncio"


def test_uvloop_on_request() -> None:
    pytest.importorskip("uvloop")
    assert serving.run(loop_module(), "uvloop") == "uvloop"


def test_uvloop_asked_for_but_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now raises ImportError
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else object())
    assert serving.default_loop() == "asyncio"
    coroutine = loop_module()
    with pytest.raises(serving.LoopUnavailable, match=r"pip install 'agent-api-conformance\[uvloop\]'"):
        serving.run(coroutine, "uvloop")
    assert coroutine.cr_frame is None  # closed, not left to warn "never awaited"


def test_the_option_takes_only_the_two_loops() -> None:
    parser = argparse.ArgumentParser()
    serving.add_loop_argument(parser)
    assert parser.parse_args([]).loop is None
    assert parser.parse_args(["--loop", "asyncio"]).loop == "asyncio"
    with pytest.raises(SystemExit):
        parser.parse_args(["--loop", "tokio"])
