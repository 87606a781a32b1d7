"""The driver's side of the analysis: the slot-table bound read from the footers (one bound per
job and vertex that really share rows), the choice to skip Spark's partial aggregation, and the
time strips picked in numpy; none of them changes a report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flinktune.analysis import AnalysisOptions, from_series, job, load, names, prescan, series_local
from flinktune.analysis.render import render_json

from .conftest import real_dump, rounded  # type: ignore[import-not-found]

T0 = 1_790_000_000_000


def _dump(tmp: Path, jobs: int, vertices: int, null_job_rows: bool = False) -> Path:
    rows = []
    for j in range(jobs):
        for v in range(vertices):
            for sub in range(3):
                for metric in ("busyTimeMsPerSecond", "outPoolUsage"):
                    for t in range(5):
                        job_id = None if null_job_rows and t == 0 else f"j{j}"
                        rows.append({"ts": T0 + t * 1000, "job_id": job_id, "vertex_id": f"j{j}-v{v}",
                                     "task_name": f"V{v}", "subtask_index": sub, "metric": metric,
                                     "value": 1.0})
    folder = tmp / "dump"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), folder / "metrics.parquet", row_group_size=97)
    return folder


def test_series_bound_counts_the_jobs_vertices_not_all_pairs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # 20 jobs of 5 vertices each: 100 (job, vertex) pairs, not 21 x 200 name combinations.
    (inp,) = load.resolve_inputs([str(_dump(tmp_path, 20, 5))])
    seen = prescan.prescan(inp)
    assert seen is not None and seen.job_key is None and seen.rows == 20 * 5 * 3 * 2 * 5
    assert seen.series_bound == 100 * 3 * 2


def test_series_bound_without_pairs_is_the_product(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A job column with nulls (the key would need the next column): the old, looser bound.
    (inp,) = load.resolve_inputs([str(_dump(tmp_path, 2, 2, null_job_rows=True))])
    seen = prescan.prescan(inp)
    assert seen is not None and seen.series_bound == (2 + 1) * (4 + 2) * 3 * 2
    assert not seen.unread  # every name in the dump is one the analysis reads


@pytest.mark.spark
def test_slot_paths_bypass_and_finish_do_not_change_the_report(spark, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dump = str(real_dump("slow-sink"))
    reports = []
    # (keyed rows aggregated in numpy, partial aggregation bypassed, numpy finish)
    for keyed, ratio, local in ((2_500_000, 1e9, 3_000_000), (0, 0.0, 3_000_000), (0, 1e9, 3_000_000),
                                (0, 1e9, 0)):
        monkeypatch.setattr(job, "LOCAL_SLOTS_MAX_ROWS", keyed)
        monkeypatch.setattr(job, "BYPASS_RATIO", ratio)
        monkeypatch.setattr(job, "LOCAL_FINISH_MAX_ROWS", local)
        doc = json.loads(render_json(job.analyze(AnalysisOptions(inputs=(dump,)), session=spark)))
        reports.append(rounded(doc))
    assert reports[0] == reports[1] == reports[2] == reports[3]
    assert spark.conf.get("spark.sql.execution.bypassPartialAggregation", "false") == "false"


def test_strips_take_the_best_name_then_the_worst_subtask() -> None:
    bp = "backPressuredTimeMsPerSecond"
    rows = [
        {"job_key": "j", "vertex_key": "v", "metric": bp, "rank": 1},  # Shuffle.Netty-named copy
        {"job_key": "j", "vertex_key": "v", "metric": bp, "rank": 1},  # another subtask
        {"job_key": "j", "vertex_key": "v", "metric": bp, "rank": 3},  # a legacy copy: ignored
        {"job_key": "j", "vertex_key": None, "metric": bp, "rank": 0},  # no vertex: ignored
        {"job_key": "j", "vertex_key": "w", "metric": "busyTimeMsPerSecond", "rank": 1},
    ]
    means = np.array([100.0, 300.0, 900.0, 999.0, 50.0, 7.0])
    strip = series_local.StripPoints(np.array([0, 1, 2, 3, 0, 4]), np.array([5, 5, 5, 5, 6, 7]), means)
    best, nslots = from_series.best_strips(rows, strip)
    assert nslots == 3
    assert best == {("j", "v", bp): {0: 300.0, 1: 50.0}, ("j", "w", "busyTimeMsPerSecond"): {2: 7.0}}
    assert from_series.best_strips(rows, series_local.StripPoints.empty()) == ({}, 0)


def test_too_many_time_slots_is_a_usage_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from flinktune.errors import UsageError

    with pytest.raises(UsageError):
        job.run_analysis(None, AnalysisOptions(inputs=(str(_dump(tmp_path, 1, 1)),), slots=1 << 20))  # type: ignore[arg-type]


def test_slot_key_widths() -> None:
    from flinktune.analysis import aggregate

    assert len(names.METRICS) * names.RANK_SPAN <= 1 << aggregate.MKEY_BITS
