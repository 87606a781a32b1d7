"""InfluxDB 2.x annotated-CSV exports of Flink's InfluxdbReporter (analysis/readers/influx_csv.py).

The export is written here from the documented format (InfluxDB's annotated CSV: ``#group``,
``#datatype``, ``#default`` rows, a header ``,result,table,_start,_stop,_time,_value,_field,
_measurement,<tags>``, blocks separated by blank lines) with Flink's naming, as checked in
flink-metrics-influxdb (1.20.5 and 2.3.0 jars, MeasurementInfoProvider / MetricMapper): measurement =
logical scope joined with ``_`` + ``_`` + metric name; tags = scope variables without ``<>``;
fields ``value`` (gauge), ``count`` (counter), ``count`` + ``rate`` (meter). The same samples
written as a canonical long CSV must give the same analysis.
"""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from testkit import DUMP_COLUMNS
from typer.testing import CliRunner

from flinktune.analysis import load
from flinktune.analysis.readers import influx_csv
from flinktune.cli.app import app

from .conftest import rounded  # type: ignore[import-not-found]

JOB_ID = "5f1e2d3c4b5a69788796a5b4c3d2e1f0"
JOB_NAME = "influx-slow-sink"
SRC = ("bc764cd8ddf7a0cff126f51c16239658", "Source: Gen")
# A comma in a tag value: the export quotes it, as the canonical CSV does.
SINK = ("0a448493b4782967b150582570326227", "Sink: Writer, audit")
T0_MS = 1_795_939_200_000  # 2026-11-29T08:00:00Z
STEPS = 12
TAGS = ("host", "job_id", "job_name", "subtask_index", "task_attempt_num", "task_id", "task_name", "tm_id")


def _samples() -> list[tuple[str, str, str, tuple[str, str], int, int, float]]:
    """(kind, measurement, short metric, vertex, subtask, ts_ms, value): the sink is busy, the
    source back-pressured with full output pools."""
    out = []
    for step in range(STEPS):
        ts = T0_MS + step * 10_000
        for sub in (0, 1):
            gauges = {
                SRC: {
                    "backPressuredTimeMsPerSecond": 850.0 + sub,
                    "busyTimeMsPerSecond": 40.0,
                    "Shuffle_Netty_Output_Buffers_outPoolUsage": 1.0,
                },
                SINK: {
                    "backPressuredTimeMsPerSecond": 0.0,
                    "busyTimeMsPerSecond": 970.0 - sub,
                    "Shuffle_Netty_Input_Buffers_inPoolUsage": 0.9,
                },
            }
            for vertex, values in gauges.items():
                for name, v in values.items():
                    out.append(
                        ("gauge", "taskmanager_job_task_" + name, name.split("_")[-1], vertex, sub, ts, v)
                    )
            out.append(
                (
                    "counter",
                    "taskmanager_job_task_numRecordsOut",
                    "numRecordsOut",
                    SRC,
                    sub,
                    ts,
                    float(5_000 * step * (sub + 1)),
                )
            )
            out.append(
                (
                    "meter",
                    "taskmanager_job_task_numRecordsInPerSecond",
                    "numRecordsInPerSecond",
                    SINK,
                    sub,
                    ts,
                    500.0 + 10 * sub,
                )
            )
    return out


def _rfc3339(ts_ms: int) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _tags(vertex: tuple[str, str], sub: int) -> dict[str, str]:
    return {
        "host": "127.0.0.1",
        "job_id": JOB_ID,
        "job_name": JOB_NAME,
        "subtask_index": str(sub),
        "task_attempt_num": "0",
        "task_id": vertex[0],
        "task_name": vertex[1],
        "tm_id": f"tm-{sub}",
    }


