"""Diagnose a small dump held in memory: canonical samples in, each job's diagnosis out, no Spark.

The same steps as job.run_analysis's path for small dumps (aggregate.keyed_rows, then
slots_local.slot_table and series_local.summarise, then from_series), with the keys built in
Python: the job and vertex keys become small integers instead of xxhash64 values (they only have
to be distinct), and the names of each subtask are read from the samples themselves. The analysis
rules' metrics examples (example_metrics.py) run through it, so an example tests the diagnosis.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from flinktune.analysis import aggregate, from_series, names, series_local, slots_local
from flinktune.analysis.parallelism import ScalingOptions
from flinktune.analysis.plan import JobPlan
from flinktune.errors import MetricsError
from flinktune.situation.environment import Environment
from flinktune.versions import FlinkVersion

DEFAULT_SLOTS = 40   # job.DEFAULT_SLOTS


class Sample(NamedTuple):
    """One row of the canonical long format (DESIGN.md, docs/metrics-schema.md)."""

    ts: int
    job_id: str | None
    job_name: str | None
    vertex_id: str | None
    task_name: str | None
    subtask_index: int
    tm_id: str | None
    metric: str
    value: float | None


def diagnose_samples(
    samples: Iterable[Sample],
    plan: JobPlan | None,
    env: Environment,
    scaling: ScalingOptions,
    version: FlinkVersion,
    warmup_fraction: float = 0.0,
    warmup_ms: int | None = None,
    slots: int = DEFAULT_SLOTS,
) -> from_series.Diagnosed:
    """Each job's diagnosis from canonical samples (metric names as names.METRICS spells them;
    others are not read)."""
    index = {metric: i for i, metric in enumerate(names.METRICS)}
    job_hash: dict[str, int] = {}
    vertex_hash: dict[str, int] = {}
    rows = []
    desc: dict[tuple[int, int, int], dict[str, object]] = {}
    for s in samples:
        vertex_key = s.vertex_id or s.task_name
        if vertex_key is None or s.metric not in index:
            continue
        job_key = s.job_id or s.job_name or ""
        j = job_hash.setdefault(job_key, len(job_hash))
        v = vertex_hash.setdefault(vertex_key, len(vertex_hash))
        rows.append((j, v, s.subtask_index, index[s.metric] * names.RANK_SPAN, s.ts,
                     math.nan if s.value is None else float(s.value)))
        # aggregate.pick_descriptors: the greatest name seen (the samples here name each subtask once).
        desc.setdefault((j, v, s.subtask_index), {
            "job_key": job_key, "vertex_key": vertex_key, "job_id": s.job_id, "job_name": s.job_name,
            "vertex_id": s.vertex_id, "task_name": s.task_name, "tm_id": s.tm_id})
    if not rows:
        raise MetricsError("no samples of metrics flinktune reads")
    jobs, vertices, subtasks, mkeys, ts, values = (np.asarray(c) for c in zip(*rows, strict=True))
    lo, hi = int(ts.min()), int(ts.max())
    slot_ms = max(1, math.ceil((hi - lo + 1) / max(1, slots)))
    # aggregate.keyed_rows: subtask, metric key and slot packed in one long.
    k = ((subtasks.astype(np.int64) << 32) + (mkeys.astype(np.int64) << aggregate.SLOT_BITS)
         + (ts - lo) // slot_ms)
    columns = slots_local.slot_table(jobs, vertices, k, ts, values.astype(np.float64))
    series_rows, strip = series_local.summarise(columns, warmup_fraction, warmup_ms, presorted=True)
    for r in series_rows:
        r.update(desc[(r["job_hash"], r["vertex_hash"], r["subtask_index"])])
    series_rows, strips = from_series.meet_plan(series_rows, strip, plan)
    return from_series.diagnose_series(series_rows, strips, plan, env, scaling, version)
