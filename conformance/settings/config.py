"""Run settings from the command line, ``CONFORMANCE_*`` environment variables and a config file.

The file is ``--config FILE``, else ``conformance.toml`` in the working directory, else the
``[tool.conformance]`` table of its ``pyproject.toml``. Top-level keys apply to every protocol; a
table named for a protocol (``[synapse-agent]``, ``[tool.conformance.synapse-agent]``) overrides
them for that protocol::

    protocol = "all"
    level = "should"
    expected-failures = "conformance-baseline.yaml"   # relative to this file

    [synapse-agent]
    base-url = "https://staging.example/repo/v1"
    token = "${SYNAPSE_TOKEN}"                          # from the environment, never committed

Precedence: command line > environment > the protocol's table > the file's top level > default.
Under several protocols a ``base-url`` not from the protocol's own table is the server's root
(``at_server_root``: each protocol's server path appended).
String values interpolate ``${VAR}`` (``${VAR:-fallback}``; ``$$`` is a literal ``$``). A key,
type or variable the file gets wrong is a usage error that names it.

Each source is read into a layer keyed by the fields of ``RunOptions`` (``max_examples``, not
``max-examples``); ``Invocation`` holds the layers and resolves them straight into the
``RunOptions`` of each protocol's run, validated: one options type from the command line to the plan.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from conformance.run.depth import DEFAULT, DEPTHS
from conformance.run.exampledb import ExampleDb
from conformance.run.options import PHASE_NAMES, RunOptions
from conformance.run.plan import selected
from conformance.run.shards import WHOLE, Shard
from conformance.run.suites import all_suites, suite
from conformance.settings.configfile import find
from conformance.settings.usage import UsageError, check_jobs, check_run
from conformance.verdicts import baseline
from conformance.verdicts.baseline import Entry
from conformance.verdicts.requirements import Level
from specs.documents import PROTOCOLS


class ConfigError(UsageError):
    """The config file or a CONFORMANCE_* variable is unusable; the message names the key."""


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a string")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("an integer")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError("a number")
    return float(value)


def _words(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) and v for v in items):
        raise TypeError("a string or a list of strings")
    return tuple(items)


def _choice(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in choices:
            raise TypeError(f"one of {', '.join(choices)}")
        return str(value)

    return check


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _command(value: Any) -> tuple[str, ...]:
    """A client's command: a list of words, or one string split as a shell splits words (never run
    by a shell)."""
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise TypeError(f"a command a shell could split into words ({exc})") from None
        if words:
            return tuple(words)
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise TypeError("a command: a string or a non-empty list of strings")


def _seconds(value: Any) -> float:
    seconds = _number(value)
    if not 0 < seconds <= 3600:
        raise TypeError("a number of seconds above 0, at most 3600")
    return seconds


def _shard(value: Any) -> Shard:
    if isinstance(value, Shard):
        return value
    try:
        return Shard.parse(_text(value))
    except ValueError:
        raise TypeError("K/N with 1 <= K <= N, e.g. 2/4") from None


def _phases(value: Any) -> tuple[str, ...]:
    words = _words(value)
    if not set(words) <= set(PHASE_NAMES):
        raise TypeError(f"a list of phases ({', '.join(PHASE_NAMES)})")
    return words


@dataclass(frozen=True, slots=True)
class Key:
    name: str
    """As written: ``--name``, ``name = `` in the file, ``CONFORMANCE_NAME``."""
    field: str
    """Where its value goes: a field of ``RunOptions`` (``protocol`` and ``jobs`` are the
    invocation's, ``example_db_readonly`` joins ``example_db``, ``client_*`` are the client mode's)."""
    parse: Callable[[Any], Any]
    default: Any = None
    path: bool = False
    """A file path: relative to the config file it is written in."""
    per_protocol: bool = True


KEYS = {
    k.name: k
    for k in (
        Key("protocol", "protocol", _choice(*sorted(PROTOCOLS), "all"), per_protocol=False),
        Key("jobs", "jobs", _int, 0, per_protocol=False),
        Key("base-url", "base_url", _text),
        Key("token", "token", _text),
        Key("second-token", "second_token", _text),
        Key("level", "level", _choice(*(lv.value for lv in Level)), "may"),
        Key("seed", "seed", _int, 0),
        Key("depth", "depth", _choice(*DEPTHS), DEFAULT.name),
        Key("max-examples", "max_examples", _int),  # default: the depth's
        Key("timeout", "timeout", _number, 10.0),
        Key("budget", "budget_s", _number),  # default: the depth's
        Key("shard", "shard", _shard, WHOLE),
        Key("example-db", "example_db", _text, path=True),
        Key("example-db-readonly", "example_db_readonly", _flag, False),
        Key("only", "only", _words, ()),
        Key("skip", "skip", _words, ()),
        Key("requirements", "requirement_set", _text, ""),
        Key("phase", "phases", _phases, PHASE_NAMES),
        Key("profile", "profile", _text),
        Key("target-name", "target_name", _text, ""),
        Key("target-version", "target_version", _text, ""),
        Key("expected-failures", "expected_failures", _text, path=True),
        Key("report-dir", "report_dir", _text, path=True),
        Key("sign-key", "sign_key", _text, path=True),
        # the client mode's (docs/client.md); the seed and the protocol are shared with run
        Key("client-command", "client_command", _command, ()),
        Key("client-scenario", "client_scenario", _words, ()),
        Key("client-timeout", "client_timeout_s", _seconds, 30.0),
        Key("client-report-dir", "client_report_dir", _text, path=True),
        Key("client-expected-failures", "client_expected_failures", _text, path=True),
    )
}
FIELDS = {k.field: k for k in KEYS.values()}

Layer = Mapping[str, Any]
"""What one source gives, by ``RunOptions`` field (a key it does not give is absent)."""

ENV_PREFIX = "CONFORMANCE_"
_LIST_KEYS = {"only", "skip", "phase", "client-scenario"}
_FLAGS = {"example-db-readonly"}
_NUMERIC = {"jobs": int, "seed": int, "max-examples": int, "timeout": float, "budget": float, "client-timeout": float}


def env_name(key: str) -> str:
    return ENV_PREFIX + key.upper().replace("-", "_")


_VAR = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def interpolate(text: str, environ: Mapping[str, str], where: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name, fallback = m.group(1), m.group(2)
        if name in environ:
            return environ[name]
        if fallback is not None:
            return fallback
        raise ConfigError(f"{where}: ${{{name}}} is not set in the environment")

    return _VAR.sub(sub, text)


@dataclass(frozen=True)
class FileConfig:
    path: Path | None = None
    common: Mapping[str, Any] = field(default_factory=dict)
    protocols: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def load(explicit: Path | None, cwd: Path, environ: Mapping[str, str]) -> FileConfig:
    found = find(explicit, cwd)
    if found is None:
        return FileConfig()
    path, table = found
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot read it ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path}: not valid TOML ({exc})") from None
    prefix = ""
    for part in table.split(".") if table else ():
        data = data.get(part) if isinstance(data, dict) else None
        prefix += f"{part}."
    if not isinstance(data, dict):
        raise ConfigError(f"config {path}: no [{table}] table")
    common: dict[str, Any] = {}
    protocols: dict[str, dict[str, Any]] = {}
    for name, value in data.items():
        if isinstance(value, dict):
            if name not in PROTOCOLS:
                raise ConfigError(
                    f"config {path}: [{prefix}{name}] is not a protocol (known: {', '.join(sorted(PROTOCOLS))})"
                )
            protocols[name] = _section(value, path, f"[{prefix}{name}] ", environ, per_protocol=True)
        else:
            common.update(_section({name: value}, path, f"[{table}] " if table else "", environ, per_protocol=False))
    return FileConfig(path, common, protocols)


def _section(
    values: Mapping[str, Any], path: Path, where: str, environ: Mapping[str, str], *, per_protocol: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, raw in values.items():
        key = KEYS.get(name)
        label = f"config {path}: {where}{name}"
        if key is None:
            raise ConfigError(f"{label}: unknown key (known: {', '.join(KEYS)})")
        if per_protocol and not key.per_protocol:
            raise ConfigError(f"{label}: belongs at the top level, not in a protocol's table")
        value = raw
        if isinstance(value, str):
            value = interpolate(value, environ, label)
        elif isinstance(value, list):
            value = [interpolate(v, environ, label) if isinstance(v, str) else v for v in value]
        try:
            parsed = key.parse(value)
        except TypeError as exc:
            raise ConfigError(f"{label}: must be {exc} (got {raw!r})") from None
        if key.path and parsed and "://" not in parsed:  # a URL (redis://) is no file
            parsed = str((path.parent / parsed).resolve()) if not Path(parsed).is_absolute() else parsed
        out[key.field] = parsed
    return out


def from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """``CONFORMANCE_BASE_URL`` etc.; lists are comma-separated."""
    out: dict[str, Any] = {}
    for name, key in KEYS.items():
        var = env_name(name)
        if var not in environ:
            continue
        raw = environ[var]
        value: Any = raw
        try:
            if name in _LIST_KEYS:
                value = [w.strip() for w in raw.split(",") if w.strip()]
            elif name in _NUMERIC:
                value = _NUMERIC[name](raw)
            elif name in _FLAGS:
                value = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}.get(
                    raw.strip().lower(), raw
                )
        except ValueError:
            kind = "an integer" if _NUMERIC[name] is int else "a number"
            raise ConfigError(f"{var}={raw!r}: must be {kind}") from None
        try:
            out[key.field] = key.parse(value)
        except TypeError as exc:
            raise ConfigError(f"{var}={raw!r}: must be {exc}") from None
    return out


def given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The layer of options given by field (the command line's, the pytest plugin's): None is
    not given; lists become tuples and paths strings, as the file and the environment give them."""
    out: dict[str, Any] = {}
    for field_name, value in values.items():
        if field_name not in FIELDS or value is None:
            continue
        out[field_name] = tuple(value) if isinstance(value, list) else str(value) if isinstance(value, Path) else value
    return out


