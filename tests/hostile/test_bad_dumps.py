"""Bad metric dumps through ``flinktune analyze``: each gets a correct analysis or exit 2 with one
clear line, never a traceback.

The CLI runs in-process (typer's runner) on one shared local Spark session; the temp-file test runs
the real command in a child process. The base dump (dumps.py) has a busy Sink back-pressuring its
Source, so "correct" means: the Sink is still named as the origin, and the numbers are finite.
A dump of tens of millions of rows belongs to benchmarks/bench_resources.py, not here.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dumps as D
import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def spark() -> Iterator[object]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed: Spark cannot start, so analyze cannot be exercised")
    from flinktune.spark.session import build_session

    # The CLI's own build_session() then finds this session (getOrCreate) instead of starting a JVM.
    yield build_session("local[2]", {"spark.sql.shuffle.partitions": "2"})


def analyze(*args: str) -> tuple[int, str, dict[str, Any] | None]:
    result = CliRunner().invoke(app, ["analyze", "--no-progress", "--format", "json", *args])
    assert not (result.exception and not isinstance(result.exception, SystemExit)), repr(result.exception)
    out = result.output
    assert "Traceback" not in out
    doc = json.loads(out[out.index("{"):]) if result.exit_code in (0, 1) else None
    return result.exit_code, out, doc


def refused(*args: str) -> str:
    """Exit 2 and exactly one 'flinktune: error:' line naming the file; returns that line."""
    code, out, _ = analyze(*args)
    assert code == 2, out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("flinktune: error: "), out
    return lines[0]


def origins(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(o["vertex"], o["cause"]) for job in doc["jobs"] for o in job["origins"]]


def vertex(doc: dict[str, Any], name: str, job: int = 0) -> dict[str, Any]:
    return next(v for v in doc["jobs"][job]["vertices"] if v["name"] == name)


def no_bad_numbers(doc: dict[str, Any]) -> None:
    def walk(x: object) -> None:
        if isinstance(x, float):
            assert math.isfinite(x), doc
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)


@pytest.fixture(scope="module")
def good(spark: object, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = D.write_parquet(tmp_path_factory.mktemp("good") / "m.parquet", D.base_rows())
    code, out, doc = analyze(str(path))
    assert code == 1 and doc is not None, out
    assert origins(doc) == [("Sink", "all_busy")]
    return doc


# --- columns and types -----------------------------------------------------------------------


@pytest.mark.parametrize(("drop", "fragment"), [
    (("value",), "metric columns"), (("metric",), "metric columns"), (("ts",), "timestamp"),
    (("metric", "value", "task_name", "vertex_id"), "shape"),
])
def test_missing_columns(spark: object, tmp_path: Path, drop: tuple[str, ...], fragment: str) -> None:
    path = D.write_parquet(tmp_path / "m.parquet", D.base_rows(), drop=drop)
    assert fragment in refused(str(path))


def test_wrong_types(spark: object, tmp_path: Path) -> None:
    import pyarrow as pa

    rows = D.base_rows()
    text_values = D.write_parquet(tmp_path / "a.parquet", [{**r, "value": str(r["value"])} for r in rows],
                                  types={"value": pa.string()})
    assert "expected a number" in refused(str(text_values))
    bools = D.write_parquet(tmp_path / "b.parquet", [{**r, "value": True} for r in rows],
                            types={"value": pa.bool_()})
    assert "expected a number" in refused(str(bools))
    bad_ts = D.write_parquet(tmp_path / "c.parquet", [{**r, "ts": "yesterday"} for r in rows],
                             types={"ts": pa.string()})
    assert "no rows" in refused(str(bad_ts))
    nested = D.write_parquet(tmp_path / "d.parquet", [{**r, "ts": [1]} for r in rows],
                             types={"ts": pa.list_(pa.int64())})
    assert "ts" in refused(str(nested))


def test_numeric_columns_of_other_widths_still_analyse(spark: object, tmp_path: Path,
                                                       good: dict[str, Any]) -> None:
    import pyarrow as pa

    rows = [{**r, "subtask_index": float(r["subtask_index"])} for r in D.base_rows()]
    path = D.write_parquet(tmp_path / "m.parquet", rows,
                           types={"subtask_index": pa.float64(), "value": pa.float32()})
    code, out, doc = analyze(str(path))
    assert code == 1 and doc is not None, out
    assert origins(doc) == origins(good)


def test_csv_with_text_in_the_value_column_drops_those_rows(spark: object, tmp_path: Path,
                                                            good: dict[str, Any]) -> None:
    rows = D.base_rows()
    path = D.write_csv(tmp_path / "m.csv", rows)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"{D.T0},j1,job,v-sink,Sink,0,tm-0,h,busyTimeMsPerSecond,not-a-number\n")
        fh.write("garbage line without enough fields\n")
    code, out, doc = analyze(str(path))
    assert code == 1 and doc is not None, out
    assert origins(doc) == origins(good)


# --- values ----------------------------------------------------------------------------------


def test_nan_and_infinity_are_ignored(spark: object, tmp_path: Path, good: dict[str, Any]) -> None:
    # Three of every four timestamps carry NaN, +inf or -inf for every metric.
    rows = [{**r, "value": [math.nan, math.inf, -math.inf, r["value"]][((r["ts"] - D.T0) // 1000) % 4]}
            for r in D.base_rows()]
    code, out, doc = analyze(str(D.write_parquet(tmp_path / "m.parquet", rows)))
    assert code == 1 and doc is not None, out
    assert origins(doc) == [("Sink", "all_busy")]
    assert "NaN" not in out and "Infinity" not in out
    no_bad_numbers(doc)
    assert vertex(doc, "Sink")["busy_mean"] == pytest.approx(vertex(good, "Sink")["busy_mean"], rel=0.05)


def test_negative_gauges_are_not_measurements(spark: object, tmp_path: Path, good: dict[str, Any]) -> None:
    rows = D.base_rows()
    some = [{**r, "value": -500.0} if (r["ts"] - D.T0) // 1000 % 3 == 0 else r for r in rows]
    code, out, doc = analyze(str(D.write_parquet(tmp_path / "some.parquet", some)))
    assert code == 1 and doc is not None, out
    assert origins(doc) == [("Sink", "all_busy")]
    for v in doc["jobs"][0]["vertices"]:
        for key in ("busy_mean", "busy_max", "out_pool_usage", "in_pool_usage", "records_in_per_s"):
            assert v[key] is None or v[key] >= 0, (v["name"], key, v[key])
    # Only negative values: nothing to analyse, said as such (not "healthy, no back pressure").
    every = [{**r, "value": -abs(r["value"]) - 1} for r in rows]
    assert "no rows" in refused(str(D.write_parquet(tmp_path / "all.parquet", every)))


def test_counters_going_backwards_are_restarts_not_negative_rates(spark: object, tmp_path: Path,
                                                                  good: dict[str, Any]) -> None:
    # numRecordsIn/Out restart from 0 every 7 samples (task restarts).
    rows = [{**r, "value": (r["value"] % 7000) if r["metric"].startswith("numRecords") else r["value"]}
            for r in D.base_rows()]
    code, out, doc = analyze(str(D.write_parquet(tmp_path / "m.parquet", rows)))
    assert code == 1 and doc is not None, out
    assert origins(doc) == origins(good)
    rate, expected = vertex(doc, "Sink")["records_in_per_s"], vertex(good, "Sink")["records_in_per_s"]
    assert expected is not None and expected > 0
    assert rate is not None and rate == pytest.approx(expected, rel=0.2)


def test_duplicate_samples_do_not_change_the_analysis(spark: object, tmp_path: Path,
                                                      good: dict[str, Any]) -> None:
    rows = D.base_rows()
    code, out, doc = analyze(str(D.write_parquet(tmp_path / "m.parquet", rows + rows)))
    assert code == 1 and doc is not None, out
    assert origins(doc) == origins(good)
    for name in ("Source", "Sink"):
        for key in ("busy_mean", "out_pool_usage", "in_pool_usage", "records_in_per_s", "records_out_per_s"):
            got, expected = vertex(doc, name)[key], vertex(good, name)[key]
            assert (got is None and expected is None) or got == pytest.approx(expected, rel=1e-6), (name, key)


def test_a_single_sample_is_analysed_and_says_so(spark: object, tmp_path: Path) -> None:
    code, out, doc = analyze(str(D.write_parquet(tmp_path / "m.parquet", D.base_rows(samples=1))))
    assert code in (0, 1) and doc is not None, out
    job = doc["jobs"][0]
    assert job["single_sample"] is True
    assert any("one sample" in note for note in job["notes"])
    no_bad_numbers(doc)


# --- files -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["m.parquet", "m.csv", "m.jsonl", "m.prom"])
def test_empty_file(spark: object, tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b"")
    line = refused(str(tmp_path / name))
    assert str(tmp_path / name) in line


def test_parquet_without_rows(spark: object, tmp_path: Path) -> None:
    assert "no rows" in refused(str(D.write_parquet(tmp_path / "m.parquet", [])))


def test_truncated_and_corrupt_parquet(spark: object, tmp_path: Path) -> None:
    data = D.write_parquet(tmp_path / "good.parquet", D.base_rows()).read_bytes()
    cases = {
        "half.parquet": data[: len(data) // 2],
        "no-footer.parquet": data[:-8],
        "magic-only.parquet": b"PAR1",
        "garbage.parquet": b"this is not parquet\n" * 10,
        "bad-footer.parquet": data[:4] + bytes(range(256)) * 4 + data[-8:],
    }
    for name, payload in cases.items():
        (tmp_path / name).write_bytes(payload)
        line = refused(str(tmp_path / name))
        assert name in line and "parquet" in line, line
    # Footer intact, data pages overwritten: only Spark finds out, and still says it in one line.
    middle = bytearray(data)
    for i in range(8, len(data) // 2):
        middle[i] = 0xFF
    (tmp_path / "pages.parquet").write_bytes(bytes(middle))
    code, out, _ = analyze(str(tmp_path / "pages.parquet"))
    assert code == 2 and len(out.strip().splitlines()) == 1 and "pages.parquet" in out, out


def test_broken_json_lines_and_prometheus_text(spark: object, tmp_path: Path) -> None:
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text('[1, 2]\n{"ts": 1}\n', encoding="utf-8")
    assert "one object per line" in refused(str(jsonl))
    prom = tmp_path / "m.prom"
    prom.write_text('garbage {{{\nflink_taskmanager_job_task_busyTimeMsPerSecond{task_name="a"} nan-ish\n',
                    encoding="utf-8")
    assert "no rows" in refused(str(prom))


# --- jobs and names --------------------------------------------------------------------------


def test_mixed_jobs_are_analysed_separately(spark: object, tmp_path: Path) -> None:
    rows = D.base_rows() + D.base_rows(job_id="j2", job_name="other", source="Kafka", sink="Jdbc")
    path = D.write_parquet(tmp_path / "m.parquet", rows)
    code, out, doc = analyze(str(path))
    assert code == 1 and doc is not None, out
    assert sorted(origins(doc)) == [("Jdbc", "all_busy"), ("Sink", "all_busy")]
    assert sorted(j["job_id"] for j in doc["jobs"]) == ["j1", "j2"]
    code, out, doc = analyze("--job", "j2", str(path))
    assert code == 1 and doc is not None and origins(doc) == [("Jdbc", "all_busy")], out


NAMES = [
    "Source: Kafka \u2192 \U0001F680 \u05e9\u05dc\u05d5\u05dd \"quoted\", comma",   # emoji, RTL, quotes
    "Sink: " + "\u00fcber-long-" * 1000,                                             # ~11k characters
]


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_unicode_and_very_long_task_names_survive(spark: object, tmp_path: Path, fmt: str) -> None:
    rows = D.base_rows(source=NAMES[0], sink=NAMES[1])
    writer = {"parquet": D.write_parquet, "csv": D.write_csv, "jsonl": D.write_jsonl}[fmt]
    path = writer(tmp_path / f"m.{fmt}", rows)
    code, out, doc = analyze(str(path))
    assert code == 1 and doc is not None, out
    assert origins(doc) == [(NAMES[1], "all_busy")]
    assert {v["name"] for v in doc["jobs"][0]["vertices"]} == set(NAMES)
    # The text report copes too (it truncates for the terminal; it must not crash).
    result = CliRunner().invoke(app, ["analyze", "--no-progress", str(path)])
    assert result.exit_code == 1 and "Traceback" not in result.output


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_line_breaks_in_task_names_survive_in_typed_formats(spark: object, tmp_path: Path, fmt: str) -> None:
    # (CSV read by Spark splits records at line breaks even inside quotes; docs/security.md says so.)
    names = ("Source\nsecond line", "Sink\r\nwith CRLF")
    writer = {"parquet": D.write_parquet, "jsonl": D.write_jsonl}[fmt]
    path = writer(tmp_path / f"m.{fmt}", D.base_rows(source=names[0], sink=names[1]))
    code, out, doc = analyze(str(path))
    assert code == 1 and doc is not None, out
    assert origins(doc) == [(names[1], "all_busy")]


def test_null_keys_give_a_clear_error(spark: object, tmp_path: Path) -> None:
    rows = [{**r, "task_name": None, "vertex_id": None, "subtask_index": None} for r in D.base_rows()]
    assert "no rows" in refused(str(D.write_parquet(tmp_path / "m.parquet", rows)))


# --- Spark's temp files ----------------------------------------------------------------------


def test_spark_temp_files_are_cleaned_up_after_analyze(spark: object, tmp_path: Path) -> None:
    """A real ``flinktune analyze`` process: Spark's local dirs (block manager, shuffle, python
    workers) and the JVM/Python temp dirs are pointed at fresh folders, which must be empty after."""
    dump = D.write_parquet(tmp_path / "m.parquet", D.base_rows())
    local, jtmp, ptmp = tmp_path / "spark-local", tmp_path / "java-tmp", tmp_path / "py-tmp"
    for d in (local, jtmp, ptmp):
        d.mkdir()
    env = {**os.environ, "TMPDIR": str(ptmp), "JAVA_TOOL_OPTIONS": f"-Djava.io.tmpdir={jtmp}",
           "SPARK_LOCAL_DIRS": str(local)}
    command = [sys.executable, "-m", "flinktune", "analyze", "--no-progress",
               "--conf", f"spark.local.dir={local}", str(dump)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Sink" in proc.stdout
    left = {d.name: sorted(str(p.relative_to(d)) for p in d.rglob("*")) for d in (local, jtmp, ptmp)}
    # hsperfdata is the JVM's own perf-counter file, removed at JVM exit too.
    assert left == {"spark-local": [], "java-tmp": [], "py-tmp": []}, left
