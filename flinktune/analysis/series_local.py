"""The per-series summary of the slot table, in numpy: the twin of aggregate.trim_warmup +
aggregate.series_stats, for slot tables the parquet footers bound (job.LOCAL_FINISH_MAX_ROWS).

After the one big aggregation the slot table holds at most series x (slots + 1) rows (82,000 for
the benchmark's 2,000 series, 2.1e6 for p = 512 with 51,200 series, whatever the rows). Summarising
it in Spark costs two windows, two shuffles, four more stages of cold code and rows pickled through
py4j: 1.5-2 s for 2,000 series, 8-10 s for 51,200. Here it is one vectorised pass (~0.5 s for
51,200 series): the per-series figures are computed as arrays and turned into plain values column
by column, and the strip comes back as arrays (StripPoints), not a list of dicts per series. Tests
run both implementations on the same inputs.

Null semantics follow Spark's: a null value is NaN here, sums skip it, a mean over no samples is
None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from flinktune.analysis import names
from flinktune.analysis.aggregate import STRIP_METRICS


@dataclass(frozen=True)
class StripPoints:
    """The per-slot means of the strip metrics (aggregate.STRIP_METRICS) that ride along with the
    series summary, as arrays: ``row`` indexes the series rows, one entry per slot with samples."""

    row: np.ndarray
    slot: np.ndarray
    mean: np.ndarray

    @staticmethod
    def empty() -> StripPoints:
        return StripPoints(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))

    @staticmethod
    def from_rows(rows: Sequence[Mapping[str, Any]]) -> StripPoints:
        """From rows that carry their strip as a list of {slot, mean} (aggregate.series_stats)."""
        index, slots, means = [], [], []
        for i, r in enumerate(rows):
            for point in r.get("strip") or ():
                index.append(i)
                slots.append(int(point["slot"]))
                means.append(float(point["mean"]))
        return StripPoints(
            np.asarray(index, np.int64), np.asarray(slots, np.int64), np.asarray(means, np.float64)
        )


def _floats(values: Sequence[Any] | np.ndarray) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return np.asarray(values, dtype=np.float64)  # pyarrow's to_numpy() already made nulls NaN
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def series_rows(
    slots: Mapping[str, Sequence[Any] | np.ndarray], warmup_fraction: float, warmup_ms: int | None
) -> list[dict[str, Any]]:
    """``slots``: the columns of aggregate.slot_stats (lists or arrays). Returns one dict per
    series with the keys aggregate.series_stats returns (the strip as a list of {slot, mean})."""
    rows, strip = summarise(slots, warmup_fraction, warmup_ms)
    points: list[list[dict[str, Any]]] = [[] for _ in rows]
    for i, sl, mean in zip(strip.row.tolist(), strip.slot.tolist(), strip.mean.tolist(), strict=True):
        points[i].append({"slot": sl, "mean": mean})
    for row, strip_points in zip(rows, points, strict=True):
        row["strip"] = strip_points
    return rows


def warmup_cuts(job: np.ndarray, t0: np.ndarray, t1: np.ndarray, warmup_fraction: float,
                warmup_ms: int | None) -> dict[int, float]:
    """Per job hash: the end of its warm-up (start + a duration, or + a share of its span), as
    aggregate.trim_warmup computes it."""
    cuts: dict[int, float] = {}
    for j in np.unique(job):
        mine = job == j
        start, end = int(t0[mine].min()), int(t1[mine].max())
        cuts[int(j)] = start + (warmup_ms if warmup_ms is not None else (end - start) * warmup_fraction)
    return cuts


def counter_deltas(v0: np.ndarray, v1: np.ndarray, mx: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Per slot row of counter series (rows of a series consecutive, in slot order; ``new`` marks a
    series' first row): the counter's increase, inside the slot (a reset shows as a last value below
    the slot's max) and since the previous slot (a first value below the previous slot's last)."""
    with np.errstate(invalid="ignore"):
        in_slot = np.where(v1 < mx, mx - v0 + v1, v1 - v0)
        prev = np.empty_like(v1)
        prev[0] = np.nan
        prev[1:] = v1[:-1]
        prev[new] = np.nan
        across = np.where(np.isnan(prev), 0.0, np.where(v0 >= prev, v0 - prev, v0))
    return np.nan_to_num(in_slot, nan=0.0) + np.nan_to_num(across, nan=0.0)


