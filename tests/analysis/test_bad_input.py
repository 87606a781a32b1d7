"""Bad dumps give one clear MetricsError line (what, which file) and, through the CLI, exit code 2."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from flinktune.analysis import AnalysisOptions, analyze
from flinktune.cli.app import app
from flinktune.errors import MetricsError

pytestmark = pytest.mark.spark


def _canonical_table(value_type: pa.DataType | None = None) -> pa.Table:
    values = [100.0, 900.0]
    return pa.table(
        {
            "ts": pa.array([1_000, 2_000], pa.int64()),
            "job_id": ["j", "j"],
            "vertex_id": ["v", "v"],
            "task_name": ["T", "T"],
            "subtask_index": pa.array([0, 0], pa.int32()),
            "metric": ["backPressuredTimeMsPerSecond"] * 2,
            "value": pa.array([str(v) for v in values])
            if value_type == pa.string()
            else pa.array(values, value_type),
        }
    )


def _cases(tmp: Path) -> dict[str, tuple[Path, str]]:
    cases: dict[str, tuple[Path, str]] = {}
    p = tmp / "missing-ts.parquet"
    pq.write_table(_canonical_table().drop(["ts"]), p)
    cases["missing ts"] = (p, "no timestamp column")
    p = tmp / "no-metric-columns.parquet"
    pq.write_table(pa.table({"ts": [1, 2], "task_name": ["a", "b"], "colour": ["x", "y"]}), p)
    cases["wide without metrics"] = (p, "no metric columns")
    p = tmp / "shape.parquet"
    pq.write_table(pa.table({"ts": [1, 2], "foo": [1.0, 2.0]}), p)
    cases["unknown shape"] = (p, "cannot tell the dump's shape")
    p = tmp / "text-value.parquet"
    pq.write_table(_canonical_table(pa.string()), p)
    cases["value as text"] = (p, "holds text, expected a number")
    p = tmp / "bool-ts.parquet"
    pq.write_table(_canonical_table().set_column(0, "ts", pa.array([True, False])), p)
    cases["ts of wrong type"] = (p, "column 'ts' has type boolean")
    p = tmp / "corrupt.parquet"
    p.write_bytes(b"PAR1" + b"\x00garbage" * 20)
    cases["corrupt parquet"] = (p, "not a readable parquet file")
    p = tmp / "empty.csv"
    p.write_text("")
    cases["empty csv"] = (p, "file is empty")
    p = tmp / "header-only.csv"
    p.write_text("ts,task_name,subtask_index,metric,value\n")
    cases["header only"] = (p, "no rows of metrics")
    p = tmp / "other-metrics.jsonl"
    p.write_text(
        json.dumps(
            {"ts": 1, "task_name": "T", "subtask_index": 0, "metric": "Status.JVM.CPU.Load", "value": 0.5}
        )
        + "\n"
    )
    cases["no metric we read"] = (p, "no rows of metrics")
    p = tmp / "not-json.jsonl"
    p.write_text("this is not json\n")
    cases["not json"] = (p, "not JSON lines")
    p = tmp / "empty.prom.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("# only a comment\n")
    cases["scrape without samples"] = (p, "no rows of metrics")
    p = tmp / "metrics.xlsx"
    p.write_text("x")
    cases["unknown format"] = (p, "unknown dump format")
    cases["missing file"] = (tmp / "nope.parquet", "no such file")
    return cases


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, tuple[Path, str]]:  # type: ignore[no-untyped-def]
    return _cases(tmp_path_factory.mktemp("bad"))


NAMES = [
    "missing ts",
    "wide without metrics",
    "unknown shape",
    "value as text",
    "ts of wrong type",
    "corrupt parquet",
    "empty csv",
    "header only",
    "no metric we read",
    "not json",
    "scrape without samples",
    "unknown format",
    "missing file",
]


@pytest.mark.parametrize("name", NAMES)
def test_bad_dump_is_one_metrics_error_line(spark, cases, name: str) -> None:  # type: ignore[no-untyped-def]
    path, expected = cases[name]
    with pytest.raises(MetricsError) as info:
        analyze(AnalysisOptions(inputs=(str(path),)), session=spark)
    line = info.value.one_line()
    assert expected in line and "\n" not in line
    assert str(path) in line


@pytest.mark.parametrize("name", ["corrupt parquet", "value as text", "missing file"])
def test_cli_exit_2_and_one_line_no_traceback(spark, cases, name: str) -> None:  # type: ignore[no-untyped-def]
    path, expected = cases[name]
    result = CliRunner().invoke(app, ["analyze", str(path), "--no-progress"])
    assert result.exit_code == 2, result.output
    err = result.stderr if hasattr(result, "stderr") else result.output
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("flinktune: error:") and expected in lines[0]
    assert "Traceback" not in result.output


def test_bad_plan_is_exit_2(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "m.parquet"
    pq.write_table(_canonical_table(), p)
    plan = tmp_path / "plan.json"
    plan.write_text("{not json")
    result = CliRunner().invoke(app, ["analyze", str(p), "--plan", str(plan), "--no-progress"])
    assert result.exit_code == 2 and "plan.json:1" in result.output


def test_bad_flags_are_exit_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "m.parquet"
    pq.write_table(_canonical_table(), p)
    for flags, text in (
        (["--format", "xml"], "--format"),
        (["--since", "yesterday"], "--since"),
        (["--warmup", "150%"], "--warmup"),
        (["--warmup", "20"], "--warmup: '20' has no unit; write 20s or 20%"),
        (["--conf", "novalue"], "--conf"),
    ):
        result = CliRunner().invoke(app, ["analyze", str(p), "--no-progress", *flags])
        assert result.exit_code == 2 and text in result.output, (flags, result.output)


def test_java_missing_is_one_line_exit_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os
    import subprocess
    import sys

    p = tmp_path / "m.parquet"
    pq.write_table(_canonical_table(), p)
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)   # no java on it
    proc = subprocess.run([sys.executable, "-m", "flinktune", "analyze", str(p), "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Java not found" in lines[0], proc.stderr
