"""curl lines are runnable as printed: the shell hands curl exactly the bytes recorded."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from conformance.check.curl import curl_command, printable, printf_format

BODIES = (
    b'{"input": "x"}',
    "caf\u00e9 \u2713 'quoted' \"double\" $HOME `id` 100%\n".encode(),
    bytes(range(256)) + b"\x00\x00%s\\n\r\n--boundary--\r\n",
    b'--boundary\r\nContent-Disposition: form-data; name="file"\r\n\r\n\xff\x00\r\n--boundary--\r\n',
)


@pytest.mark.parametrize("body", BODIES)
def test_the_body_reaches_curl_byte_for_byte(body: bytes) -> None:
    # the printed line with curl swapped for a program that writes out what it was given
    line = curl_command("POST", "http://127.0.0.1:9/x", {}, body)
    text = printable(body)
    if text is None:
        shell = line.split(" | curl ", 1)[0]
    else:
        shell = f"printf %s {shlex.quote(text)}"
        assert f"--data-binary {shlex.quote(text)} " in line
    for sh in ("sh", "bash"):
        out = subprocess.run([sh, "-c", shell], capture_output=True, check=True)
        assert out.stdout == body, sh


def test_the_curl_line_names_method_headers_and_url() -> None:
    line = curl_command(
        "post", "http://127.0.0.1:9/a?b=[1]", {"Content-Type": "x/y", "Host": "h", "Authorization": "Bearer t"}, b"{}"
    )
    assert line.startswith("curl -sS -i -X POST ")
    assert "-H 'Content-Type: x/y'" in line and "-H 'Authorization: Bearer t'" in line and "Host" not in line
    assert line.endswith("--globoff 'http://127.0.0.1:9/a?b=[1]'")
    assert " -N " in curl_command("GET", "http://h/s", {}, None, stream=True)


def test_binary_bodies_are_piped_from_printf() -> None:
    line = curl_command("POST", "http://h/u", {}, b"a\x00%\\\xff")
    assert line.startswith("printf -- 'a\\000%%\\\\\\377' | curl ") and "--data-binary @-" in line
    assert printf_format(b"'") == "''\"'\"''"
