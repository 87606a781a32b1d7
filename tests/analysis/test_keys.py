"""The aggregation's fixed-width keys: the parquet fast path (names from the dictionaries, one
name hash per row, a constant job folded away) gives the same series as the row-by-row path, for
one job and for two, with metrics the analysis does not read mixed in."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flinktune.analysis import aggregate, load, names, prescan

pytestmark = pytest.mark.spark

T0 = 1_790_000_000_000


def _rows(jobs: tuple[str, ...]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for j, job in enumerate(jobs):
        for t in range(30):
            for sub in range(2):
                for metric, value in (
                    ("backPressuredTimeMsPerSecond", 100.0 * j + t),
                    ("Shuffle.Netty.Output.Buffers.outPoolUsage", 0.5),
                    ("buffers.outPoolUsage", 0.25),  # legacy copy: same metric, lower rank
                    ("numRecordsOut", 10.0 * t),
                    ("currentInputWatermark", 1.0),  # not read by the analysis
                    ("Parse.numRecordsIn", 3.0),  # operator-scoped: not read
                    ("Source__Gen.pendingRecords", 200.0 + 2 * t),  # operator-scoped and read: a backlog
                ):
                    rows.append(
                        {
                            "ts": T0 + t * 1000,
                            "job_id": job,
                            "job_name": f"name-{job}",
                            "vertex_id": f"v{j}",
                            "task_name": "Map",
                            "subtask_index": sub,
                            "tm_id": f"tm{sub}",
                            "metric": metric,
                            "value": value,
                        }
                    )
    return rows


def _write(tmp: Path, rows: list[dict[str, object]]) -> Path:
    folder = tmp / "dump"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), folder / "metrics.parquet")
    return folder


def _series(spark, canon) -> dict[tuple[object, ...], dict[str, object]]:  # type: ignore[no-untyped-def]
    slots = aggregate.slot_stats(canon, T0, 3000)
    out = aggregate.series_stats(aggregate.trim_warmup(slots, 0.0, None)).drop("strip").collect()
    return {
        (r["job_hash"], r["vertex_hash"], r["subtask_index"], r["metric"], r["rank"]): r.asDict() for r in out
    }


READ = ("backPressuredTimeMsPerSecond", "Shuffle.Netty.Output.Buffers.outPoolUsage", "buffers.outPoolUsage",
        "numRecordsOut", "Source__Gen.pendingRecords")


@pytest.mark.parametrize(("jobs", "only_read"), [(("a1",), False), (("a1", "b2"), False), (("a1",), True)])
def test_fast_path_equals_row_by_row_path(spark, tmp_path, jobs, only_read) -> None:  # type: ignore[no-untyped-def]
    # only_read: every name in the dump is one the analysis reads (no name-length filter then).
    rows = [r for r in _rows(jobs) if not only_read or r["metric"] in READ]
    folder = _write(tmp_path, rows)
    inputs = load.resolve_inputs([str(folder)])
    raw = load.read_raw(spark, inputs)[0]
    seen = prescan.prescan(inputs[0])
    assert seen is not None and seen.job_key == (jobs[0] if len(jobs) == 1 else None)
    assert set(seen.metrics) == set(READ) and seen.unread is not only_read
    fast = _series(spark, load.load_canonical(spark, inputs, load.Filters(), keep_unread=True))
    slow = _series(spark, load.to_canonical(raw, str(folder)))
    assert fast.keys() == slow.keys() and len(fast) == len(jobs) * 2 * 5
    for key, row in fast.items():
        assert row == pytest.approx(slow[key]), key
    # The legacy copy is its own series with a worse rank; the counter became a rate of 10/s.
    ranks = {(k[3], k[4]) for k in fast}
    assert ("outPoolUsage", names.GROUP_RANK["buffers."]) in ranks
    assert ("outPoolUsage", names.GROUP_RANK["Shuffle.Netty.Output.Buffers."]) in ranks
    rates = [r["rate"] for k, r in fast.items() if k[3] == "numRecordsOut"]
    assert rates and all(r == pytest.approx(10.0) for r in rates)
    # The backlog (a level): its growth, 2 records/s, under its short name.
    growth = [r["rate"] for k, r in fast.items() if k[3] == "pendingRecords"]
    assert growth and all(r == pytest.approx(2.0) for r in growth)


def test_one_job_hashes_no_job_column_per_row(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = _write(tmp_path, _rows(("a1",)))
    inputs = load.resolve_inputs([str(folder)])
    canon = load.load_canonical(spark, inputs, load.Filters(), keep_unread=True)
    plan = aggregate.slot_stats(canon, T0, 3000)._jdf.queryExecution().executedPlan().toString()
    # The job hash is a constant; the name test after the aggregation stays above it.
    assert "xxhash64(coalesce(job_id" not in plan
    assert plan.count("xxhash64(metric") >= 1
    assert "(n#" in plan and "< 0)" in plan


def test_unread_rows_never_reach_the_series(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = _write(tmp_path, _rows(("a1",)))
    inputs = load.resolve_inputs([str(folder)])
    canon = load.load_canonical(spark, inputs, load.Filters(), keep_unread=True)
    slots = aggregate.slot_stats(canon, T0, 3000).collect()
    assert slots and all(r["mkey"] is not None for r in slots)
    # Without keep_unread the canonical contract holds row by row.
    strict = load.load_canonical(spark, inputs, load.Filters()).select("metric", "rank").distinct().collect()
    assert {r["metric"] for r in strict} <= set(names.METRICS) and all(r["rank"] is not None for r in strict)


def test_metric_key_round_trip(spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    rows = [(m, r) for m in names.METRICS for r in sorted(set(names.GROUP_RANK.values()))]
    df = spark.createDataFrame(rows, "metric string, rank int")
    key = load.metric_key(F.col("metric"), F.col("rank"))
    metric, rank = load.metric_of_key("k")
    keyed = df.select("metric", "rank", key.alias("k"))
    back = keyed.selectExpr("*", f"{metric} AS m2", f"{rank} AS r2").collect()
    assert all(r["metric"] == r["m2"] and r["rank"] == r["r2"] for r in back)


@pytest.mark.parametrize(
    ("jobs", "expected"),
    [
        ({}, ""),
        ({"job_id": ({"a"}, False)}, "a"),
        ({"job_id": ({"a", "b"}, False)}, None),
        ({"job_id": ({"a"}, True)}, None),  # some rows fall back to the job name
        ({"job_id": (set(), True), "job_name": ({"n"}, False)}, "n"),
        ({"job_id": (set(), True), "job_name": (set(), True)}, ""),
    ],
)
def test_constant_job_key(jobs, expected) -> None:  # type: ignore[no-untyped-def]
    assert prescan._constant_job_key(jobs) == expected


def test_pick_descriptors_takes_the_greatest_name() -> None:
    rows = [
        {
            "job_hash": 1,
            "vertex_hash": 2,
            "subtask_index": 0,
            "job_key": "j",
            "vertex_key": "v",
            "tm_id": "tm-a",
            "job_id": "j",
            "job_name": None,
            "vertex_id": "v",
            "task_name": "Map",
        },
        {
            "job_hash": 1,
            "vertex_hash": 2,
            "subtask_index": 0,
            "job_key": "j",
            "vertex_key": "v",
            "tm_id": "tm-b",
            "job_id": "j",
            "job_name": "name",
            "vertex_id": "v",
            "task_name": None,
        },
        {
            "job_hash": 1,
            "vertex_hash": 2,
            "subtask_index": 1,
            "job_key": "j",
            "vertex_key": "v",
            "tm_id": None,
            "job_id": "j",
            "job_name": None,
            "vertex_id": "v",
            "task_name": "Map",
        },
    ]
    got = aggregate.pick_descriptors(rows)
    assert got[(1, 2, 0)]["tm_id"] == "tm-b" and got[(1, 2, 0)]["job_name"] == "name"
    assert got[(1, 2, 0)]["task_name"] == "Map"
    assert got[(1, 2, 1)]["tm_id"] is None and got[(1, 2, 1)]["task_name"] == "Map"


def test_one_job_key_added_after_the_aggregation(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # With the dump's one job known, its hash is not a grouping key of every row: same slot table.
    folder = _write(tmp_path, _rows(("a1",)))
    inputs = load.resolve_inputs([str(folder)])
    canon = load.load_canonical(spark, inputs, load.Filters(), keep_unread=True)
    plain = aggregate.slot_stats(canon, T0, 3000)
    keyed = aggregate.slot_stats(canon, T0, 3000, job_key="a1")
    assert sorted(map(tuple, plain.collect())) == sorted(map(tuple, keyed.collect()))
    plan = keyed._jdf.queryExecution().executedPlan().toString()
    assert "HashAggregate(keys=[vertex_hash" in plan
