"""Usage validation: every mistake a user can make in the options is refused before anything is
tested, with one line that says what to do.

The CLI and the pytest plugin both call ``check_run`` (through ``config.Invocation.runs``); a run
that starts has options that make sense, so whatever it reports is about the target, never about the invocation.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

import httpx

from conformance.run.exampledb import ExampleDbError, open_database
from conformance.run.options import RunOptions
from conformance.run.plan import selected
from conformance.run.suites import suite
from specs.documents import PROTOCOLS, load

_VERSION_SEGMENT = re.compile(r"v\d+(\.\d+)*")


class UsageError(Exception):
    """The invocation cannot be run as given; the message says what to do instead."""


def check_base_url(url: str, protocol: str) -> str:
    """The base URL without a trailing slash, or a UsageError naming the problem and the fix."""
    if not url.strip():
        raise UsageError(
            "--base-url is empty (an unset variable?); give the target's URL, or omit the option to test "
            "the embedded reference mock"
        )
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise UsageError(f"--base-url {url!r} is not a valid URL ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(f"--base-url {url!r} must be an http:// or https:// URL with a host")
    if parsed.query or parsed.fragment:
        raise UsageError(f"--base-url {url!r} must not carry a query or fragment")
    doubled = _doubled_root(parsed.path, protocol)
    if doubled:
        root, example = doubled
        fixed = str(parsed.copy_with(path=parsed.path.rstrip("/")[: -len(root)] or "/")).rstrip("/")
        raise UsageError(
            f"--base-url {url!r} ends in {root}, which the {protocol} document's paths already start with "
            f"({example}); use --base-url {fixed}"
        )
    return url.rstrip("/")


def _doubled_root(path: str, protocol: str) -> tuple[str, str] | None:
    """The API root (``/ap/v1``) a base URL's path ends in when the document's paths start with it too.

    One rule for every protocol: an API root is a path's leading segments up to and including its
    first version segment (``/ap/v1/agent/tasks`` -> ``/ap/v1``, ``/v1/models`` -> ``/v1``); the
    document's server path (Synapse's ``/repo/v1``) belongs in the base URL and is not one."""
    tail = path.rstrip("/")
    for op in load(protocol).operations():
        segments = op.path.strip("/").split("/")
        for n, segment in enumerate(segments, 1):
            if "{" in segment:
                break
            if _VERSION_SEGMENT.fullmatch(segment):
                root = "/" + "/".join(segments[:n])
                if tail.endswith(root):
                    return root, op.path
                break
    return None


def check_token(option: str, token: str | None) -> None:
    if token is None:
        return
    if not token:
        raise UsageError(f"{option} is empty (an unset variable?); give the token, or omit the option")
    if token[:7].lower() == "bearer ":
        raise UsageError(f"{option} starts with 'Bearer '; pass the token alone, the suite adds the scheme")
    if not token.isascii():
        raise UsageError(f"{option} contains non-ASCII characters; an HTTP header cannot carry them")
    if any(c.isspace() or not c.isprintable() for c in token):
        raise UsageError(
            f"{option} contains whitespace or a control character (a trailing newline from a file?); strip it"
        )


def check_run(options: RunOptions, *, base_url_given: bool) -> RunOptions:
    """The options of one protocol's run, its base URL normalised, or UsageError saying what to fix."""
    if options.max_examples < 1:
        raise UsageError(f"--max-examples must be at least 1 (got {options.max_examples})")
    if not options.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds (got {options.timeout:g})")
    if not options.budget_s > 0:
        raise UsageError(f"--budget must be a positive number of seconds (got {options.budget_s:g})")
    check_token("--token", options.token)
    check_token("--second-token", options.second_token)
    if options.example_db is not None:  # refused now, not once the target is up
        try:
            open_database(options.example_db, b"")
        except ExampleDbError as exc:
            raise UsageError(str(exc)) from None
    if options.sign_key is not None:  # a key that cannot sign is refused before the run, not after it
        from conformance.reporting.signature import SignatureError, private_key

        try:
            private_key(options.sign_key)
        except SignatureError as exc:
            raise UsageError(f"--sign-key: {exc}") from None
    pid = options.protocol
    if options.requirement_set:
        options = replace(options, requirement_set=check_requirement_set(options.requirement_set, pid))
    for prefix in options.only:
        if not any(c.requirement.id.startswith(prefix) for c in suite(pid).registry):
            raise UsageError(
                f"--only {prefix!r} matches no requirement of {pid}; list them with: python -m conformance requirements"
            )
    if base_url_given:
        options = replace(options, base_url=check_base_url(options.base_url, pid))
    if not selected(suite(pid, options.profile), options):
        raise UsageError("no requirement is selected by --only, --level and --phase together")
    if base_url_given and suite(pid, options.profile).needs_auth and not options.token:
        raise UsageError(
            f"{pid} requires credentials (its document declares bearer auth): pass --token "
            "(and --second-token for the ownership requirements), or omit --base-url to test the embedded mock"
        )
    return options


def check_requirement_set(name: str, protocol: str) -> str:
    """The full name of the released set ``--requirements`` names, or UsageError: an unknown set,
    or one holding a requirement this kit no longer has (it cannot score that set)."""
    from conformance.verdicts.sets import SetError, named

    try:
        rset = named(name, protocol)
    except SetError as exc:
        raise UsageError(str(exc)) from None
    gone = rset.missing(c.requirement.id for c in suite(protocol).registry)
    if gone:
        raise UsageError(
            f"requirement set {rset.name} holds {', '.join(gone)}, which this kit no longer has: it cannot "
            f"score that set (the kit that released it, {rset.suite_version}, can)"
        )
    return rset.name


def check_jobs(jobs: int) -> None:
    if jobs < 0:
        raise UsageError(f"--jobs must be 0 (one per core) or more (got {jobs})")


def check_report_dir(directory: Path) -> None:
    """Prove the report folder writable now, not after the whole run, and leave no folder behind:
    a run that ends in a usage error or an unusable target writes none (the reports create it)."""
    created = [d for d in (directory, *directory.parents) if not d.exists()]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / ".write-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"--report-dir {str(directory)!r} is not writable ({exc.strerror or exc})") from None
    finally:
        for folder in created:  # deepest first; one another process filled meanwhile stays
            with suppress(OSError):
                folder.rmdir()


def known_protocol(protocol: str | None) -> str:
    if protocol not in PROTOCOLS:
        raise UsageError(f"unknown protocol {protocol!r}; known: {', '.join(sorted(PROTOCOLS))}")
    return protocol
