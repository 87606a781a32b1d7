"""The per-series summary of a small slot table, in numpy: the twin of aggregate.trim_warmup +
aggregate.series_stats, for slot tables known to be small.

After the one big aggregation the slot table holds at most series x (slots + 1) rows (80,000 for
a 5e7-row dump of 2,000 series). Summarising it in Spark costs two windows, two shuffles and
four more stages of cold code, about 1.5-2 s on a 2-core machine whatever its size; here it
takes milliseconds. The caller uses this only when the parquet footers bound the table
(job.LOCAL_FINISH_MAX_ROWS); tests run both implementations on the same inputs.

Null semantics follow Spark's: a null value is NaN here, sums skip it, a mean over no samples is
None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from flinktune.analysis import names
from flinktune.analysis.aggregate import STRIP_METRICS

SLOT_COLUMNS = (
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


def _floats(values: Sequence[Any] | np.ndarray) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values.astype(np.float64)  # pyarrow's to_numpy() already made nulls NaN
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def series_rows(
    slots: Mapping[str, Sequence[Any] | np.ndarray], warmup_fraction: float, warmup_ms: int | None
) -> list[dict[str, Any]]:
    """``slots``: the columns of aggregate.slot_stats (lists or arrays). Returns one dict per
    series with the keys aggregate.series_stats returns."""
    if len(slots["slot"]) == 0:
        return []
    job = np.asarray(slots["job_hash"], dtype=np.int64)
    vertex = np.asarray(slots["vertex_hash"], dtype=np.int64)
    sub = np.asarray(slots["subtask_index"], dtype=np.int64)
    mkey = np.asarray(slots["mkey"], dtype=np.int64)
    slot = np.asarray(slots["slot"], dtype=np.int64)
    n = np.asarray(slots["n"], dtype=np.int64)
    t0 = np.asarray(slots["t0"], dtype=np.int64)
    t1 = np.asarray(slots["t1"], dtype=np.int64)
    s, mx, v0, v1 = (_floats(slots[c]) for c in ("s", "mx", "v0", "v1"))

    # Warm-up: per job, drop slots whose last sample is before start + share of the span.
    keep = np.ones(len(slot), dtype=bool)
    for j in np.unique(job):
        mine = job == j
        start, end = t0[mine].min(), t1[mine].max()
        cut = start + (warmup_ms if warmup_ms is not None else (end - start) * warmup_fraction)
        keep[mine] = t1[mine] >= cut
    job, vertex, sub, mkey, slot, n, t0, t1, s, mx, v0, v1 = (
        a[keep] for a in (job, vertex, sub, mkey, slot, n, t0, t1, s, mx, v0, v1)
    )
    if len(slot) == 0:
        return []

    order = np.lexsort((t0, slot, mkey, sub, vertex, job))
    job, vertex, sub, mkey, slot, n, t0, t1, s, mx, v0, v1 = (
        a[order] for a in (job, vertex, sub, mkey, slot, n, t0, t1, s, mx, v0, v1)
    )
    new = np.ones(len(slot), dtype=bool)
    new[1:] = (
        (job[1:] != job[:-1]) | (vertex[1:] != vertex[:-1]) | (sub[1:] != sub[:-1]) | (mkey[1:] != mkey[:-1])
    )
    starts = np.flatnonzero(new)

    # Counter deltas: inside a slot (a reset shows as a last value below the slot's max) and
    # across slots (a first value below the previous slot's last).
    with np.errstate(invalid="ignore"):
        in_slot = np.where(v1 < mx, mx - v0 + v1, v1 - v0)
        prev = np.empty_like(v1)
        prev[0] = np.nan
        prev[1:] = v1[:-1]
        prev[new] = np.nan
        across = np.where(np.isnan(prev), 0.0, np.where(v0 >= prev, v0 - prev, v0))
    delta = np.nan_to_num(in_slot, nan=0.0) + np.nan_to_num(across, nan=0.0)

    metric_idx = mkey // names.RANK_SPAN
    lo = np.array([names.THRESHOLDS.get(m, (np.nan, np.nan))[0] for m in names.METRICS])[metric_idx]
    hi = np.array([names.THRESHOLDS.get(m, (np.nan, np.nan))[1] for m in names.METRICS])[metric_idx]
    with np.errstate(invalid="ignore", divide="ignore"):
        slot_mean = np.where(n > 0, s / np.where(n > 0, n, 1), np.nan)
        above_lo = np.where(slot_mean > lo, n, 0)
        above_hi = np.where(slot_mean > hi, n, 0)

    def total(a: np.ndarray) -> np.ndarray:
        return np.add.reduceat(a, starts)

    n_sum = total(n)
    s_sum = total(np.nan_to_num(s, nan=0.0))
    s_any = total((~np.isnan(s)).astype(np.int64)) > 0
    mx_max = np.fmax.reduceat(mx, starts)
    lo_sum, hi_sum, delta_sum = total(above_lo), total(above_hi), total(delta)
    t_first = np.minimum.reduceat(t0, starts)
    t_last = np.maximum.reduceat(t1, starts)
    counts = np.diff(np.append(starts, len(slot)))
    strip_ok = np.isin(metric_idx, [names.METRICS.index(m) for m in STRIP_METRICS]) & (n > 0)

    out: list[dict[str, Any]] = []
    ends = np.append(starts[1:], len(slot))
    for g, (a, b) in enumerate(zip(starts, ends, strict=True)):
        metric = names.METRICS[int(metric_idx[a])]
        ns = int(n_sum[g])
        span_s = (int(t_last[g]) - int(t_first[g])) / 1000.0
        rows = range(a, b)
        out.append(
            {
                "job_hash": int(job[a]),
                "vertex_hash": int(vertex[a]),
                "subtask_index": int(sub[a]),
                "metric": metric,
                "rank": int(mkey[a] % names.RANK_SPAN),
                "n": ns,
                "mean": float(s_sum[g]) / ns if ns > 0 and s_any[g] else None,
                "max": None if np.isnan(mx_max[g]) else float(mx_max[g]),
                "frac_lo": float(lo_sum[g]) / ns if ns > 0 else None,
                "frac_hi": float(hi_sum[g]) / ns if ns > 0 else None,
                "delta": float(delta_sum[g]),
                "t_first": int(t_first[g]),
                "t_last": int(t_last[g]),
                "slots": int(counts[g]),
                "strip": [{"slot": int(slot[i]), "mean": float(slot_mean[i])} for i in rows if strip_ok[i]],
                "rate": float(delta_sum[g]) / span_s if metric in names.COUNTERS and span_s > 0 else None,
            }
        )
    return out
