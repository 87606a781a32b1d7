"""Each vertex's figures per time window (analysis/windows.py), for ``flinktune compare``."""

from __future__ import annotations

import numpy as np
import pytest

from flinktune.analysis import AnalysisOptions, job, names, windows

from .conftest import real_dump  # type: ignore[import-not-found]


def _key(metric: str, rank: int = 1) -> int:
    return names.METRICS.index(metric) * names.RANK_SPAN + rank


def _slots(
    rows: list[tuple[int, str, int, int, float, float, float, float, int, int]],
) -> dict[str, np.ndarray]:
    """rows: (subtask, metric, rank, slot, mean, max, first, last, t0, t1), one sample per slot row
    unless ``mean`` is NaN (no sample)."""
    cols: dict[str, list[object]] = {
        c: []
        for c in (
            "job_hash",
            "vertex_hash",
            "subtask_index",
            "mkey",
            "slot",
            "n",
            "s",
            "mx",
            "t0",
            "t1",
            "v0",
            "v1",
        )
    }
    for sub, metric, rank, slot, mean, mx, v0, v1, t0, t1 in rows:
        for c, v in (
            ("job_hash", 1),
            ("vertex_hash", 2),
            ("subtask_index", sub),
            ("mkey", _key(metric, rank)),
            ("slot", slot),
            ("n", 0 if np.isnan(mean) else 1),
            ("s", mean),
            ("mx", mx),
            ("t0", t0),
            ("t1", t1),
            ("v0", v0),
            ("v1", v1),
        ):
            cols[c].append(v)
    return {c: np.asarray(v) for c, v in cols.items()}


DESC = {(1, 2, i): {"job_key": "job", "vertex_key": "v"} for i in range(2)}


def test_counters_become_rates_per_window_with_resets_and_meters() -> None:
    rows = []
    # Subtask 0: counter 0, 100, 200, reset to 50 (a restart), 150; one sample per 1 s slot.
    for slot, value in enumerate((0.0, 100.0, 200.0, 50.0, 150.0)):
        rows.append((0, "numRecordsIn", 1, slot, value, value, value, value, 1000 * slot, 1000 * slot))
    # Subtask 1 has no counter: its 60 s meter stands in.
    for slot in range(5):
        rows.append((1, "numRecordsInPerSecond", 1, slot, 30.0, 30.0, 30.0, 30.0, 1000 * slot, 1000 * slot))
    # Busy time under two names: the better-ranked (lower) one wins.
    for slot in range(5):
        rows.append((0, "busyTimeMsPerSecond", 1, slot, 400.0, 400.0, 400.0, 400.0, 1000 * slot, 1000 * slot))
        rows.append((0, "busyTimeMsPerSecond", 2, slot, 900.0, 900.0, 900.0, 900.0, 1000 * slot, 1000 * slot))
    built = windows.build(_slots(rows), DESC, 0, 1000, 0.0, 0)
    vw = built["job"].vertices["v"]
    # Slot 0 has no earlier sample: no rate. Then 100/s, 100/s, a reset counts the new value (50), 100/s.
    np.testing.assert_allclose(vw.records_in[0], [np.nan, 100.0, 100.0, 50.0, 100.0])
    np.testing.assert_allclose(vw.records_in[1], [30.0] * 5)
    # The vertex rate: the sum, scaled up for a subtask without a value (slot 0: only the meter).
    np.testing.assert_allclose(vw.values["records_in_per_s"], [60.0, 130.0, 130.0, 80.0, 130.0])
    np.testing.assert_allclose(vw.values["busy_max"], [0.4] * 5)


def test_the_warm_up_is_left_out_and_in_pools_count_remote_subtasks_only() -> None:
    rows = []
    for slot in range(10):
        t = 1000 * slot
        rows.append((0, "inPoolUsage", 1, slot, 0.0, 0.0, 0.0, 0.0, t, t))  # only local channels
        rows.append((1, "inPoolUsage", 1, slot, 0.8, 0.8, 0.8, 0.8, t, t))
        rows.append((0, "backPressuredTimeMsPerSecond", 1, slot, 1000.0 if slot < 3 else 0.0, 0, 0, 0, t, t))
    built = windows.build(_slots(rows), DESC, 0, 1000, 0.3, None)["job"]
    assert built.windows == 8 and built.start_ms == 2000 and built.warmup_end_ms == 2700
    vw = built.vertices["v"]
    np.testing.assert_allclose(vw.values["in_pool_mean"], [0.8] * 8)
    np.testing.assert_allclose(vw.values["backpressured_max"], [1.0] + [0.0] * 7)
    # The diagnosis' view of which subtasks have remote input wins when given.
    told = windows.build(_slots(rows), DESC, 0, 1000, 0.3, None, remote={("job", "v", 0), ("job", "v", 1)})
    np.testing.assert_allclose(told["job"].vertices["v"].values["in_pool_mean"], [0.4] * 8)


@pytest.mark.spark
def test_windows_of_a_real_dump_agree_with_the_diagnosis_on_every_path(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dump = str(real_dump("slow-sink"))
    seen = []
    for keyed, local in ((2_500_000, 3_000_000), (0, 3_000_000), (0, 0)):
        monkeypatch.setattr(job, "LOCAL_SLOTS_MAX_ROWS", keyed)
        monkeypatch.setattr(job, "LOCAL_FINISH_MAX_ROWS", local)
        result = job.analyze(AnalysisOptions(inputs=(dump,), windows=True), session=spark)
        (diag,) = result.jobs
        jw = result.windows[diag.job_key]
        assert jw.windows >= 30 and set(jw.vertices) == {v.vertex_key for v in diag.vertices}
        for v in diag.vertices:
            vw = jw.vertices[v.vertex_key]
            assert vw.subtasks == tuple(range(v.parallelism))
            # Time means of the windows against the whole-run figures: equal up to the sampling.
            if v.busy_mean is not None:
                assert np.nanmean(vw.values["busy_mean"]) == pytest.approx(v.busy_mean, abs=0.02)
            if v.records_in_per_s:
                assert np.nanmean(vw.values["records_in_per_s"]) == pytest.approx(
                    v.records_in_per_s, rel=0.05
                )
            assert np.nanmean(vw.values["backpressured_max"]) == pytest.approx(v.bp_ratio_max, abs=0.02)
        seen.append({k: {f: np.round(a, 6) for f, a in vw.values.items()} for k, vw in jw.vertices.items()})
    for other in seen[1:]:
        for key, figures in seen[0].items():
            for name, values in figures.items():
                np.testing.assert_allclose(other[key][name], values, err_msg=f"{key} {name}")
