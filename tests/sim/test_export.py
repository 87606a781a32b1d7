"""``export_dump``: the canonical long schema of DESIGN.md, Flink's metric names, a REST-shaped plan."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from simhelpers import run, sample

from flinktune.sim import export_dump

COLUMNS = [("ts", "int64"), ("job_id", "string"), ("job_name", "string"), ("vertex_id", "string"),
           ("task_name", "string"), ("subtask_index", "int32"), ("tm_id", "string"), ("host", "string"),
           ("metric", "string"), ("value", "double")]
# short canonical names as Flink registers them (flink-facts.md §4.2; NettyShuffleMetricFactory,
# TaskIOMetricGroup, InputChannelMetrics @ release-1.20)
EXPECTED_METRICS = {"outPoolUsage", "inPoolUsage", "inputFloatingBuffersUsage", "inputExclusiveBuffersUsage",
                    "backPressuredTimeMsPerSecond", "busyTimeMsPerSecond", "idleTimeMsPerSecond",
                    "numRecordsIn", "numRecordsOut", "numBytesOut", "numBytesInLocal", "numBytesInRemote",
                    "numBuffersOut", "numBuffersInLocal", "numBuffersInRemote"}


def test_dump_schema_names_and_plan(tmp_path: Path) -> None:
    result = run(sample("slow-sink", duration=3.0, warmup=1.0, sample_interval=0.5))
    path = export_dump(result, tmp_path / "dump")
    assert path == tmp_path / "dump" / "metrics.parquet"
    table = pq.read_table(path)
    assert [(f.name, str(f.type)) for f in table.schema] == COLUMNS
    rows = table.to_pylist()
    metrics = {r["metric"] for r in rows}
    assert metrics >= EXPECTED_METRICS
    assert len({r["ts"] for r in rows}) == 6          # one sample every 0.5 s over 3 s
    assert all(re.fullmatch(r"[0-9a-f]{32}", r["vertex_id"]) for r in rows)
    assert {r["task_name"] for r in rows} == {"Source: Gen", "KeyedAgg", "Sink: Writer"}
    # counters are cumulative: never decrease per subtask
    for metric in ("numRecordsIn", "numBytesOut", "numBuffersInRemote"):
        series: dict[tuple[str, int], list[float]] = {}
        for r in sorted(rows, key=lambda r: r["ts"]):
            if r["metric"] == metric:
                series.setdefault((r["task_name"], r["subtask_index"]), []).append(r["value"])
        assert series and all(np.all(np.diff(v) >= 0) for v in series.values())
    # idle + busy + backpressured = 1000 ms per second (Flink docs, back_pressure page)
    by_key: dict[tuple[int, str, int], float] = {}
    for r in rows:
        if r["metric"] in ("idleTimeMsPerSecond", "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond"):
            key = (r["ts"], r["task_name"], r["subtask_index"])
            by_key[key] = by_key.get(key, 0.0) + r["value"]
    assert all(abs(total - 1000) < 1e-6 for total in by_key.values())

    plan = json.loads((tmp_path / "dump" / "plan.json").read_text())["plan"]
    assert plan["jid"] == result.job_id and plan["type"] == "STREAMING"
    nodes = {n["id"]: n for n in plan["nodes"]}
    assert set(nodes) == {r["vertex_id"] for r in rows}
    sink = next(n for n in plan["nodes"] if n["description"].startswith("Sink"))
    assert sink["inputs"][0]["ship_strategy"] == "REBALANCE"
    assert sink["inputs"][0]["exchange"] == "pipelined_bounded"
    agg = nodes[sink["inputs"][0]["id"]]
    assert agg["inputs"][0]["ship_strategy"] == "HASH"
    assert "inputs" not in nodes[agg["inputs"][0]["id"]]
    truth = json.loads((tmp_path / "dump" / "ground_truth.json").read_text())
    assert truth["bottleneck_vertex"] == "Sink: Writer"
    placement = json.loads((tmp_path / "dump" / "job-vertices.json").read_text())
    tm_of = {(v["name"], s["subtask"]): s["taskmanager_id"]
             for v in placement["vertices"] for s in v["subtasks"]}
    assert all(tm_of[(r["task_name"], r["subtask_index"])] == r["tm_id"] for r in rows)


def test_same_seed_same_dump(tmp_path: Path) -> None:
    sc = sample("hot-subtask", duration=2.0, warmup=0.5, sample_interval=0.5)
    a = pq.read_table(export_dump(run(sc, seed=11), tmp_path / "a"))
    b = pq.read_table(export_dump(run(sc, seed=11), tmp_path / "b"))
    c = pq.read_table(export_dump(run(sc, seed=12), tmp_path / "c"))
    assert a.equals(b)
    assert not a.equals(c)
