"""True processing rates from tiny hand-made dumps, through the whole Spark job (analysis.capacity,
analysis.parallelism): a fully busy vertex, an idle one, the warm-up, busy time missing, a source
with a backlog; and the numpy and Spark paths give the same figures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flinktune.analysis import AnalysisOptions, job
from flinktune.analysis.parallelism import ScalingOptions

pytestmark = pytest.mark.spark

T0 = 1_790_000_000_000
SRC, AGG = "a" * 32, "b" * 32
Series = Callable[[str, int, float], dict[str, float]]   # (vertex, subtask, t seconds) -> metric values


def _dump(tmp: Path, series: Series, seconds: int = 60, parallelism: dict[str, int] | None = None,
          step_s: int = 2, strategy: str = "HASH") -> Path:
    """A dump of Source -HASH-> KeyedAgg sampled every ``step_s`` seconds, with its plan."""
    parallelism = parallelism or {SRC: 2, AGG: 2}
    names = {SRC: "Source: Gen", AGG: "KeyedAgg"}
    rows = []
    for t in range(0, seconds + 1, step_s):
        for vid, p in parallelism.items():
            for sub in range(p):
                for metric, value in series(vid, sub, float(t)).items():
                    rows.append({"ts": T0 + t * 1000, "job_id": "j" * 32, "job_name": "job", "vertex_id": vid,
                                 "task_name": names[vid], "subtask_index": sub, "tm_id": f"tm{sub % 2}",
                                 "metric": metric, "value": float(value)})
    folder = tmp / "dump"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), folder / "metrics.parquet")
    plan = {"jid": "j" * 32, "name": "job", "nodes": [
        {"id": SRC, "parallelism": parallelism[SRC], "description": "Source: Gen"},
        {"id": AGG, "parallelism": parallelism[AGG], "description": "KeyedAgg",
         "inputs": [{"num": 0, "id": SRC, "ship_strategy": strategy, "exchange": "pipelined_bounded"}]}]}
    (folder / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    return folder


def _counters(records_per_s: float, busy: float, bp: float = 0.0) -> Callable[[float], dict[str, float]]:
    """Counters and gauges of a steady subtask: records/s in and out, shares of time."""
    def at(t: float) -> dict[str, float]:
        return {"numRecordsIn": records_per_s * t, "numRecordsOut": records_per_s * t,
                # Flink's own accumulateBusyTimeMs is not read (not monotonic): a wrong one is ignored.
                "accumulateBusyTimeMs": 7.0 * (t % 5), "accumulateBackPressuredTimeMs": 1000 * bp * t,
                "accumulateIdleTimeMs": 1000 * (1 - busy - bp) * t,
                "busyTimeMsPerSecond": 1000 * busy, "backPressuredTimeMsPerSecond": 1000 * bp,
                "idleTimeMsPerSecond": 1000 * (1 - busy - bp)}
    return at


def _run(spark, folder: Path, version: str = "1.20", **scaling) -> object:  # type: ignore[no-untyped-def]
    return _diagnose(spark, folder, version, **scaling).parallelism


def _diagnose(spark, folder: Path, version: str = "1.20", **scaling) -> object:  # type: ignore[no-untyped-def]
    from flinktune.versions import parse_version

    options = AnalysisOptions(inputs=(str(folder),), warmup="0%", scaling=ScalingOptions(**scaling),
                              version=parse_version(version))
    (diag,) = job.analyze(options, session=spark).jobs
    return diag


def test_a_fully_busy_vertex_takes_records_per_busy_second(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Source: 1,000 records/s per subtask, back-pressured 80%; KeyedAgg busy all the time at 1,000.
    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        return _counters(1000, 0.05, 0.8)(t) if vid == SRC else _counters(1000, 1.0)(t)

    advice = _run(spark, _dump(tmp_path, series), target_rates=(("Gen", 8000.0),))
    agg = advice.rate(AGG)
    assert agg.method == "counters" and agg.input_per_s == pytest.approx(2000)
    assert agg.true_rate_per_subtask == pytest.approx(1000) and agg.busy == pytest.approx(1.0)
    assert agg.busiest_input_share == pytest.approx(0.5)
    src = advice.rate(SRC)
    assert src.is_source and src.input_per_s == pytest.approx(2000)    # a source: what it emits
    # 8,000 records/s asked at 70% busy and 1,000 per busy second: 8,000 / 700 = 11.4 -> 12 subtasks;
    # with 128 key groups the busiest of 12 holds 11 (8.6% of 8,000 = 688 <= 700): 12.
    (target,) = advice.targets
    assert (target.basis, target.per_s) == ("stated", 8000.0)
    assert {c.vertex_id: c.proposed for c in advice.changes} == {AGG: 12}
    assert advice.overrides == f"{AGG}:12"


def test_an_idle_vertex_has_no_rate_to_size_by(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        return _counters(0, 0.0)(t)

    advice = _run(spark, _dump(tmp_path, series), target_rates=(("*", 100.0),))
    agg = advice.rate(AGG)
    assert agg.input_per_s == pytest.approx(0) and agg.true_rate_per_subtask is None
    assert advice.plan.vertex(AGG).verdict == "no-data" and not advice.changes


def test_the_warm_up_is_left_out(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The first 20 s KeyedAgg runs at 3,000 records/s busy 100% (a catch-up), then 500 at 50% busy:
    # 1,000 per busy second either way, but the observed input after the warm-up is 500 per subtask.
    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        head, tail = _counters(3000, 1.0)(min(t, 20.0)), _counters(500, 0.5)(max(t - 20.0, 0.0))
        return {k: (head[k] + tail[k] if not k.endswith("PerSecond") else (tail if t > 20 else head)[k])
                for k in head}

    folder = _dump(tmp_path, series)
    options = AnalysisOptions(inputs=(str(folder),), warmup="22s")
    (diag,) = job.analyze(options, session=spark).jobs
    agg = diag.parallelism.rate(AGG)
    assert agg.input_per_s == pytest.approx(1000) and agg.busy == pytest.approx(0.5)
    assert agg.true_rate_per_subtask == pytest.approx(1000)


def test_busy_time_missing_comes_back_from_idle_and_back_pressure(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A Flink 1.15 dump: no accumulated times, busyTimeMsPerSecond NaN (legacy sources do this), so
    # the gauges: busy = 1 - idle - back-pressured, and the meters with them (the same 60 s average).
    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        return {"numRecordsIn": 400 * t, "numRecordsInPerSecond": 400.0, "numRecordsOut": 400 * t,
                "numRecordsOutPerSecond": 400.0, "busyTimeMsPerSecond": float("nan"),
                "idleTimeMsPerSecond": 600.0, "backPressuredTimeMsPerSecond": 0.0}

    advice = _run(spark, _dump(tmp_path, series))
    agg = advice.rate(AGG)
    assert agg.method == "gauges" and agg.busy == pytest.approx(0.4)
    assert agg.true_rate_per_subtask == pytest.approx(1000)
    assert any("60 s busy-time averages" in n for n in advice.notes)


def test_a_source_backlog_sets_the_target(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The source emits 1,000 records/s per subtask and its backlog grows by 500/s per subtask: the job
    # receives 3,000 records/s in all (the autoscaler's inputRate + lagRate).
    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        values = _counters(1000, 0.2, 0.6)(t) if vid == SRC else _counters(1000, 0.9)(t)
        if vid == SRC:
            values["pendingRecords"] = 10_000 + 500 * t
        return values

    advice = _run(spark, _dump(tmp_path, series))
    (target,) = advice.targets
    assert target.basis == "backlog" and target.per_s == pytest.approx(3000)
    # 3,000 / (0.7 x 1,111 per busy second) = 3.9 -> 4 subtasks (4 hold 32 of 128 key groups each).
    assert {c.vertex_id: c.proposed for c in advice.changes} == {AGG: 4}


def test_without_a_stated_rate_a_heavily_blocked_source_is_only_an_estimate(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        return _counters(100, 0.01, 0.97)(t) if vid == SRC else _counters(100, 1.0)(t)

    advice = _run(spark, _dump(tmp_path, series))
    (target,) = advice.targets
    assert target.basis == "unblocked" and not target.reliable
    assert advice.withheld is not None and "97%" in advice.withheld and not advice.changes
    assert advice.plan.vertex(AGG).proposed > 2      # the rough figure is still shown


def test_numpy_and_spark_paths_agree(spark, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Irregular sampling (every 1-3 s), a skewed keyed vertex, counters and gauges: the small-dump path
    # (keyed rows grouped in numpy: slots_local, series_local) and Spark's own aggregation agree.
    import random

    rnd = random.Random(3)
    jitter = {t: rnd.randint(0, 900) for t in range(200)}

    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        share = 0.7 if (vid == AGG and sub == 0) else 0.3
        v = _counters(2000 * share, min(1.0, share * 1.3), 0.1)(t + jitter[int(t)] / 1000)
        v["numRecordsInPerSecond"] = 2000 * share + jitter[int(t)] / 10
        return v

    folder = _dump(tmp_path, series, seconds=90, step_s=1)
    figures = []
    for keyed, local in ((2_500_000, 3_000_000), (0, 3_000_000), (0, 0)):
        monkeypatch.setattr(job, "LOCAL_SLOTS_MAX_ROWS", keyed)
        monkeypatch.setattr(job, "LOCAL_FINISH_MAX_ROWS", local)
        advice = _run(spark, folder, target_rates=(("*", 5000.0),))
        figures.append([(r.vertex_key, r.method, r.input_per_s, r.busy, r.true_rate_per_subtask,
                         r.busiest_input_share) for r in advice.rates]
                       + [(v.vertex_id, v.proposed, v.verdict) for v in advice.plan.vertices])
    for other in figures[1:]:
        assert len(other) == len(figures[0])
        for a, b in zip(figures[0], other, strict=True):
            assert [x for x in a if isinstance(x, str)] == [x for x in b if isinstance(x, str)]
            assert [x for x in a if not isinstance(x, str)] == pytest.approx(
                [x for x in b if not isinstance(x, str)], rel=1e-9)
    assert figures[0][-1][2] == "hot-key"      # subtask 0 takes 70%: one key group about 40% of 5,000



def test_a_job_at_its_edge_has_no_headroom(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Nothing back-pressured, but KeyedAgg's subtasks are busy 97% of the time: not "healthy".
    from flinktune.analysis.diagnose import job_status
    from flinktune.analysis.render import no_headroom_text

    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        return _counters(500, 0.05)(t) if vid == SRC else _counters(500, 0.97)(t)

    diag = _diagnose(spark, _dump(tmp_path, series))
    assert job_status(diag) == "no-headroom" and not diag.origins
    assert "no headroom: a subtask of KeyedAgg is busy 97%" in no_headroom_text(diag)
    # The current rate at 70% busy: 1,000 / (0.7 x 515) = 2.8 -> 3 subtasks (key groups: 43 of 128).
    assert {c.vertex_id: c.proposed for c in diag.parallelism.changes} == {AGG: 3}


@pytest.mark.parametrize(("version", "named"), [("2.3", True), ("1.20", False)])
def test_a_slow_subtask_behind_a_rebalance_names_the_adaptive_partitioner_on_2_3(
        spark, tmp_path, version: str, named: bool) -> None:  # type: ignore[no-untyped-def]
    # The same records on both subtasks (a rebalance), one of them busy all the time: a slow subtask.
    def series(vid: str, sub: int, t: float) -> dict[str, float]:
        if vid == SRC:
            return _counters(500, 0.05, 0.8)(t)
        return _counters(500, 1.0 if sub == 0 else 0.2)(t)

    folder = _dump(tmp_path, series, strategy="REBALANCE")
    diag = _diagnose(spark, folder, version, target_rates=(("*", 1000.0),))
    assert diag.origins and diag.origins[0].cause == "hot_subtask"
    notes = " ".join(diag.parallelism.notes)
    assert "a slow one" in notes
    assert ("taskmanager.network.adaptive-partitioner.enabled" in notes) is named
