"""The one-pass aggregation on small inline DataFrames: counter resets, NaN busy time, warm-up, slots."""

from __future__ import annotations

import math

import pytest

from flinktune.analysis import aggregate, load, names, series_local, slots_local

pytestmark = pytest.mark.spark

SCHEMA = (
    "ts bigint, job_id string, job_name string, vertex_id string, task_name string, subtask_index int, "
    "tm_id string, metric string, rank int, value double"
)


def frame(spark, rows):  # type: ignore[no-untyped-def]
    full = [(ts, "j", "job", "v", "T", sub, "tm", metric, 1, float(value)) for ts, sub, metric, value in rows]
    return load.with_keys(spark.createDataFrame(full, SCHEMA))


def series(spark, rows, slots: int = 10, warmup: float = 0.0):  # type: ignore[no-untyped-def]
    """Per-series stats from Spark (aggregate.series_stats), checked against the numpy twin
    (series_local.series_rows, used for small slot tables) on the same slot table."""
    df = frame(spark, rows)
    lo = min(r[0] for r in rows)
    hi = max(r[0] for r in rows)
    slot_ms = max(1, math.ceil((hi - lo + 1) / slots))
    slot_df = aggregate.slot_stats(df, lo, slot_ms)
    out = aggregate.series_stats(aggregate.trim_warmup(slot_df, warmup, None))
    got = {(r["subtask_index"], r["metric"]): r.asDict(recursive=True) for r in out.collect()}
    table = slot_df.toArrow()
    assert_same_slots(table, keyed_slot_table(df, lo, slot_ms))
    local = series_local.series_rows(
        {c: table[c].to_numpy(zero_copy_only=False) for c in aggregate.SLOT_COLUMNS}, warmup, None
    )
    assert_same_series(got, {(r["subtask_index"], r["metric"]): r for r in local})
    return got


def keyed_slot_table(df, lo: int, slot_ms: int):  # type: ignore[no-untyped-def]
    """The slot table as a small dump gets it: Spark's keyed rows, grouped in numpy."""
    keyed = aggregate.keyed_rows(df, lo, slot_ms).where("k IS NOT NULL").toArrow()
    col = {c: keyed[c].to_numpy(zero_copy_only=False) for c in keyed.column_names}
    return slots_local.slot_table(col["job_hash"], col["vertex_hash"], col["k"], col["ts"], col["v"])


def assert_same_slots(spark_table, local) -> None:  # type: ignore[no-untyped-def]
    """Spark's slot table (any order) and slots_local's (sorted), column by column, null as NaN."""
    import numpy as np

    spark = {c: spark_table[c].to_numpy(zero_copy_only=False) for c in aggregate.SLOT_COLUMNS}
    order = np.lexsort(tuple(spark[c] for c in reversed(aggregate.SLOT_COLUMNS[:5])))
    assert len(order) == len(local["slot"]) > 0
    for c in aggregate.SLOT_COLUMNS:
        kind = np.float64 if c in ("s", "mx", "v0", "v1") else np.int64
        a = np.asarray(spark[c], dtype=kind)[order]
        b = np.asarray(local[c], dtype=kind)
        if c == "s":  # sums in another order: equal to the last bits or so
            assert np.allclose(a, b, rtol=1e-12, atol=0.0, equal_nan=True), (c, a.tolist(), b.tolist())
        else:
            assert np.array_equal(a, b, equal_nan=kind is np.float64), (c, a.tolist(), b.tolist())


def assert_same_series(spark_rows, local_rows) -> None:  # type: ignore[no-untyped-def]
    assert spark_rows.keys() == local_rows.keys()
    for key, a in spark_rows.items():
        b = local_rows[key]
        for field in (
            "n",
            "mean",
            "max",
            "frac_lo",
            "frac_hi",
            "delta",
            "t_first",
            "t_last",
            "slots",
            "rate",
            "tw_mean",
            "rank",
        ):
            if a[field] is None or b[field] is None:
                assert a[field] is None and b[field] is None, (key, field, a[field], b[field])
            else:
                assert b[field] == pytest.approx(a[field], rel=1e-12, abs=1e-12), (key, field)
        strip_a = sorted((p["slot"], p["mean"]) for p in a["strip"])
        strip_b = sorted((p["slot"], p["mean"]) for p in b["strip"])
        assert [x for x, _ in strip_a] == [x for x, _ in strip_b], key
        assert [m for _, m in strip_a] == pytest.approx([m for _, m in strip_b]), key


