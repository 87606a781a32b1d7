"""The one-pass aggregation on small inline DataFrames: counter resets, NaN busy time, warm-up, slots."""

from __future__ import annotations

import math

import pytest

from flinktune.analysis import aggregate, load

pytestmark = pytest.mark.spark

SCHEMA = (
    "ts bigint, job_id string, job_name string, vertex_id string, task_name string, subtask_index int, "
    "tm_id string, metric string, rank int, value double"
)


def frame(spark, rows):  # type: ignore[no-untyped-def]
    full = [(ts, "j", "job", "v", "T", sub, "tm", metric, 1, float(value)) for ts, sub, metric, value in rows]
    return load.with_keys(spark.createDataFrame(full, SCHEMA))


def series(spark, rows, slots: int = 10, warmup: float = 0.0):  # type: ignore[no-untyped-def]
    df = frame(spark, rows)
    lo = min(r[0] for r in rows)
    hi = max(r[0] for r in rows)
    slot_ms = max(1, math.ceil((hi - lo + 1) / slots))
    out = aggregate.series_stats(aggregate.trim_warmup(aggregate.slot_stats(df, lo, slot_ms), warmup, None))
    return {(r["subtask_index"], r["metric"]): r for r in out.collect()}


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
