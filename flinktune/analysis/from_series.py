"""From the per-series summary to each job's diagnosis: the pure half of the job entry.

Whatever summarised the series (Spark's aggregate.series_stats, or series_local in numpy), the rows
meet the job plan here, the time strips are drawn, subtasks roll up into vertices, and each job is
diagnosed and its parallelism sized. No Spark, no I/O: job.run_analysis calls it after its one
Spark pass, and samples.diagnose_samples (the analysis rules' metrics examples) on a dump held in
memory, so both run the same diagnosis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flinktune.analysis import aggregate
from flinktune.analysis.diagnose import JobDiagnosis, build_vertices, diagnose_job
from flinktune.analysis.facts import SeriesStat, SubtaskFacts, bp_level, pivot_subtasks, series_from_rows
from flinktune.analysis.parallelism import ScalingOptions, advise_parallelism
from flinktune.analysis.plan import JobPlan
from flinktune.analysis.series_local import StripPoints
from flinktune.record import replace as record_replace
from flinktune.situation.environment import Environment
from flinktune.versions import FlinkVersion

STRIP_CHARS = {"OK": "·", "LOW": "▒", "HIGH": "█", "unknown": " "}


def _strip(values: dict[int, float], nslots: int, scale: float) -> str:
    out = []
    last = " "
    for i in range(nslots):
        v = values.get(i)
        # Slots finer than the sampling interval are empty: carry the last sample forward.
        if v is not None and not math.isnan(v):
            last = STRIP_CHARS[bp_level(v / scale)]
        out.append(last)
    return "".join(out)


def best_strips(
    rows: Sequence[Mapping[str, Any]], strip: StripPoints
) -> tuple[dict[tuple[str, str, str], dict[int, float]], int]:
    """Per job, vertex, strip metric and time slot: the slot mean of the best-named copy of the
    metric (lowest rank), of the worst subtask. Slots count from the first with a value; also
    returns how many there are. Sorted in numpy: a dict per point cost seconds for 50,000 series."""
    group = np.full(len(rows), -1, dtype=np.int64)
    rank = np.zeros(len(rows), dtype=np.int64)
    groups: dict[tuple[str, str, str], int] = {}
    for i, r in enumerate(rows):
        if r["vertex_key"] is not None and r["metric"] in aggregate.STRIP_METRICS:
            key = (str(r["job_key"]), str(r["vertex_key"]), str(r["metric"]))
            group[i] = groups.setdefault(key, len(groups))
            rank[i] = int(r["rank"])
    g = group[strip.row]
    ok = g >= 0
    g, slot, mean, rk = g[ok], strip.slot[ok], strip.mean[ok], rank[strip.row[ok]]
    if len(g) == 0:
        return {}, 0
    order = np.lexsort((-mean, rk, slot, g))
    g, slot, mean = g[order], slot[order], mean[order]
    first = np.ones(len(g), dtype=bool)
    first[1:] = (g[1:] != g[:-1]) | (slot[1:] != slot[:-1])
    g, slot, mean = g[first], slot[first], mean[first]
    first_slot = int(slot.min())
    keys = list(groups)
    out: dict[tuple[str, str, str], dict[int, float]] = {}
    for gi, sl, val in zip(g.tolist(), slot.tolist(), mean.tolist(), strict=True):
        out.setdefault(keys[gi], {})[sl - first_slot] = val
    return out, int(slot.max()) - first_slot + 1


@dataclass(frozen=True)
class Strips:
    """The time strips' points (best_strips) and how many slots they span."""

    best: Mapping[tuple[str, str, str], Mapping[int, float]]
    slots: int


def meet_plan(
    series_rows: list[dict[str, Any]], strip: StripPoints, plan: JobPlan | None
) -> tuple[list[dict[str, Any]], Strips]:
    """The series rows keyed by the plan's vertex ids (dumps that name vertices only by task name,
    full identifiers and some exporters, still meet the plan), without rows of no vertex, and the
    time strips drawn from them."""
    if plan is not None:
        ids: dict[object, str | None] = {}
        for r in series_rows:
            key = r["vertex_key"]
            if key is None:
                continue
            if key not in ids:
                ids[key] = plan.id_for(str(key))
            if ids[key]:
                r["vertex_key"] = ids[key]
    best, nslots = best_strips(series_rows, strip)
    return [r for r in series_rows if r["vertex_key"] is not None], Strips(best, nslots)


@dataclass(frozen=True)
class Diagnosed:
    jobs: tuple[JobDiagnosis, ...]
    series: tuple[SeriesStat, ...]
    subtasks: tuple[SubtaskFacts, ...]


def diagnose_series(
    series_rows: Sequence[Mapping[str, Any]],
    strips: Strips,
    plan: JobPlan | None,
    env: Environment,
    scaling: ScalingOptions,
    version: FlinkVersion,
) -> Diagnosed:
    """Each job's diagnosis (origins, causes) and parallelism advice from its series rows (with
    their names: job_key, vertex_key and aggregate.CARRIED)."""
    series = series_from_rows(series_rows)
    subtasks = pivot_subtasks(series)
    seen_names: dict[tuple[str, str], str] = {}
    job_ids: dict[str, tuple[str | None, str | None]] = {}
    windows: dict[str, tuple[int, int]] = {}
    for s in series:
        if s.task_name:
            seen_names.setdefault((s.job_key, s.vertex_key), s.task_name)
        cur = job_ids.get(s.job_key, (None, None))
        job_ids[s.job_key] = (cur[0] or s.job_id, cur[1] or s.job_name)
        if s.t_first is not None and s.t_last is not None:
            w = windows.get(s.job_key, (s.t_first, s.t_last))
            windows[s.job_key] = (min(w[0], s.t_first), max(w[1], s.t_last))
    by_job = build_vertices(subtasks, plan, seen_names)
    jobs = []
    for job_key, vertices in sorted(by_job.items()):
        drawn: dict[str, tuple[str, str]] = {}
        for v in vertices:
            # Per slot, the worst subtask of the best-named metric (best_strips).
            bp_vals = strips.best.get((job_key, v.vertex_key, "backPressuredTimeMsPerSecond"), {})
            bp_scale = 1000.0
            if not bp_vals:
                bp_vals, bp_scale = strips.best.get((job_key, v.vertex_key, "backPressureRatio"), {}), 1.0
            busy_vals = strips.best.get((job_key, v.vertex_key, "busyTimeMsPerSecond"), {})
            drawn[v.vertex_key] = (
                _strip(dict(bp_vals), strips.slots, bp_scale),
                _strip(dict(busy_vals), strips.slots, 1000.0),
            )
        jid, jname = job_ids.get(job_key, (None, None))
        window = windows.get(job_key)
        job_plan = plan if plan is None or not plan.job_id or plan.job_id in (jid, job_key) else None
        used_plan = job_plan if job_plan else (plan if len(by_job) == 1 else None)
        diag = diagnose_job(job_key, vertices, used_plan, env, jid, jname, drawn, window)
        advice = advise_parallelism(diag.vertices, used_plan if diag.has_plan else None, diag.origins,
                                    scaling, version)
        jobs.append(record_replace(diag, parallelism=advice))
    return Diagnosed(tuple(jobs), tuple(series), tuple(subtasks))
