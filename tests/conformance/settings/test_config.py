"""Settings from conformance.toml / [tool.conformance], CONFORMANCE_* and the command line:
precedence, interpolation, and files that are wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli.commands import main
from conformance.settings import config
from conformance.settings.config import ConfigError
from conformance.settings.usage import UsageError
from specs.documents import PROTOCOLS
from tests.hostile import closed_port_url

FILE = """
level = "should"
seed = 7
max-examples = 3
only = ["AP-TASK-"]
expected-failures = "baseline.yaml"

[agent-protocol]
seed = 8
token = "${AP_TOKEN}"
second-token = "${AP_SECOND:-bob-token}"
base-url = "https://example.test/$${literal}"
"""


def write(directory: Path, text: str, name: str = "conformance.toml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def invocation(
    tmp_path: Path, cli: dict[str, object] | None = None, environ: dict[str, str] | None = None
) -> config.Invocation:
    environ = {"AP_TOKEN": "secret", **(environ or {})}
    write(tmp_path, "expected_failures: []\n", "baseline.yaml")  # FILE's, read when the options are
    return config.Invocation(config.given(cli or {}), config.from_env(environ), config.load(None, tmp_path, environ))


def test_precedence_is_cli_then_env_then_protocol_table_then_file_then_default(tmp_path: Path) -> None:
    write(tmp_path, FILE)
    given = invocation(tmp_path)
    assert given.lookup("agent-protocol", "seed") == (8, f"{tmp_path / 'conformance.toml'} [agent-protocol]")
    assert given.lookup("agent-protocol", "level") == ("should", str(tmp_path / "conformance.toml"))
    assert given.lookup("agent-protocol", "timeout") is None  # the default decides
    options = given.options("agent-protocol")
    assert (options.seed, options.level.value, options.timeout) == (8, "should", 10.0)
    assert options.only == ("AP-TASK-",) and options.max_examples == 3
    other = given.options("neuro-san")  # the agent-protocol table is not its own
    assert other.seed == 7 and other.token is None
    env = invocation(
        tmp_path,
        environ={"CONFORMANCE_SEED": "9", "CONFORMANCE_LEVEL": "must", "CONFORMANCE_ONLY": "AP-TASK-001, AP-ERR-"},
    )
    assert env.lookup("agent-protocol", "seed") == (9, "environment")
    assert env.options("agent-protocol").level.value == "must"
    assert env.options("agent-protocol").only == ("AP-TASK-001", "AP-ERR-")
    cli = invocation(tmp_path, cli={"seed": 10, "level": None}, environ={"CONFORMANCE_SEED": "9"})
    assert cli.lookup("agent-protocol", "seed") == (10, "command line")
    assert cli.options("agent-protocol").level.value == "should"  # not given on the command line: the next layer


def test_values_interpolate_the_environment(tmp_path: Path) -> None:
    write(tmp_path, FILE)
    given = invocation(tmp_path)
    assert given.value("agent-protocol", "token") == "secret"
    assert given.value("agent-protocol", "second_token") == "bob-token"  # the fallback
    carol = invocation(tmp_path, environ={"AP_SECOND": "carol"})
    assert carol.value("agent-protocol", "second_token") == "carol"
    assert given.value("agent-protocol", "base_url") == "https://example.test/${literal}"  # $$ is a literal $
    assert given.value("agent-protocol", "expected_failures") == str(tmp_path / "baseline.yaml")  # relative to it


def test_an_unset_variable_is_an_error_naming_the_key(tmp_path: Path) -> None:
    write(tmp_path, FILE)
    with pytest.raises(ConfigError, match=r"\[agent-protocol\] token: \$\{AP_TOKEN\} is not set"):
        config.load(None, tmp_path, {})


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('levle = "must"\n', "levle: unknown key"),
        ('seed = "zero"\n', "seed: must be an integer (got 'zero')"),
        ("max-examples = true\n", "max-examples: must be an integer"),
        ('level = "critical"\n', "level: must be one of must, should, may"),
        ('phase = ["stateful"]\n', "phase: must be a list of phases (schema, model, scenario)"),
        ("only = [1]\n", "only: must be a string or a list of strings"),
        ("[a2a]\nseed = 1\n", "[a2a] is not a protocol"),
        ('[neuro-san]\nprotocol = "all"\n', "[neuro-san] protocol: belongs at the top level"),
        ("[neuro-san]\njobs = 2\n", "[neuro-san] jobs: belongs at the top level"),
        ('jobs = "two"\n', "jobs: must be an integer (got 'two')"),
        ("seed = \n", "not valid TOML"),
    ],
)
def test_an_invalid_file_is_an_error_naming_the_key(tmp_path: Path, text: str, says: str) -> None:
    write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        config.load(None, tmp_path, {})
    assert says in str(caught.value) and str(tmp_path / "conformance.toml") in str(caught.value)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"CONFORMANCE_MAX_EXAMPLES": "many"}, "CONFORMANCE_MAX_EXAMPLES='many': must be an integer"),
        ({"CONFORMANCE_TIMEOUT": "soon"}, "CONFORMANCE_TIMEOUT='soon': must be a number"),
        ({"CONFORMANCE_LEVEL": "high"}, "CONFORMANCE_LEVEL='high': must be one of"),
        ({"CONFORMANCE_JOBS": "all"}, "CONFORMANCE_JOBS='all': must be an integer"),
    ],
)
def test_an_invalid_environment_variable_is_an_error_naming_it(env: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        config.from_env(env)


def test_jobs_is_a_top_level_key_with_the_usual_precedence(tmp_path: Path) -> None:
    def jobs(cli: int | None = None, environ: dict[str, str] | None = None) -> int:
        env = config.from_env(environ or {})
        return config.Invocation(config.given({"jobs": cli}), env, config.load(None, tmp_path, {})).jobs()

    assert jobs() == 0  # the default: one worker per core
    write(tmp_path, "jobs = 3\n")
    assert jobs() == 3
    assert jobs(environ={"CONFORMANCE_JOBS": "2"}) == 2
    assert jobs(1, {"CONFORMANCE_JOBS": "2"}) == 1
    with pytest.raises(UsageError, match=r"^--jobs must be 0 \(one per core\) or more \(got -1\)$"):
        jobs(environ={"CONFORMANCE_JOBS": "-1"})


def test_pyproject_tool_conformance_is_found_and_conformance_toml_wins(tmp_path: Path) -> None:
    write(tmp_path, '[project]\nname = "x"\n', "pyproject.toml")
    assert config.load(None, tmp_path, {}).path is None  # a pyproject without the table is not a config
    write(tmp_path, "[tool.conformance]\nseed = 3\n[tool.conformance.neuro-san]\nseed = 4\n", "pyproject.toml")
    file = config.load(None, tmp_path, {})
    assert file.path == tmp_path / "pyproject.toml"
    assert config.Invocation(file=file).options("neuro-san").seed == 4
    assert config.Invocation(file=file).options("agent-protocol").seed == 3
    write(tmp_path, "seed = 5\n")
    assert config.Invocation(file=config.load(None, tmp_path, {})).options("agent-protocol").seed == 5
    named = write(tmp_path, "[tool.conformance]\nsed = 1\n", "pyproject.toml")
    with pytest.raises(ConfigError, match=r"\[tool.conformance\] sed: unknown key"):
        config.load(named, tmp_path, {})


def test_the_cli_runs_what_the_file_says_and_its_options_override_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, 'protocol = "agent-protocol"\nonly = "AP-TASK-002"\nphase = "scenario"\nreport-dir = "out"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONFORMANCE_ONLY", raising=False)
    assert main(["run", "-q"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in results["requirements"]] == ["AP-TASK-002"]
    monkeypatch.setenv("CONFORMANCE_ONLY", "AP-TASK-001")
    assert main(["run", "-q"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in results["requirements"]] == ["AP-TASK-001"]  # env over file
    assert main(["run", "-q", "--only", "AP-ERR-001", "--report-dir", "cli"]) == 0  # command line over both
    results = json.loads((tmp_path / "cli" / "results.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in results["requirements"]] == ["AP-ERR-001"]


def test_a_protocols_table_sets_its_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = closed_port_url()
    path = write(tmp_path, f'[agent-protocol]\nbase-url = "{url}"\ntimeout = 1\n', "ci.toml")
    code = main(["run", "--protocol", "agent-protocol", "--config", str(path), "--report-dir", str(tmp_path / "r")])
    assert code == 2  # the unreachable target the file names, not the embedded mock
    assert f"error: agent-protocol: target unreachable or not speaking HTTP: cannot connect to {url}/" in (
        capsys.readouterr().err
    )


def test_an_invalid_config_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, '[agent-protocol]\nbudget = "long"\n', "ci.toml")
    assert main(["run", "--protocol", "agent-protocol", "--config", str(path)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line == f"error: config {path}: [agent-protocol] budget: must be a number (got 'long')"
    assert main(["run", "--protocol", "agent-protocol", "--config", str(tmp_path / "none.toml")]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_no_protocol_anywhere_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONFORMANCE_PROTOCOL", raising=False)
    assert main(["run"]) == 2
    assert "--protocol is required" in capsys.readouterr().err


def test_skip_leaves_requirements_out(tmp_path: Path) -> None:
    code = main(
        [
            "run",
            "--protocol",
            "agent-protocol",
            "--only",
            "AP-TASK-",
            "--skip",
            "AP-TASK-001",
            "--phase",
            "scenario",
            "--report-dir",
            str(tmp_path),
            "-q",
        ]
    )
    assert code == 0
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in results["requirements"]] == ["AP-TASK-002", "AP-TASK-003"]
    assert main(["run", "--protocol", "agent-protocol", "--skip", "AP-NOPE-"]) == 2


def test_the_usage_pages_example_file_is_valid(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "usage.md").read_text(encoding="utf-8")
    example = page.split("```toml\n# conformance.toml\n", 1)[1].split("```", 1)[0]
    write(tmp_path, example)
    write(tmp_path, "expected_failures: []\n", "expected-failures.yaml")
    environ = {"SYNAPSE_TOKEN": "t1", "SYNAPSE_TOKEN_2": "t2"}
    runs = config.Invocation(file=config.load(None, tmp_path, environ)).runs()  # all of it is accepted
    by_protocol = {options.protocol: options for options in runs}
    assert list(by_protocol) == sorted(PROTOCOLS)  # protocol = "all"
    assert by_protocol["synapse-agent"].token == "t1" and by_protocol["agent-protocol"].token is None
    assert (
        by_protocol["agent-protocol"].skip == ("AP-ARTIFACT-006",) and by_protocol["synapse-agent"].max_examples == 25
    )
    assert {options.report_dir for options in runs} == {(tmp_path / "reports" / pid).resolve() for pid in PROTOCOLS}


def test_a_base_url_several_protocols_share_is_the_servers_root(tmp_path: Path) -> None:
    """``--protocol all --base-url ROOT``: each protocol at ROOT plus its manifest's server path, as
    the mock serves them; a protocol's own table, or a one-protocol run, keeps its URL as given."""
    root = "http://127.0.0.1:8000"
    runs = config.Invocation(config.given({"protocol": "all", "base_url": root + "/", "token": "t"})).runs()
    urls = {options.protocol: options.base_url for options in runs}
    assert urls["synapse-agent"] == root + PROTOCOLS["synapse-agent"].base_path == root + "/repo/v1"
    assert {urls[pid] for pid in urls if pid != "synapse-agent"} == {root}
    path = write(tmp_path, f'protocol = "all"\nbase-url = "{root}"\n[synapse-agent]\nbase-url = "{root}/x"\n')
    runs = config.Invocation(config.given({"token": "t"}), file=config.load(path, tmp_path, {})).runs()
    assert {o.protocol: o.base_url for o in runs}["synapse-agent"] == root + "/x"
    one = config.Invocation(config.given({"protocol": "synapse-agent", "base_url": root, "token": "t"})).runs()
    assert one[0].base_url == root


def test_a_shared_base_url_ending_in_a_protocols_server_path_is_refused() -> None:
    given = config.Invocation(config.given({"protocol": "all", "base_url": "http://h:8000/repo/v1", "token": "t"}))
    with pytest.raises(UsageError, match=r"ends in synapse-agent's server path /repo/v1.*give 'http://h:8000'"):
        given.runs()
