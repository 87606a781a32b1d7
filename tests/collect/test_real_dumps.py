"""The dumps `flinktune collect` wrote from a real Flink 1.20.5 cluster (tests/data/real-flink-1.20-collect/).

They are kept as regression fixtures: whatever changes in the collector or the analysis, these are
what a real cluster produced. Here we check they are canonical dumps and carry the truth built into
each run (ground_truth.json); the analysis is checked on them in tests/e2e_flink and by the analysis
tests that read real dumps.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from testkit import DUMP_COLUMNS

DATA = Path(__file__).resolve().parents[1] / "data" / "real-flink-1.20-collect"
SCENARIOS = ("slow-sink", "skew", "healthy")


def _settled(rows: list[dict], metric: str) -> dict[tuple[str, int], float]:
    """Median per (task, subtask) over the second half of the run."""
    picked = [r for r in rows if r["metric"] == metric]
    times = sorted({r["ts"] for r in picked})
    values: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in picked:
        if r["ts"] >= times[len(times) // 2] and not math.isnan(r["value"]):
            values[(r["task_name"], r["subtask_index"])].append(r["value"])
    return {k: statistics.median(v) for k, v in values.items()}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_real_dump_is_canonical(scenario: str) -> None:
    folder = DATA / scenario
    table = pq.read_table(folder / "metrics.parquet")
    assert table.schema.names == DUMP_COLUMNS
    rows = table.to_pylist()
    keys = [(r["ts"], r["vertex_id"], r["subtask_index"], r["metric"]) for r in rows]
    assert len(keys) == len(set(keys))
    assert not any(r["metric"].startswith(("Shuffle.", "buffers.")) for r in rows)
    plan = json.loads((folder / "plan.json").read_text())
    assert {n["id"] for n in plan["plan"]["nodes"]} == {r["vertex_id"] for r in rows}
    placement = json.loads((folder / "job.json").read_text())
    by_subtask = {
        (v["id"], s["subtask"]): s["taskmanager_id"] for v in placement["vertices"] for s in v["subtasks"]
    }
    assert all(by_subtask[(r["vertex_id"], r["subtask_index"])] == r["tm_id"] for r in rows)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_real_dump_carries_the_built_in_truth(scenario: str) -> None:
    folder = DATA / scenario
    truth = json.loads((folder / "ground_truth.json").read_text())
    rows = pq.read_table(folder / "metrics.parquet").to_pylist()
    busy = _settled(rows, "busyTimeMsPerSecond")
    backpressured = _settled(rows, "backPressuredTimeMsPerSecond")
    tasks = {t for t, _ in busy}
    for task in tasks:
        worst = max(v for (t, _), v in backpressured.items() if t == task)
        # Not OK in the web UI's terms (> 100 ms/s, flink-facts.md §4.5) exactly for the vertices built to be
        # back-pressured.
        assert (worst > 100) == (task in truth["backpressured_vertices"]), (task, worst)
    origin = truth["origin"]
    if origin is None:
        assert max(busy.values()) < 200
        return
    origin_busy = {i: v for (t, i), v in busy.items() if t == origin}
    if truth["cause"] == "hot_subtask":
        hot = truth["hot_subtask"]
        assert origin_busy[hot] > 900
        assert all(v < 100 for i, v in origin_busy.items() if i != hot)
    else:
        assert all(v > 900 for v in origin_busy.values())
