"""Per-subtask time series of the slot table, for reports that draw them (the HTML report).

The one big aggregation (aggregate.slot_stats) already holds, per subtask, metric and time slot,
the count and sum of the samples. The diagnosis summarises it after the warm-up trim; this module
keeps the slot means of a few gauges as matrices (subtasks x slots), warm-up slots included and
the cut remembered, so a report can draw the whole window and shade what the diagnosis skipped.
Nothing here touches raw rows or Spark: it reads the slot columns the driver already has (or a
small filtered copy of the slot table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flinktune.analysis import names
from flinktune.analysis.series_local import warmup_cuts

# Gauges drawn over time. The ms-per-second ones become shares of time (0..1) here.
TIMELINE_METRICS: tuple[str, ...] = (
    "backPressuredTimeMsPerSecond",
    "busyTimeMsPerSecond",
    "idleTimeMsPerSecond",
    "backPressureRatio",
    "outPoolUsage",
    "inPoolUsage",
)
_MS_PER_S = {"backPressuredTimeMsPerSecond", "busyTimeMsPerSecond", "idleTimeMsPerSecond"}
# What a report shows, whichever source metric carried it.
SHOWN = {
    "backPressuredTimeMsPerSecond": "backpressured",
    "backPressureRatio": "backpressured",
    "busyTimeMsPerSecond": "busy",
    "idleTimeMsPerSecond": "idle",
    "outPoolUsage": "out_pool",
    "inPoolUsage": "in_pool",
}
METRIC_INDEXES: tuple[int, ...] = tuple(names.METRICS.index(m) for m in TIMELINE_METRICS)


@dataclass(frozen=True, eq=False)
class VertexTimeline:
    """``values[name]``: subtasks x slots, NaN where a subtask had no sample in a slot.
    Names: backpressured, busy, idle (shares of time), out_pool, in_pool (usage 0..1)."""

    subtasks: tuple[int, ...]
    values: Mapping[str, np.ndarray]


@dataclass(frozen=True, eq=False)
class JobTimeline:
    start_ms: int  # start of slot 0
    slot_ms: int
    slots: int
    warmup_end_ms: int  # samples before this were trimmed from the diagnosis
    vertices: Mapping[str, VertexTimeline]  # by vertex_key (the plan's id when a plan is known)


def build(
    columns: Mapping[str, Sequence[Any] | np.ndarray],
    descriptors: Mapping[tuple[object, object, object], Mapping[str, object]],
    origin_ms: int,
    slot_ms: int,
    warmup_fraction: float,
    warmup_ms: int | None,
    rekey: Callable[[str], str | None] | None = None,
) -> dict[str, JobTimeline]:
    """``columns``: the slot table (aggregate.slot_stats' columns job_hash, vertex_hash,
    subtask_index, mkey, slot, n, s, t0, t1), any metrics; ``descriptors``: names per
    (job_hash, vertex_hash, subtask_index) from aggregate.pick_descriptors; ``rekey``: vertex key ->
    the plan's vertex id (None: keep). Returns one timeline per job_key."""
    if len(columns["slot"]) == 0:
        return {}
    job = np.asarray(columns["job_hash"], dtype=np.int64)
    vertex = np.asarray(columns["vertex_hash"], dtype=np.int64)
    sub = np.asarray(columns["subtask_index"], dtype=np.int64)
    mkey = np.asarray(columns["mkey"], dtype=np.int64)
    slot = np.asarray(columns["slot"], dtype=np.int64)
    n = np.asarray(columns["n"], dtype=np.float64)
    s = (
        np.array([np.nan if v is None else v for v in columns["s"]], dtype=np.float64)
        if not isinstance(columns["s"], np.ndarray)
        else columns["s"].astype(np.float64)
    )
    t0 = np.asarray(columns["t0"], dtype=np.int64)
    t1 = np.asarray(columns["t1"], dtype=np.int64)

    # The warm-up cut, per job, exactly as series_local / aggregate.trim_warmup compute it.
    cuts = warmup_cuts(job, t0, t1, warmup_fraction, warmup_ms)
    nslots = int(slot.max()) + 1

    metric_idx = mkey // names.RANK_SPAN
    rank = mkey % names.RANK_SPAN
    keep = np.isin(metric_idx, METRIC_INDEXES) & (n > 0)
    job, vertex, sub, metric_idx, rank, slot, n, s = (
        a[keep] for a in (job, vertex, sub, metric_idx, rank, slot, n, s)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
    # Per (job, vertex, subtask, metric) the best-ranked naming only (Shuffle.Netty before buffers.).
    best: dict[tuple[int, int, int, int], int] = {}
    keys = zip(job.tolist(), vertex.tolist(), sub.tolist(), metric_idx.tolist(), rank.tolist(), strict=True)
    for key in keys:
        k = key[:4]
        if k not in best or key[4] < best[k]:
            best[k] = key[4]

    # Rows per (job_key, vertex_key): subtasks and cells.
    cells: dict[tuple[str, str], dict[str, list[tuple[int, int, float]]]] = {}
    for i, (j, v, st, m, r, sl) in enumerate(
        zip(
            job.tolist(),
            vertex.tolist(),
            sub.tolist(),
            metric_idx.tolist(),
            rank.tolist(),
            slot.tolist(),
            strict=True,
        )
    ):
        if best[(j, v, st, m)] != r:
            continue
        d = descriptors.get((j, v, st))
        if not d or d.get("vertex_key") is None:
            continue
        vkey = str(d["vertex_key"])
        if rekey is not None:
            vkey = rekey(vkey) or vkey
        metric = names.METRICS[m]
        value = float(mean[i]) / (1000.0 if metric in _MS_PER_S else 1.0)
        cells.setdefault((str(d["job_key"]), vkey), {}).setdefault(SHOWN[metric], []).append((st, sl, value))
    job_keys = {int(j): None for j in np.unique(job)}
    for (j, _v, _st), d in descriptors.items():
        if int(j) in job_keys and d.get("job_key") is not None:  # type: ignore[call-overload]
            job_keys[int(j)] = str(d["job_key"])  # type: ignore[call-overload]

    out: dict[str, JobTimeline] = {}
    by_job: dict[str, dict[str, VertexTimeline]] = {}
    for (jkey, vkey), metrics in cells.items():
        subs = sorted({c[0] for cs in metrics.values() for c in cs})
        row = {x: i for i, x in enumerate(subs)}
        values = {}
        for name, cs in metrics.items():
            grid = np.full((len(subs), nslots), np.nan)
            # Two source metrics can feed one name (bp time and the older ratio): the first wins.
            for st, sl, val in cs:
                if np.isnan(grid[row[st], sl]):
                    grid[row[st], sl] = val
            values[name] = grid
        by_job.setdefault(jkey, {})[vkey] = VertexTimeline(tuple(subs), values)
    for jhash, jkey in job_keys.items():
        if jkey is None or jkey not in by_job:
            continue
        out[jkey] = JobTimeline(
            start_ms=int(origin_ms),
            slot_ms=int(slot_ms),
            slots=nslots,
            warmup_end_ms=int(cuts[jhash]),
            vertices=by_job[jkey],
        )
    return out