def write_export(path: Path) -> None:
    """One annotated block per (measurement, field): a meter writes count (long) and rate (double)."""
    blocks: dict[tuple[str, str, str], list[list[str]]] = {}
    tables: dict[tuple[str, str, str, int], int] = {}
    for kind, measurement, _short, vertex, sub, ts, v in _samples():
        fields = {
            "gauge": [("value", "double", v)],
            "counter": [("count", "long", int(v))],
            "meter": [("count", "long", 30 * int(v) * ts // 1000), ("rate", "double", v)],
        }[kind]
        for field, dtype, value in fields:
            table = tables.setdefault((measurement, field, vertex[0], sub), len(tables))
            tags = _tags(vertex, sub)
            blocks.setdefault((measurement, field, dtype), []).append(
                [
                    "",
                    "",
                    str(table),
                    _rfc3339(T0_MS),
                    _rfc3339(T0_MS + STEPS * 10_000),
                    _rfc3339(ts),
                    str(value),
                    field,
                    measurement,
                    *(tags[t] for t in TAGS),
                ]
            )
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\r\n")  # Flux writes CRLF
        for i, ((_m, _f, dtype), rows) in enumerate(blocks.items()):
            if i:
                fh.write("\r\n")
            n = len(TAGS)
            w.writerow(
                ["#group", "false", "false", "true", "true", "false", "false", "true", "true", *["true"] * n]
            )
            w.writerow(
                [
                    "#datatype",
                    "string",
                    "long",
                    "dateTime:RFC3339",
                    "dateTime:RFC3339",
                    "dateTime:RFC3339",
                    dtype,
                    "string",
                    "string",
                    *["string"] * n,
                ]
            )
            w.writerow(["#default", "_result", "", "", "", "", "", "", "", *[""] * n])
            w.writerow(
                ["", "result", "table", "_start", "_stop", "_time", "_value", "_field", "_measurement", *TAGS]
            )
            w.writerows(sorted(rows, key=lambda r: int(r[2])))  # a table's rows together


def write_canonical(path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(DUMP_COLUMNS)
        for _kind, _m, short, vertex, sub, ts, v in _samples():
            row = {
                "ts": ts,
                "job_id": JOB_ID,
                "job_name": JOB_NAME,
                "vertex_id": vertex[0],
                "task_name": vertex[1],
                "subtask_index": sub,
                "tm_id": f"tm-{sub}",
                "host": "127.0.0.1",
                "metric": short,
                "value": v,
            }
            w.writerow([row[c] for c in DUMP_COLUMNS])


def write_plan(path: Path) -> None:
    node = {"parallelism": 2, "operator": "", "operator_strategy": "", "optimizer_properties": {}}
    plan = {
        "jid": JOB_ID,
        "name": JOB_NAME,
        "type": "STREAMING",
        "nodes": [
            {
                **node,
                "id": SINK[0],
                "description": SINK[1],
                "inputs": [
                    {"num": 0, "id": SRC[0], "ship_strategy": "REBALANCE", "exchange": "pipelined_bounded"}
                ],
            },
            {**node, "id": SRC[0], "description": SRC[1]},
        ],
    }
    path.write_text(json.dumps({"plan": plan}))


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    base = tmp_path_factory.mktemp("influx")
    (base / "influx").mkdir()
    (base / "canonical").mkdir()
    write_export(base / "influx" / "export.csv")
    write_canonical(base / "canonical" / "samples.csv")
    write_plan(base / "plan.json")
    return {
        "influx": base / "influx" / "export.csv",
        "canonical": base / "canonical" / "samples.csv",
        "plan": base / "plan.json",
        "base": base,
    }


def test_export_is_claimed_and_a_plain_csv_is_not(dumps) -> None:  # type: ignore[no-untyped-def]
    assert influx_csv.claims(str(dumps["influx"]))
    assert not influx_csv.claims(str(dumps["canonical"]))
    # An export without annotations (the API's dialect with annotations: []) is still claimed.
    bare = dumps["base"] / "bare.csv"
    bare.write_text(",result,table,_start,_stop,_time,_value,_field,_measurement,task_id\n")
    assert influx_csv.claims(str(bare))
    # A folder holding both: two input sets, each file read by its own reader.
    both = dumps["base"] / "both"
    both.mkdir()
    write_export(both / "a.csv")
    write_canonical(both / "b.csv")
    got = {i.fmt: [Path(p).name for p in i.paths] for i in load.resolve_inputs([str(both)])}
    assert got == {"csv": ["b.csv"], "influx_csv": ["a.csv"]}


def test_rows_follow_flinks_naming(dumps) -> None:  # type: ignore[no-untyped-def]
    table, attempts = influx_csv.read_files([str(dumps["influx"])])
    rows = table.to_pylist()
    metrics = {r["metric"] for r in rows}
    assert "flink_taskmanager_job_task_Shuffle_Netty_Output_Buffers_outPoolUsage" in metrics
    # A meter's rate is read, its count is not (one row per meter sample, values as the rate).
    meter = [r for r in rows if r["metric"].endswith("numRecordsInPerSecond")]
    assert len(meter) == STEPS * 2 and {r["value"] for r in meter} == {500.0, 510.0}
    assert {r["vertex_id"] for r in rows} == {SRC[0], SINK[0]}
    assert {r["task_name"] for r in rows} == {SRC[1], SINK[1]}
    assert min(r["ts"] for r in rows) == T0_MS and attempts.note() is None
    assert influx_csv.epoch_ms("2026-11-29T08:00:00.123456789Z") == T0_MS + 123
    assert influx_csv.epoch_ms("2026-11-29T09:00:00+01:00") == T0_MS


def _analyze(path: Path, plan: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = CliRunner().invoke(
        app, ["analyze", str(path), "--plan", str(plan), "--format", "json", "--no-progress"]
    )
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.spark
def test_same_analysis_as_the_canonical_csv(spark, dumps) -> None:  # type: ignore[no-untyped-def]
    code_influx, influx = _analyze(dumps["influx"].parent, dumps["plan"])
    code_canon, canon = _analyze(dumps["canonical"], dumps["plan"])
    assert code_influx == code_canon == 1
    (job,) = influx["jobs"]
    assert job["origins"][0]["vertex"] == SINK[1] and job["origins"][0]["cause"] == "all_busy"
    assert rounded(influx["jobs"]) == rounded(canon["jobs"])

    # The findings name their input file; all else must match.
    def unfiled(doc: dict) -> list:  # type: ignore[type-arg]
        return [rounded({k: v for k, v in f.items() if k != "file"}) for f in doc["findings"]]

    assert unfiled(influx) == unfiled(canon) and {f["code"] for f in influx["findings"]} >= {"FTA001"}


def _broken(base: Path) -> dict[str, tuple[Path, str]]:
    good = (base / "influx" / "export.csv").read_bytes().decode().split("\r\n")
    no_header = base / "no-header.csv"
    no_header.write_text("\r\n".join(good[:3] + good[4:]))  # the first block's header dropped
    short_row = base / "short-row.csv"
    short_row.write_text("\r\n".join([*good[:6], good[6].rsplit(",", 1)[0], *good[7:]]))
    return {
        "missing header": (no_header, f"{no_header}:4: expected a table header"),
        "short row": (short_row, f"{short_row}:7: row has 16 fields, its header (line 4) has 17"),
    }


@pytest.mark.spark
@pytest.mark.parametrize("case", ["missing header", "short row"])
def test_broken_export_is_one_line_exit_2(spark, dumps, case: str) -> None:  # type: ignore[no-untyped-def]
    path, expected = _broken(dumps["base"])[case]
    result = CliRunner().invoke(app, ["analyze", str(path), "--no-progress"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("flinktune: error:") and expected in lines[0], lines
    assert "Traceback" not in result.output
