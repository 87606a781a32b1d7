"""Per-vertex figures in each time window, for comparing two runs (``flinktune compare``).

The diagnosis summarises a whole run into one figure per vertex; a comparison also needs to know
how much each figure moves within a run, so that a difference between runs can be told from noise.
The slot table of the one big aggregation (aggregate.slot_stats) already holds, per subtask, metric
and time slot, the count, sum, maximum and first/last values: here each slot after the warm-up
becomes a window, and each window gets the vertex's figures:

- ``records_in_per_s`` / ``records_out_per_s``: summed over the subtasks, from the counters (the
  delta in the window, counter resets handled as aggregate.series_stats does them) or, without
  counters, from the ``...PerSecond`` meters;
- ``backpressured_max`` / ``backpressured_mean``: share of time back-pressured, worst and mean
  subtask; ``busy_max`` / ``busy_mean``; ``idle_mean`` (shares of time, 0..1);
- ``out_pool_mean``, ``in_pool_mean`` (the latter over subtasks with remote input channels, as the
  diagnosis counts it);
- and each subtask's records-in rate, from which a comparison computes the skew (the busiest
  subtask's rate over the mean) over spans longer than a window: the REST API refreshes counters only
  every few seconds, so in one short window a subtask may show none of its records.

Nothing here touches raw rows or Spark: it reads the slot columns the driver already has (or a small
filtered copy of the slot table, job.window_slots).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flinktune.analysis import names
from flinktune.analysis.series_local import counter_deltas, warmup_cuts

# The metrics a window's figures read.
WINDOW_METRICS: tuple[str, ...] = (
    "backPressuredTimeMsPerSecond",
    "backPressureRatio",
    "isBackPressured",
    "busyTimeMsPerSecond",
    "idleTimeMsPerSecond",
    "outPoolUsage",
    "inPoolUsage",
    "numRecordsIn",
    "numRecordsOut",
    "numRecordsInPerSecond",
    "numRecordsOutPerSecond",
)
METRIC_INDEXES: tuple[int, ...] = tuple(names.METRICS.index(m) for m in WINDOW_METRICS)
FIGURES: tuple[str, ...] = (
    "records_in_per_s",
    "records_out_per_s",
    "backpressured_max",
    "backpressured_mean",
    "busy_max",
    "busy_mean",
    "idle_mean",
    "out_pool_mean",
    "in_pool_mean",
)
_M = {m: i for i, m in enumerate(WINDOW_METRICS)}


@dataclass(frozen=True, eq=False)
class VertexWindows:
    """``values[figure]``: one value per window of the job (NaN: no sample in that window);
    ``records_in``: subtasks x windows, each subtask's records-in rate (meters without counters)."""

    subtasks: tuple[int, ...]
    values: Mapping[str, np.ndarray]
    records_in: np.ndarray


@dataclass(frozen=True, eq=False)
class JobWindows:
    start_ms: int  # start of the first window (the first slot after the warm-up)
    slot_ms: int  # length of each window
    windows: int
    warmup_end_ms: int
    vertices: Mapping[str, VertexWindows]  # by vertex_key (the plan's id when a plan is known)

    def window_end_ms(self) -> np.ndarray:
        return self.start_ms + self.slot_ms * (np.arange(self.windows) + 1)


def _floats(values: Sequence[Any] | np.ndarray) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values.astype(np.float64)
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _counter_rates(
    v0: np.ndarray, v1: np.ndarray, mx: np.ndarray, t0: np.ndarray, t1: np.ndarray, new: np.ndarray
) -> np.ndarray:
    """Per slot row (rows of a series consecutive, in slot order; ``new`` marks a series' first row):
    the counter's rate per second over the time since the previous row's last sample."""
    delta = counter_deltas(v0, v1, mx, new)
    prev_t1 = np.empty_like(t1)
    prev_t1[0] = 0
    prev_t1[1:] = t1[:-1]
    span_s = (t1 - np.where(new, t0, prev_t1)) / 1000.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(span_s > 0, delta / np.where(span_s > 0, span_s, 1.0), np.nan)


