"""The typer-free route of ``flinktune recommend`` (flinktune/cli/recommend_run.py) agrees with the typer
command (issue 26: a config-only recommend of a parallelism-10,000 batch job in under a second, most of
which was typer and pydantic starting up).

Same options, same parsed arguments, same output, files and exit codes; ``--metrics``, help and
anything unusual go to typer; the light route imports neither typer nor pydantic, and a batch config
not numpy either (its numbers are counts, not the vectorised model).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import check_plain_options, heavy_imports, typer_parsed
from typer.testing import CliRunner

from flinktune.cli import recommend_run
from flinktune.cli.app import app
from flinktune.cli.recommend_run import OPTIONS, RecommendArgs, parse_recommend_args

REPO = Path(__file__).resolve().parents[2]
BATCH = REPO / "sample_configs" / "large-batch.flink-conf.yaml"
STREAMING = REPO / "sample_configs" / "flinkdeployment.yaml"


@pytest.fixture(autouse=True)
def _no_github(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def test_option_table_matches_the_typer_command() -> None:
    check_plain_options("recommend", OPTIONS, RecommendArgs._fields, ("file", 1))


COMMAND_LINES = [
    ["a.yaml"],
    ["a.yaml", "--format", "json", "--write"],
    ["-f", "text", "--rtt=2ms", "--bandwidth", "25Gbit/s", "a.yaml"],
    ["--parallelism", "10000", "--slots", "4", "--taskmanagers=2500", "--exchanges", "2", "a.yaml"],
    ["--record-size", "200b", "--rate", "60000", "--latency-target", "20ms", "--skew", "2", "a.yaml"],
    ["--workload", "batch", "--flink-version", "2.0", "--plan", "p.json", "--headroom", "30%", "a.yaml"],
    ["--profile", "prof.yaml", "-o", "out.yaml", "--follow-symlinks", "-q", "-v", "--no-color", "a.yaml"],
    ["--metrics", "d1", "--metrics=d2", "a.yaml"],
    ["--", "--odd-name.yaml"],
]


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=lambda argv: " ".join(argv))
def test_same_arguments_as_typer(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    typed = typer_parsed(monkeypatch, recommend_run, "run_recommend", "recommend", argv)
    assert parse_recommend_args(argv) == typed


@pytest.mark.parametrize("argv", [
    [],                                   # no file: typer says so
    ["a.yaml", "b.yaml"],                 # one file only
    ["--help"],
    ["a.yaml", "--bogus"],
    ["a.yaml", "--rtt"],                  # missing value
    ["-qv", "a.yaml"],                    # bundled short flags
    ["--write=yes", "a.yaml"],
    ["--rtt", "", "a.yaml"],
    ["-"],
])
def test_unusual_command_lines_go_to_typer(argv: list[str]) -> None:
    assert parse_recommend_args(argv) is None


def test_metrics_runs_go_to_typer() -> None:
    assert recommend_run.main_fast(["--metrics", "dump.csv", "a.yaml"]) is None


def _flinktune(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR")}
    return subprocess.run([sys.executable, "-m", "flinktune", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def test_same_output_files_and_exit_codes_as_the_typer_route(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "flink-conf.yaml"
    config.write_text(BATCH.read_text(encoding="utf-8"), encoding="utf-8")
    not_config = tmp_path / "metrics.csv"
    not_config.write_text("ts,metric,value\n1,x,2\n", encoding="utf-8")
    cases = [
        [str(config)],
        [str(config), "--format", "json", "--parallelism", "10000"],
        [str(config), "-v", "--headroom", "40%"],
        [str(config), "-o", "out.yaml"],
        [str(config), "-q", "--write"],
        [str(STREAMING), "--rate", "60000", "--record-size", "200b"],
        [str(config), "--headroom", "40"],                 # bad input: one line, exit 2
        [str(config), "--write", "-o", "out.yaml"],
        [str(not_config)],
        [str(tmp_path / "missing.yaml")],
    ]
    original = config.read_bytes()
    for args in cases:
        config.write_bytes(original)
        fast = _flinktune("recommend", *args, cwd=tmp_path)
        fast_files = {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir()) if p.is_file()}
        for name in ("out.yaml", "flink-conf.yaml.bak"):
            (tmp_path / name).unlink(missing_ok=True)
        config.write_bytes(original)
        typed = CliRunner().invoke(app, ["recommend", *args])
        typed_files = {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir()) if p.is_file()}
        for name in ("out.yaml", "flink-conf.yaml.bak"):
            (tmp_path / name).unlink(missing_ok=True)
        assert "Traceback" not in fast.stderr, fast.stderr
        expected = (typed.exit_code, typed.stdout, typed.stderr)
        assert (fast.returncode, fast.stdout, fast.stderr) == expected, args
        assert fast_files == typed_files, args


@pytest.mark.parametrize(("config", "numpy"), [(BATCH, False), (STREAMING, True)], ids=["batch", "streaming"])
def test_light_route_imports_neither_typer_nor_pydantic_nor_pyspark(tmp_path: Path, config: Path,
                                                                    numpy: bool) -> None:
    code, heavy = heavy_imports(["recommend", str(config)], tmp_path)
    assert code == 0
    assert not heavy & {"typer", "click", "pydantic", "pyspark"}, heavy
    # A streaming job's before/after numbers come from the vectorised model; a batch job's do not.
    assert ("numpy" in heavy) == numpy, heavy
