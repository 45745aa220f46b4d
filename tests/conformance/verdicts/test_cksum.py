"""The report's checksum of a binary answer is POSIX ``cksum``'s, byte for byte (a finding's script
compares an answer with ``cksum``)."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from conformance.verdicts.cksum import CKSUM_LIMIT, cksum


@pytest.mark.skipif(shutil.which("cksum") is None, reason="cksum is not installed")
@pytest.mark.parametrize("size", [0, 1, 2, 255, 256, 1000, 65_536, 70_001, CKSUM_LIMIT])
def test_the_checksum_is_what_the_cksum_command_prints(size: int) -> None:
    data = random.Random(size).randbytes(size)
    printed = subprocess.run(["cksum"], input=data, capture_output=True, check=True).stdout.decode().strip()
    assert cksum(data) == printed


def test_an_answer_past_the_limit_is_compared_by_its_size() -> None:
    assert cksum(bytes(CKSUM_LIMIT + 1)) == f"- {CKSUM_LIMIT + 1}"