@dataclass(frozen=True)
class Invocation:
    """What one invocation gave, source by source, and the options of each protocol's run they
    resolve to. Precedence: the command line, the environment, the protocol's table of the file,
    the file's top level, the default."""

    cli: Layer = field(default_factory=dict)
    env: Layer = field(default_factory=dict)
    file: FileConfig = field(default_factory=FileConfig)

    def lookup(self, protocol: str, field_name: str) -> tuple[Any, str] | None:
        """The value given for ``field_name`` and where it came from, or None when nothing gave it."""
        for source, layer in (
            ("command line", self.cli),
            ("environment", self.env),
            (f"{self.file.path} [{protocol}]", self.file.protocols.get(protocol, {})),
            (str(self.file.path), self.file.common),
        ):
            if layer.get(field_name) is not None:
                return layer[field_name], source
        return None

    def value(self, protocol: str, field_name: str) -> Any:
        found = self.lookup(protocol, field_name)
        return FIELDS[field_name].default if found is None else found[0]

    def protocol(self) -> str:
        protocol = self.value("", "protocol")
        if protocol is None:
            raise ConfigError(
                f"--protocol is required (or {env_name('protocol')}, or 'protocol' in conformance.toml); "
                f"known: {', '.join(sorted(PROTOCOLS))}, all"
            )
        return str(protocol)

    def protocols(self) -> list[str]:
        protocol = self.protocol()
        if protocol != "all" and protocol not in PROTOCOLS:  # the pytest plugin's option has no choices
            raise UsageError(f"unknown protocol {protocol!r}; known: {', '.join(sorted(PROTOCOLS))} or all")
        return sorted(PROTOCOLS) if protocol == "all" else [protocol]

    def jobs(self) -> int:
        """``--jobs``: protocols run at once (0: one per core), refused below 0."""
        jobs = int(self.value("", "jobs"))
        check_jobs(jobs)
        return jobs

    def folder(self, protocol: str, field_name: str, several: bool) -> Path | None:
        """A report folder given for ``protocol``: a shared one gets a folder per protocol when several
        run; a protocol's own (its table's) is used as it is. None when nothing gave one."""
        report = self.lookup(protocol, field_name)
        if report is None:
            return None
        own = report[1].endswith(f"[{protocol}]")
        return Path(report[0]) / protocol if several and not own else Path(report[0])

    def options(
        self, protocol: str, *, several: bool = False, baselines: dict[str, tuple[Entry, ...]] | None = None
    ) -> RunOptions:
        """The options of ``protocol``'s run as given, not yet validated against the suite."""
        value = partial(self.value, protocol)
        depth = DEPTHS[value("depth")]
        max_examples = value("max_examples")
        budget = value("budget_s")
        explicit_depth = self.lookup(protocol, "depth") is not None
        report_dir = self.folder(protocol, "report_dir", several)
        base = self.lookup(protocol, "base_url")
        base_url = "" if base is None else str(base[0])
        if base is not None and several and not base[1].endswith(f"[{protocol}]"):
            base_url = at_server_root(base_url, protocol)
        return RunOptions(
            protocol=protocol,
            base_url=base_url,
            token=value("token"),
            second_token=value("second_token"),
            seed=value("seed"),
            max_examples=max_examples if max_examples is not None else depth.max_examples,
            timeout=value("timeout"),
            level=Level(value("level")),
            profile=value("profile"),
            budget_s=budget if budget is not None else depth.budget_s,
            only=value("only"),
            skip=value("skip"),
            requirement_set=value("requirement_set"),
            phases=tuple(value("phases")),
            expected_failures=expected_failures(value("expected_failures"), baselines),
            target_name=value("target_name"),
            target_version=value("target_version"),
            depth=depth.name,
            # an explicit --max-examples without a depth keeps its own count of sequences
            model_sequences=depth.model_sequences if explicit_depth or max_examples is None else None,
            model_step_factor=depth.model_step_factor,
            shard=value("shard"),
            example_db=ExampleDb(value("example_db"), value("example_db_readonly")) if value("example_db") else None,
            report_dir=report_dir,
            sign_key=Path(value("sign_key")) if value("sign_key") else None,
        )

    def runs(self) -> list[RunOptions]:
        """The options of each protocol's run, validated (``usage.check_run``).

        With several protocols an ``--only``/``--skip`` prefix applies where it matches; one that
        matches no protocol at all is refused, as is a profile no selected protocol has."""
        protocols = self.protocols()
        several = len(protocols) > 1
        baselines: dict[str, tuple[Entry, ...]] = {}
        for profile in sorted({self.value(pid, "profile") for pid in protocols} - {None}):
            if not any(profile in PROTOCOLS[pid].profiles for pid in protocols):
                known = sorted({p for pid in protocols for p in PROTOCOLS[pid].profiles})
                raise UsageError(
                    f"no profile {profile!r} for {'all' if several else protocols[0]} "
                    f"(known: {', '.join(known) or 'none'})"
                )
        for name, field_name in (("only", "only"), ("skip", "skip")):
            for prefix in sorted({p for pid in protocols for p in self.value(pid, field_name)}):
                if not any(_matching((prefix,), pid) for pid in protocols):
                    raise UsageError(
                        f"--{name} {prefix!r} matches no requirement of {'any protocol' if several else protocols[0]}"
                        "; list them with: python -m conformance requirements"
                    )
        runs: list[RunOptions] = []
        for pid in protocols:
            options = self.options(pid, several=several, baselines=baselines)
            only, skip = _matching(options.only, pid), _matching(options.skip, pid)
            if several and options.only and not only:
                continue  # none of its requirements is asked for
            profile = options.profile if options.profile in PROTOCOLS[pid].profiles else None
            options = replace(options, only=only, skip=skip, profile=profile)
            if several and not selected(suite(pid, options.profile), options):
                continue
            checked = check_run(options, base_url_given=self.lookup(pid, "base_url") is not None)
            if checked is not None:
                runs.append(checked)
        if not runs:
            raise UsageError("no requirement is selected by --only, --skip, --level and --phase together")
        return runs


