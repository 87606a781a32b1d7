"""The typer-free route of ``flinktune lint`` (flinktune/cli/lint_run.py) agrees with the typer command.

``flinktune.cli.app.main`` parses a plain ``lint`` command line itself (typer with pydantic under
it costs more than the lint) and leaves anything else to typer. These tests pin the two together:
same options, same parsed arguments, same output and exit codes, and the light route really does
not import typer, pydantic, numpy or pyspark.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import check_plain_options, heavy_imports, typer_parsed
from typer.testing import CliRunner

from flinktune.cli import lint_run
from flinktune.cli.app import app
from flinktune.cli.lint_run import OPTIONS, LintArgs, parse_lint_args

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_RULES = str(Path(__file__).resolve().parent / "rules_fixture")


@pytest.fixture(autouse=True)
def _no_project_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def test_option_table_matches_the_typer_command() -> None:
    check_plain_options("lint", OPTIONS, LintArgs._fields, ("files", -1))


COMMAND_LINES = [
    ["a.yaml"],
    ["a.yaml", "b.yaml", "--format", "json"],
    ["-f", "sarif", "--fail-on=error", "a.yaml"],
    ["--select", "FTC0,FTC1", "--select", "FTN", "--ignore=FTC021", "a.yaml"],
    ["--rules", "r1", "--rules=r2", "--no-bundled-rules", "a.yaml"],
    ["--flink-version", "2.0", "--parallelism", "8", "--slots=4", "--taskmanagers", "3", "a.yaml"],
    ["--config", "cfg.yaml", "--baseline", "base.json", "-o", "out.txt", "-v", "--no-color", "a.yaml"],
    ["--write-baseline", "w.json", "--fix", "--follow-symlinks", "--verbose", "a.yaml"],
    ["a.yaml", "--", "--weird-name.yaml"],
    ["folder/", "*.yaml", "--output", "o.txt"],
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: " ".join(argv))
def test_same_arguments_as_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_lint_args(argv) == typer_parsed(monkeypatch, lint_run, "run_lint", "lint", argv)


@pytest.mark.parametrize("argv", [
    [],                                   # no file: typer says so
    ["--help"],
    ["a.yaml", "--bogus"],
    ["a.yaml", "--format"],               # missing value
    ["--parallelism", "0", "a.yaml"],     # below the minimum
    ["--parallelism", "x", "a.yaml"],
    ["--parallelism", "+4", "a.yaml"],    # spellings typer may read differently: leave them to typer
    ["-vf", "json", "a.yaml"],            # bundled short flags
    ["--fix=yes", "a.yaml"],
    ["--format", "", "a.yaml"],
    ["--output", "-", "a.yaml"],
    ["-"],
])
def test_unusual_command_lines_go_to_typer(argv: list[str]) -> None:
    assert parse_lint_args(argv) is None


def _flinktune(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR")}
    return subprocess.run([sys.executable, "-m", "flinktune", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def _both_routes(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """What the typer-free route and the typer command give for ``flinktune lint ARGS``: the same."""
    fast = _flinktune("lint", *args, cwd=cwd)
    typed = CliRunner().invoke(app, ["lint", *args])
    assert "Traceback" not in fast.stderr, fast.stderr
    expected = (typed.exit_code, typed.stdout, typed.stderr)
    assert (fast.returncode, fast.stdout, fast.stderr) == expected, args
    return expected


def test_same_output_and_exit_codes_as_the_typer_route(tmp_path: Path) -> None:
    good = tmp_path / "flink-conf.yaml"
    good.write_text("taskmanager.numberOfTaskSlots: 4\njobmanager.rpc.ardress: x\n", encoding="utf-8")
    bad = tmp_path / "b" / "flink-conf.yaml"
    bad.parent.mkdir()
    bad.write_bytes(b"\x00\x01binary")
    cases = [
        [str(good)],
        [str(good), "--format", "json"],
        [str(good), "--fail-on", "error"],
        [str(good), str(bad), str(tmp_path / "missing.yaml")],
        ["--fail-on", "fatal", str(good)],
        ["--no-bundled-rules", "--rules", FIXTURE_RULES, "--select", "FTZ", str(good)],
        ["--rules", str(tmp_path / "no-such-folder"), str(good)],
    ]
    for args in cases:
        _both_routes(args, tmp_path)


def test_a_selector_that_matches_no_rule_is_one_line_by_either_route(tmp_path: Path) -> None:
    good = tmp_path / "flink-conf.yaml"
    good.write_text("taskmanager.numberOfTaskSlots: 4\n", encoding="utf-8")
    typo = tmp_path / "typo.yaml"
    typo.write_text("select: [FTC, FTX999]\n", encoding="utf-8")
    for args, said in [
        (["--select", "FTX999", str(good)], "--select FTX999 matches no lint rule"),
        (["--ignore", "FTC0,nope", str(good)], "--ignore nope matches no lint rule"),
        (["--config", str(typo), str(good)], f"{typo}:1: select FTX999 matches no lint rule"),
        (["--no-bundled-rules", "--rules", FIXTURE_RULES, "--select", "FTC003", str(good)],
         "--select FTC003 matches no lint rule"),
    ]:
        code, stdout, stderr = _both_routes(args, tmp_path)
        assert (code, stdout, len(stderr.splitlines())) == (2, "", 1), (args, stderr)
        assert stderr.startswith(f"flinktune: error: {said} ("), stderr


def test_light_route_imports_neither_typer_nor_pydantic_numpy_pyspark(tmp_path: Path) -> None:
    conf = tmp_path / "flink-conf.yaml"
    # A complete config (with no memory size Flink refuses to start: FTC050/FTC051 would exit 1).
    conf.write_text("taskmanager.numberOfTaskSlots: 4\ntaskmanager.memory.process.size: 1728m\n"
                    "jobmanager.memory.process.size: 1600m\n", encoding="utf-8")
    # Twice: the first run may fill the validated-rules cache (pydantic), the second must not need it.
    for _ in range(2):
        code, heavy = heavy_imports(["lint", str(conf)], tmp_path)
    assert (code, heavy) == (0, set())


def test_typer_still_serves_help_and_usage_errors(tmp_path: Path) -> None:
    helped = _flinktune("lint", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "--flink-version" in helped.stdout
    wrong = _flinktune("lint", "--bogus", "x.yaml", cwd=tmp_path)
    assert wrong.returncode == 2 and "No such option" in wrong.stderr
    other = _flinktune("rules", "list", cwd=tmp_path)
    assert other.returncode == 0 and "FTC001" in other.stdout


def test_lint_does_not_import_dataclasses(tmp_path: Path) -> None:
    """The lint path's values are Records (flinktune.record): ``dataclasses`` with ``inspect``
    costs ~9 ms to import and a third of a millisecond per class defined (issue 26). Also for a
    folder with a FlinkDeployment, a compose file and a Dockerfile (the deployment readers)."""
    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.numberOfTaskSlots: 4\ntaskmanager.memory.process.size: 1728m\n",
                    encoding="utf-8")
    for name in ("flinkdeployment.yaml", "flink-2.x.config.yaml"):
        (tmp_path / name).write_text((ROOT / "sample_configs" / name).read_text(encoding="utf-8"),
                                     encoding="utf-8")
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  jobmanager:\n    build: .\n    command: jobmanager\n"
        "    volumes: [./flink-conf.yaml:/opt/flink/conf/flink-conf.yaml]\n", encoding="utf-8")
    (tmp_path / "Dockerfile").write_text("FROM flink:1.20\n", encoding="utf-8")
    probe = (
        "import sys, io, contextlib\n"
        "from flinktune.cli.app import main\n"
        "for target in sys.argv[1:]:\n"
        "    sys.argv = ['flinktune', 'lint', target]\n"
        "    try:\n"
        "        with contextlib.redirect_stdout(io.StringIO()):\n"
        "            main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('LOADED=' + ','.join(m for m in ('dataclasses', 'inspect') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(conf), str(tmp_path)], capture_output=True,
                            text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "LOADED=", result.stdout + result.stderr