def summarise(
    slots: Mapping[str, Sequence[Any] | np.ndarray],
    warmup_fraction: float,
    warmup_ms: int | None,
    presorted: bool = False,
) -> tuple[list[dict[str, Any]], StripPoints]:
    """series_rows without the strip lists: the strip comes back as arrays (a list of dicts per
    series cost more than the rest of the summary for 50,000 series). ``presorted``: the rows are
    already in series and slot order, one per slot (slots_local.slot_table)."""
    if len(slots["slot"]) == 0:
        return [], StripPoints.empty()
    job = np.asarray(slots["job_hash"], dtype=np.int64)
    vertex = np.asarray(slots["vertex_hash"], dtype=np.int64)
    sub = np.asarray(slots["subtask_index"], dtype=np.int64)
    mkey = np.asarray(slots["mkey"], dtype=np.int64)
    slot = np.asarray(slots["slot"], dtype=np.int64)
    t0 = np.asarray(slots["t0"], dtype=np.int64)
    t1 = np.asarray(slots["t1"], dtype=np.int64)

    # Warm-up: per job, drop slots whose last sample is before start + share of the span.
    keep = np.ones(len(slot), dtype=bool)
    for j, cut in warmup_cuts(job, t0, t1, warmup_fraction, warmup_ms).items():
        mine = job == j
        keep[mine] = t1[mine] >= cut
    kept = np.flatnonzero(keep)
    if len(kept) == 0:
        return [], StripPoints.empty()
    # One gather per column (kept rows in series and slot order), not one per step.
    order = kept if presorted else kept[
        np.lexsort((t0[kept], slot[kept], mkey[kept], sub[kept], vertex[kept], job[kept]))
    ]
    job, vertex, sub, mkey, slot, t0, t1 = (a[order] for a in (job, vertex, sub, mkey, slot, t0, t1))
    n = np.asarray(slots["n"], dtype=np.int64)[order]
    s, mx, v0, v1 = (_floats(slots[c])[order] for c in ("s", "mx", "v0", "v1"))

    new = np.ones(len(slot), dtype=bool)
    new[1:] = (
        (job[1:] != job[:-1]) | (vertex[1:] != vertex[:-1]) | (sub[1:] != sub[:-1]) | (mkey[1:] != mkey[:-1])
    )
    starts = np.flatnonzero(new)

    delta = counter_deltas(v0, v1, mx, new)

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
    # The time-weighted mean's parts (aggregate.series_stats): per slot with values, its mean and
    # the time its samples cover; and a level's last value less its first.
    valued_slot = n > 0
    nxt = np.empty(len(slot), dtype=np.float64)
    nxt[:-1] = t0[1:]
    nxt[-1] = np.nan
    nxt[np.append(starts[1:], len(slot)) - 1] = np.nan       # a series' last slot has no next one
    with np.errstate(invalid="ignore", divide="ignore"):
        own = np.where(n > 1, (t1 - t0) * n / np.where(n > 1, n - 1, 1), np.nan)
    covered = np.where(np.isnan(nxt), own, nxt - t0)
    known = valued_slot & ~np.isnan(covered)
    tw_a = total(np.where(known, np.nan_to_num(slot_mean) * np.nan_to_num(covered), 0.0))
    tw_c = total(np.where(known, np.nan_to_num(covered), 0.0))
    tw_b = total(np.where(valued_slot & ~known, np.nan_to_num(slot_mean), 0.0))
    tw_k = total((valued_slot & ~known).astype(np.int64))
    ends = np.append(starts[1:], len(slot)) - 1
    level_delta = v1[ends] - v0[starts]
    strip_ok = np.isin(metric_idx, [names.METRICS.index(m) for m in STRIP_METRICS]) & (n > 0)
    group = np.cumsum(new) - 1
    strip = StripPoints(group[strip_ok], slot[strip_ok], slot_mean[strip_ok])

    # Per-series figures as arrays, then plain Python values in one pass each (tolist), then the
    # dicts: no numpy scalar is touched per series.
    first_metric = metric_idx[starts]
    span_s = (t_last - t_first) / 1000.0
    with np.errstate(invalid="ignore", divide="ignore"):
        n_pos = n_sum > 0
        mean = np.where(n_pos & s_any, s_sum / np.where(n_pos, n_sum, 1), np.nan)
        frac_lo = np.where(n_pos, lo_sum / np.where(n_pos, n_sum, 1), np.nan)
        frac_hi = np.where(n_pos, hi_sum / np.where(n_pos, n_sum, 1), np.nan)
        is_counter = np.isin(first_metric, [names.METRICS.index(m) for m in names.COUNTERS])
        is_level = np.isin(first_metric, [names.METRICS.index(m) for m in names.LEVELS])
        safe_span = np.where(span_s > 0, span_s, 1)
        rate = np.where(is_counter & (span_s > 0), delta_sum / safe_span,
                        np.where(is_level & (span_s > 0), level_delta / safe_span, np.nan))
        spread = (n_sum > 1) & (t_last > t_first)
        step = (t_last - t_first) / np.where(n_sum > 1, n_sum - 1, 1)
        tw_mean = np.where(spread, (tw_a + step * tw_b) / np.where(spread, tw_c + step * tw_k, 1), mean)
    metric_names = [names.METRICS[i] for i in first_metric.tolist()]

    def opt(a: np.ndarray) -> list[float | None]:
        return [None if x != x else x for x in a.tolist()]  # NaN -> None

    columns = zip(
        job[starts].tolist(),
        vertex[starts].tolist(),
        sub[starts].tolist(),
        metric_names,
        (mkey[starts] % names.RANK_SPAN).tolist(),
        n_sum.tolist(),
        opt(mean),
        opt(mx_max),
        opt(frac_lo),
        opt(frac_hi),
        delta_sum.astype(np.float64).tolist(),
        t_first.tolist(),
        t_last.tolist(),
        counts.tolist(),
        opt(rate),
        opt(tw_mean),
        strict=True,
    )
    keys = ("job_hash", "vertex_hash", "subtask_index", "metric", "rank", "n", "mean", "max", "frac_lo",
            "frac_hi", "delta", "t_first", "t_last", "slots", "rate", "tw_mean")
    return [dict(zip(keys, values, strict=True)) for values in columns], strip