def at_server_root(url: str, protocol: str) -> str:
    """A base URL several protocols share (``--protocol all --base-url URL``, a file's top-level
    ``base-url``) is the root of a server serving each at its server path, as the mock does: the
    protocol's path is appended (synapse-agent's ``/repo/v1``). A URL that already ends in one
    protocol's path would be wrong for the others, so it is refused, not guessed at."""
    served = {info.base_path: pid for pid, info in sorted(PROTOCOLS.items()) if info.base_path}
    clash = next((path for path in served if url.rstrip("/").endswith(path)), None)
    if clash is not None:
        raise UsageError(
            f"--base-url {url!r} ends in {served[clash]}'s server path {clash}, but with several protocols it is "
            f"the server's root, each protocol's server path appended: give {url.rstrip('/')[: -len(clash)]!r}, "
            "or each protocol's own base-url in conformance.toml ([synapse-agent] base-url = ...)"
        )
    path = PROTOCOLS[protocol].base_path
    return url.rstrip("/") + path if path else url


def expected_failures(path: str | None, cache: dict[str, tuple[Entry, ...]] | None = None) -> tuple[Entry, ...]:
    if not path:
        return ()
    if cache is not None and path in cache:
        return cache[path]
    try:
        entries = baseline.load(Path(path))
        baseline.check_ids(entries, {c.requirement.id for s in all_suites().values() for c in s.registry}, Path(path))
    except baseline.BaselineError as exc:
        raise UsageError(f"--expected-failures {exc}") from None
    if cache is not None:
        cache[path] = entries
    return entries


def _matching(prefixes: tuple[str, ...], pid: str) -> tuple[str, ...]:
    return tuple(p for p in prefixes if any(c.requirement.id.startswith(p) for c in suite(pid).registry))
