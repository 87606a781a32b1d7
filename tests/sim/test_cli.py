"""``flinktune simulate``: output, sweep, export, and one-line errors with exit code 2."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from simhelpers import SCENARIOS
from typer.testing import CliRunner

from flinktune.cli.app import app

runner = CliRunner()


def _short(tmp_path: Path, name: str, duration: str = "2s") -> Path:
    text = (SCENARIOS / f"{name}.yaml").read_text()
    lines = []
    for line in text.splitlines():
        if line.startswith("duration:"):
            line = f"duration: {duration}"
        elif line.startswith("warmup:"):
            line = "warmup: 0.5s"
        elif line.startswith("sample_interval:"):
            line = "sample_interval: 0.25s"
        lines.append(line)
    path = tmp_path / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_simulate_prints_vertices_channels_and_charts(tmp_path: Path) -> None:
    result = runner.invoke(app, ["simulate", str(_short(tmp_path, "slow-sink")), "--seed", "3"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "vertices (steady state" in out and "channels (steady state" in out
    assert "Sink: Writer" in out and "lat p99" in out
    assert "throughput over time" in out and "buffer pool usage over time" in out


def test_simulate_export_and_json(tmp_path: Path) -> None:
    scenario = _short(tmp_path, "network-bound")
    result = runner.invoke(app, ["simulate", str(scenario), "--export", str(tmp_path / "out"),
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"scenario": "network-bound"' in result.stdout
    table = pq.read_table(tmp_path / "out" / "metrics.parquet")
    assert table.num_rows > 0
    assert (tmp_path / "out" / "plan.json").is_file()


def test_sweep_buffer_timeout(tmp_path: Path) -> None:
    scenario = _short(tmp_path, "healthy", duration="1.5s")
    result = runner.invoke(app, ["simulate", str(scenario), "--sweep", "buffer-timeout=1ms,100ms"])
    assert result.exit_code == 0, result.output
    assert "sweep of buffer-timeout" in result.stdout
    assert "1ms" in result.stdout and "100ms" in result.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nduration: 5s\njob:\n  vertices:\n    - {name: a, parallelism: 1}\n")
    result = runner.invoke(app, ["simulate", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and str(bad) in result.stderr
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["simulate", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2 and "cannot read" in result.stderr
    result = runner.invoke(app, ["simulate", str(_short(tmp_path, "healthy")), "--sweep", "colour=red"])
    assert result.exit_code == 2 and "--sweep" in result.stderr
    result = runner.invoke(app, ["simulate", str(_short(tmp_path, "healthy")), "--sweep",
                                 "buffers-per-channel=two"])
    assert result.exit_code == 2 and "not an integer" in result.stderr