def build(
    columns: Mapping[str, Sequence[Any] | np.ndarray],
    descriptors: Mapping[tuple[object, object, object], Mapping[str, object]],
    origin_ms: int,
    slot_ms: int,
    warmup_fraction: float,
    warmup_ms: int | None,
    rekey: Callable[[str], str | None] | None = None,
    remote: Collection[tuple[str, str, int]] | None = None,
) -> dict[str, JobWindows]:
    """``columns``: the slot table (job_hash, vertex_hash, subtask_index, mkey, slot, n, s, mx, t0,
    t1, v0, v1), any metrics; ``descriptors``: names per (job_hash, vertex_hash, subtask_index)
    (aggregate.pick_descriptors); ``rekey``: vertex key -> the plan's vertex id; ``remote``: the
    (job_key, vertex_key, subtask) with remote input channels (the diagnosis' view; None: those
    whose input pool usage is ever above zero). One JobWindows per job_key."""
    if len(columns["slot"]) == 0:
        return {}
    job = np.asarray(columns["job_hash"], dtype=np.int64)
    t0_all = np.asarray(columns["t0"], dtype=np.int64)
    t1_all = np.asarray(columns["t1"], dtype=np.int64)
    mkey = np.asarray(columns["mkey"], dtype=np.int64)
    metric_idx = mkey // names.RANK_SPAN
    # The warm-up cut, per job, as series_local / aggregate.trim_warmup compute it (on every metric).
    cuts = warmup_cuts(job, t0_all, t1_all, warmup_fraction, warmup_ms)
    keep = np.isin(metric_idx, METRIC_INDEXES)
    if not keep.any():
        return {}
    vertex = np.asarray(columns["vertex_hash"], dtype=np.int64)[keep]
    sub = np.asarray(columns["subtask_index"], dtype=np.int64)[keep]
    job, mkey, metric_idx = job[keep], mkey[keep], metric_idx[keep]
    slot = np.asarray(columns["slot"], dtype=np.int64)[keep]
    n = np.asarray(columns["n"], dtype=np.float64)[keep]
    s, mx, v0, v1 = (_floats(columns[c])[keep] for c in ("s", "mx", "v0", "v1"))
    t0, t1 = t0_all[keep], t1_all[keep]
    rank = mkey % names.RANK_SPAN

    # Series order (job, vertex, subtask, metric, rank, slot); only the best-ranked naming of each
    # metric of a subtask is kept (Shuffle.Netty before buffers.).
    order = np.lexsort((t0, slot, rank, metric_idx, sub, vertex, job))
    job, vertex, sub, metric_idx, rank, slot, n, s, mx, v0, v1, t0, t1 = (
        a[order] for a in (job, vertex, sub, metric_idx, rank, slot, n, s, mx, v0, v1, t0, t1)
    )
    owner = np.ones(len(slot), dtype=bool)
    owner[1:] = (
        (job[1:] != job[:-1])
        | (vertex[1:] != vertex[:-1])
        | (sub[1:] != sub[:-1])
        | (metric_idx[1:] != metric_idx[:-1])
    )
    best_rank = np.minimum.reduceat(rank, np.flatnonzero(owner))[np.cumsum(owner) - 1]
    best = rank == best_rank
    job, vertex, sub, metric_idx, slot, n, s, mx, v0, v1, t0, t1 = (
        a[best] for a in (job, vertex, sub, metric_idx, slot, n, s, mx, v0, v1, t0, t1)
    )
    new = np.ones(len(slot), dtype=bool)
    new[1:] = (
        (job[1:] != job[:-1])
        | (vertex[1:] != vertex[:-1])
        | (sub[1:] != sub[:-1])
        | (metric_idx[1:] != metric_idx[:-1])
    )
    counter = np.isin(metric_idx, [names.METRICS.index(m) for m in names.COUNTERS])
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(counter, _counter_rates(v0, v1, mx, t0, t1, new), np.where(n > 0, s / n, np.nan))
    position = {m: i for i, m in enumerate(METRIC_INDEXES)}
    local_metric = np.array([position[m] for m in metric_idx.tolist()], dtype=np.int64)

    # One cube per subtask: metrics x slots, filled in one scatter; subtasks of a vertex are
    # neighbours (np.unique sorts the keys).
    nslots = int(slot.max()) + 1
    keys, inverse = np.unique(np.stack([job, vertex, sub], axis=1), axis=0, return_inverse=True)
    cubes = np.full((len(keys), len(WINDOW_METRICS), nslots), np.nan)
    cubes[inverse.reshape(-1), local_metric, slot] = value
    vertex_start = np.ones(len(keys), dtype=bool)
    vertex_start[1:] = (keys[1:, 0] != keys[:-1, 0]) | (keys[1:, 1] != keys[:-1, 1])
    bounds = [*np.flatnonzero(vertex_start).tolist(), len(keys)]

    out: dict[str, JobWindows] = {}
    by_job: dict[int, dict[str, VertexWindows]] = {}
    job_key_of: dict[int, str] = {}
    for lo, hi in itertools.pairwise(bounds):
        j, v = int(keys[lo, 0]), int(keys[lo, 1])
        subs = [int(x) for x in keys[lo:hi, 2]]
        d = next((descriptors.get((j, v, st)) for st in subs if descriptors.get((j, v, st))), None)
        if not d or d.get("vertex_key") is None or d.get("job_key") is None:
            continue
        vkey = str(d["vertex_key"])
        if rekey is not None:
            vkey = rekey(vkey) or vkey
        jkey = str(d["job_key"])
        job_key_of[j] = jkey
        cube = cubes[lo:hi]  # subtasks x metrics x slots
        if remote is None:
            ins = cube[:, _M["inPoolUsage"], :]
            has_remote = np.where(np.isnan(ins), -1.0, ins).max(axis=1) > 0
        else:
            has_remote = np.array([(jkey, vkey, st) in remote for st in subs])
        by_job.setdefault(j, {})[vkey] = VertexWindows(
            tuple(subs), _figures(cube, has_remote), _rate(cube, "numRecordsIn", "numRecordsInPerSecond")
        )
    for j, vertices in by_job.items():
        first_kept = max(0, int(cuts[j] - origin_ms) // max(1, slot_ms))
        last = nslots
        kept = slice(first_kept, last)
        trimmed = {
            k: VertexWindows(vw.subtasks, {f: a[kept] for f, a in vw.values.items()}, vw.records_in[:, kept])
            for k, vw in vertices.items()
        }
        out[job_key_of[j]] = JobWindows(
            start_ms=int(origin_ms + first_kept * slot_ms),
            slot_ms=int(slot_ms),
            windows=int(last - first_kept),
            warmup_end_ms=int(cuts[j]),
            vertices=trimmed,
        )
    return out


def _nan_reduce(fn: Callable[..., np.ndarray], a: np.ndarray) -> np.ndarray:
    """``fn`` over axis 0 (subtasks), NaN where every subtask is NaN, without numpy's warning."""
    present = ~np.isnan(a)
    any_present = present.any(axis=0)
    filled = np.where(present, a, 0.0 if fn is np.nansum else np.nan)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = fn(filled, axis=0)
    return np.where(any_present, out, np.nan)


def _vertex_rate(rates: np.ndarray) -> np.ndarray:
    """Subtasks x slots -> the vertex's rate per slot: the sum, scaled up for subtasks without a
    sample in that slot (sampled at other times); NaN when fewer than half of them have one."""
    p = rates.shape[0]
    present = (~np.isnan(rates)).sum(axis=0)
    total = _nan_reduce(np.nansum, rates)
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = total * p / present
    return np.where(present * 2 >= p, scaled, np.nan)


def _rate(cube: np.ndarray, counter: str, meter: str) -> np.ndarray:
    """Subtasks x slots: the counter's rate, or the meter for a subtask without the counter."""
    counted, metered = cube[:, _M[counter], :], cube[:, _M[meter], :]
    has_counter = (~np.isnan(counted)).any(axis=1, keepdims=True)
    return np.where(has_counter, counted, metered)


def _figures(cube: np.ndarray, has_remote: np.ndarray) -> dict[str, np.ndarray]:
    """cube: subtasks x WINDOW_METRICS x slots (gauge means, counter rates per second)."""

    def metric(name: str) -> np.ndarray:
        return cube[:, _M[name], :]

    bp = metric("backPressuredTimeMsPerSecond") / 1000.0
    for fallback in ("backPressureRatio", "isBackPressured"):
        bp = np.where(np.isnan(bp), metric(fallback), bp)
    idle = metric("idleTimeMsPerSecond") / 1000.0
    busy = metric("busyTimeMsPerSecond") / 1000.0
    # Sources may report busy time as NaN; idle + busy + back-pressured ~ 1000 ms/s gives it back.
    busy = np.where(np.isnan(busy), np.clip(1.0 - idle - bp, 0.0, 1.0), busy)
    records_in = _rate(cube, "numRecordsIn", "numRecordsInPerSecond")
    records_out = _rate(cube, "numRecordsOut", "numRecordsOutPerSecond")
    ins = metric("inPoolUsage")
    remote_pool = ins[has_remote] if has_remote.any() else np.full((1, ins.shape[1]), np.nan)
    return {
        "records_in_per_s": _vertex_rate(records_in),
        "records_out_per_s": _vertex_rate(records_out),
        "backpressured_max": _nan_reduce(np.nanmax, bp),
        "backpressured_mean": _nan_reduce(np.nanmean, bp),
        "busy_max": _nan_reduce(np.nanmax, busy),
        "busy_mean": _nan_reduce(np.nanmean, busy),
        "idle_mean": _nan_reduce(np.nanmean, idle),
        "out_pool_mean": _nan_reduce(np.nanmean, metric("outPoolUsage")),
        "in_pool_mean": _nan_reduce(np.nanmean, remote_pool),
    }