def test_counter_rate_without_reset(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [(t * 1000, 0, "numRecordsIn", 100 * t) for t in range(21)]  # 100 records/s for 20 s
    got = series(spark, rows)[(0, "numRecordsIn")]
    assert got["rate"] == pytest.approx(100.0)


# Resets are found between slots, and inside a slot when the counter ends below the slot max; one
# that is overtaken within the same slot is missed (at most one slot of counts), hence >= 3 slots.
@pytest.mark.parametrize("slots", [3, 10, 40])
def test_counter_reset_is_not_a_negative_rate(spark, slots: int) -> None:  # type: ignore[no-untyped-def]
    # 100/s for 10 s, task restarts (counter back to 0), 100/s again for 10 s.
    rows = [(t * 1000, 0, "numRecordsIn", 100 * t) for t in range(11)]
    rows += [(t * 1000, 0, "numRecordsIn", 100 * (t - 11)) for t in range(11, 22)]
    got = series(spark, rows, slots=slots)[(0, "numRecordsIn")]
    # 1000 before the reset, 1000 after it; the sample right after the reset counts from 0.
    assert got["rate"] == pytest.approx(2000 / 21, rel=0.06)


def test_time_weighted_mean_is_not_swayed_by_a_burst_of_samples(spark) -> None:  # type: ignore[no-untyped-def]
    # busy 100 ms/s for 60 s sampled every 10 s, then 900 ms/s for 10 s sampled every second: the
    # sample mean leans to the burst, the time-weighted mean does not (the numpy twin agrees).
    rows = [(t * 1000, 0, "busyTimeMsPerSecond", 100.0) for t in range(0, 60, 10)]
    rows += [(t * 1000, 0, "busyTimeMsPerSecond", 900.0) for t in range(60, 71)]
    got = series(spark, rows, slots=7)[(0, "busyTimeMsPerSecond")]
    assert got["mean"] == pytest.approx((6 * 100 + 11 * 900) / 17)
    assert 100.0 < got["tw_mean"] < 300.0
    rows = [(t * 1000, 0, "busyTimeMsPerSecond", float(t % 7)) for t in range(50)]
    regular = series(spark, rows, slots=6)[(0, "busyTimeMsPerSecond")]
    assert regular["tw_mean"] == pytest.approx(regular["mean"])


def test_a_level_gives_its_growth_not_a_counter_rate(spark) -> None:  # type: ignore[no-untyped-def]
    # pendingRecords falls and grows again: a counter would read the fall as a reset.
    values = [500, 400, 300, 350, 450, 600, 800, 1000, 1100, 1200, 1300]
    got = series(spark, [(t * 2000, 0, "pendingRecords", v) for t, v in enumerate(values)], slots=4)
    assert got[(0, "pendingRecords")]["rate"] == pytest.approx((1300 - 500) / 20.0)


def test_nan_busy_time_is_ignored_not_averaged(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [(t * 1000, 0, "busyTimeMsPerSecond", float("nan") if t % 2 else 500.0) for t in range(10)]
    got = series(spark, rows)[(0, "busyTimeMsPerSecond")]
    assert got["mean"] == pytest.approx(500.0) and got["n"] == 5


def test_thresholds_count_samples_above_the_web_ui_levels(spark) -> None:  # type: ignore[no-untyped-def]
    # backPressuredTimeMsPerSecond: LOW above 100 ms/s, HIGH above 500 ms/s (flink-facts.md §4.5).
    values = [0, 100, 101, 500, 501, 1000]
    rows = [(i * 1000, 0, "backPressuredTimeMsPerSecond", v) for i, v in enumerate(values)]
    got = series(spark, rows)[(0, "backPressuredTimeMsPerSecond")]
    assert got["frac_lo"] == pytest.approx(4 / 6) and got["frac_hi"] == pytest.approx(2 / 6)
    assert got["max"] == 1000.0


def test_warmup_drops_the_start(spark) -> None:  # type: ignore[no-untyped-def]
    # The first 30% of the window is a start-up spike.
    rows = [(t * 1000, 0, "backPressuredTimeMsPerSecond", 1000.0 if t < 3 else 0.0) for t in range(10)]
    kept = series(spark, rows, slots=10, warmup=0.3)[(0, "backPressuredTimeMsPerSecond")]
    assert kept["max"] == 0.0
    everything = series(spark, rows, slots=10, warmup=0.0)[(0, "backPressuredTimeMsPerSecond")]
    assert everything["max"] == 1000.0


def test_strip_rides_along_per_slot(spark) -> None:  # type: ignore[no-untyped-def]
    rows = [
        (t * 1000, s, "backPressuredTimeMsPerSecond", 900.0 if t >= 5 else 0.0)
        for t in range(10)
        for s in range(2)
    ]
    got = series(spark, rows, slots=10)
    strip = sorted((p["slot"], p["mean"]) for p in got[(0, "backPressuredTimeMsPerSecond")]["strip"])
    assert [m for _, m in strip] == [0.0] * 5 + [900.0] * 5


def test_numpy_twin_matches_spark_on_a_mixed_dump(spark) -> None:  # type: ignore[no-untyped-def]
    # Two jobs with different spans (the warm-up cut is per job), counters with resets inside and
    # across slots, NaN samples (also at a slot's first timestamp), gauges without thresholds,
    # a restart that moves a subtask to another TaskManager mid-slot.
    import random

    rnd = random.Random(7)
    rows = []
    for job, span in (("j1", 120), ("j2", 80)):
        for sub in range(3):
            counter = 0.0
            for t in range(span):
                ts = 1_000_000 + t * 1000 + (5000 if job == "j2" else 0)
                counter = 0.0 if (t == 37 or t == 61) and sub != 1 else counter + rnd.uniform(50, 150)
                tm = "tmA" if t < 50 else "tmB"
                busy = float("nan") if t % 9 == 0 else rnd.uniform(0, 1000)
                for metric, value in (
                    ("numRecordsIn", counter),
                    ("busyTimeMsPerSecond", busy),
                    ("outPoolUsage", rnd.random()),
                    ("numRecordsOutPerSecond", rnd.uniform(0, 100)),
                ):
                    rows.append((ts, job, f"{job}-name", "v", "Map", sub, tm, metric, 1, float(value)))
    df = load.with_keys(spark.createDataFrame(rows, SCHEMA))
    lo = min(r[0] for r in rows)
    hi = max(r[0] for r in rows)
    for slots, warmup in ((7, 0.0), (40, 0.3), (3, 0.5)):
        slot_ms = max(1, math.ceil((hi - lo + 1) / slots))
        slot_df = aggregate.slot_stats(df, lo, slot_ms)
        out = aggregate.series_stats(aggregate.trim_warmup(slot_df, warmup, None)).collect()
        key = ("job_hash", "subtask_index", "metric")
        got = {tuple(r[k] for k in key): r.asDict(recursive=True) for r in out}
        table = slot_df.toArrow()
        assert_same_slots(table, keyed_slot_table(df, lo, slot_ms))
        local = series_local.series_rows(
            {c: table[c].to_numpy(zero_copy_only=False) for c in aggregate.SLOT_COLUMNS}, warmup, None
        )
        assert len(got) == 2 * 3 * 4
        assert_same_series(got, {tuple(r[k] for k in key): r for r in local})


def test_packed_key_keeps_negative_and_large_subtasks(spark) -> None:  # type: ignore[no-untyped-def]
    # slot_stats packs subtask, metric key and slot into one long and unpacks them after the
    # aggregation: odd subtask indexes (-1 from some exporters, 2^31 - 1) and the last slot survive.
    rows = [(1_000 + t * 100, sub, "busyTimeMsPerSecond", 10.0 * t) for sub in (-1, 0, 7, 2**31 - 1)
            for t in range(11)]
    df = frame(spark, rows)
    assert_same_slots(aggregate.slot_stats(df, 1_000, 100).toArrow(), keyed_slot_table(df, 1_000, 100))
    got = aggregate.slot_stats(df, 1_000, 100).collect()
    assert {r["subtask_index"] for r in got} == {-1, 0, 7, 2**31 - 1}
    assert {r["slot"] for r in got} == set(range(11))
    mkey = names.METRICS.index("busyTimeMsPerSecond") * names.RANK_SPAN + 1
    assert {r["mkey"] for r in got} == {mkey}
    assert all(r["n"] == 1 and r["s"] == r["v0"] == r["v1"] for r in got)


def test_numpy_slot_table_keeps_sparks_null_rules(spark) -> None:  # type: ignore[no-untyped-def]
    # A slot of NaN samples only (count 0: sum and max null; first and last value null), a slot
    # whose first and last samples are NaN between real ones, two samples at the same time with
    # the same value, and a metric the analysis does not read (a null key: dropped).
    nan = float("nan")
    rows = [(1_000, 0, "busyTimeMsPerSecond", nan), (1_050, 0, "busyTimeMsPerSecond", nan),
            (2_000, 0, "busyTimeMsPerSecond", nan), (2_010, 0, "busyTimeMsPerSecond", 300.0),
            (2_020, 0, "busyTimeMsPerSecond", 700.0), (2_090, 0, "busyTimeMsPerSecond", nan),
            (3_000, 1, "outPoolUsage", 0.5), (3_000, 1, "outPoolUsage", 0.5), (3_500, 1, "outPoolUsage", 0.9),
            (3_600, 1, "someMetricNobodyReads", 1.0)]
    df = frame(spark, rows)
    local = keyed_slot_table(df, 1_000, 1_000)
    assert_same_slots(aggregate.slot_stats(df, 1_000, 1_000).toArrow(), local)
    assert local["n"].tolist() == [0, 2, 3]
    assert math.isnan(local["s"][0]) and math.isnan(local["mx"][0]) and local["s"][1] == 1000.0
    assert math.isnan(local["v0"][1]) and math.isnan(local["v1"][1]) and local["mx"][1] == 700.0
    assert (local["v0"][2], local["v1"][2], local["t0"][2], local["t1"][2]) == (0.5, 0.9, 3_000, 3_500)
