"""From the small aggregated table (collected) to per-subtask and per-vertex facts.

Pure Python over frozen values: the Spark job hands over one row per series (subtask x metric x
naming-group), already reduced; here the best-named duplicate is kept, the table is pivoted to
one record per subtask, and subtasks roll up into vertices.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from statistics import median
from typing import NamedTuple

from flinktune.analysis import names

# Web UI back-pressure levels (JobVertexBackPressureHandler 1.13+, flink-facts.md §4.5):
# OK <= 0.10 < LOW <= 0.50 < HIGH, on backPressuredTimeMsPerSecond / 1000.
LEVEL_LOW = 0.10
LEVEL_HIGH = 0.50
# A subtask counts as busy from half of its time; backpressure is sustained when it is above the
# OK level in at least half of the samples after the warm-up.
BUSY = 0.5
SUSTAINED_SHARE = 0.5


def bp_level(ratio: float | None) -> str:
    if ratio is None or math.isnan(ratio):
        return "unknown"
    if ratio <= LEVEL_LOW:
        return "OK"
    return "LOW" if ratio <= LEVEL_HIGH else "HIGH"


class SeriesStat(NamedTuple):
    """One series (a metric of one subtask), summarised. A named tuple: built once per series,
    50,000 of them for p = 512 (a frozen dataclass took ~5x as long to build)."""

    job_key: str
    vertex_key: str
    subtask_index: int
    metric: str
    rank: int
    n: int
    mean: float | None
    max: float | None
    frac_lo: float | None
    frac_hi: float | None
    rate: float | None
    t_first: int | None
    t_last: int | None
    job_id: str | None = None
    job_name: str | None = None
    vertex_id: str | None = None
    task_name: str | None = None
    tm_id: str | None = None
    tw_mean: float | None = None  # time-weighted (aggregate.series_stats)


def _clean(x: object) -> float | None:
    if x is None:
        return None
    f = float(x)  # type: ignore[arg-type]
    # NaN (not measured) and infinities (a '+Inf' sample) are no usable statistic.
    return f if math.isfinite(f) else None


def series_from_rows(rows: Iterable[Mapping[str, object]]) -> list[SeriesStat]:
    out = []
    for r in rows:
        out.append(
            SeriesStat(
                job_key=str(r["job_key"]),
                vertex_key=str(r["vertex_key"]),
                subtask_index=int(r["subtask_index"]),  # type: ignore[call-overload]
                metric=str(r["metric"]),
                rank=int(r["rank"]),
                n=int(r["n"] or 0),  # type: ignore[call-overload]
                mean=_clean(r["mean"]),
                max=_clean(r["max"]),
                frac_lo=_clean(r["frac_lo"]),
                frac_hi=_clean(r["frac_hi"]),
                rate=_clean(r["rate"]),
                t_first=None if r["t_first"] is None else int(r["t_first"]),  # type: ignore[call-overload]
                t_last=None if r["t_last"] is None else int(r["t_last"]),  # type: ignore[call-overload]
                job_id=r.get("job_id"),
                job_name=r.get("job_name"),
                vertex_id=r.get("vertex_id"),  # type: ignore[arg-type]
                task_name=r.get("task_name"),
                tm_id=r.get("tm_id"),  # type: ignore[arg-type]
                tw_mean=_clean(r.get("tw_mean")),
            )
        )
    return out


@dataclass(frozen=True)
class RateInputs:
    """What a subtask's true processing rate is computed from (flinktune.analysis.capacity), each
    aggregated over the window after the warm-up: the counters as their rate (exact: delta / span),
    the gauges and meters as their time-weighted mean. Shares of time are 0..1."""

    records_in_counter: float | None = None     # numRecordsIn
    records_in_meter: float | None = None       # numRecordsInPerSecond (a 60 s moving average)
    records_out_counter: float | None = None    # numRecordsOut
    records_out_meter: float | None = None      # numRecordsOutPerSecond
    busy_gauge: float | None = None             # busyTimeMsPerSecond / 1000 (a 60 s moving average)
    backpressured_counter: float | None = None  # accumulateBackPressuredTimeMs
    backpressured_gauge: float | None = None
    idle_counter: float | None = None           # accumulateIdleTimeMs
    idle_gauge: float | None = None
    backlog_growth_per_s: float | None = None   # pendingRecords, last less first, per second
    backlog: float | None = None                # pendingRecords, mean


def _rate_inputs(best: Mapping[str, SeriesStat]) -> RateInputs:
    def counter(metric: str, scale: float = 1.0) -> float | None:
        s = best.get(metric)
        return None if s is None or s.rate is None else s.rate / scale

    def gauge(metric: str, scale: float = 1.0) -> float | None:
        s = best.get(metric)
        if s is None:
            return None
        value = s.tw_mean if s.tw_mean is not None else s.mean
        return None if value is None else value / scale

    backlog = best.get("pendingRecords")
    return RateInputs(
        records_in_counter=counter("numRecordsIn"),
        records_in_meter=gauge("numRecordsInPerSecond"),
        records_out_counter=counter("numRecordsOut"),
        records_out_meter=gauge("numRecordsOutPerSecond"),
        busy_gauge=gauge("busyTimeMsPerSecond", 1000.0),
        backpressured_counter=counter("accumulateBackPressuredTimeMs", 1000.0),
        backpressured_gauge=gauge("backPressuredTimeMsPerSecond", 1000.0),
        idle_counter=counter("accumulateIdleTimeMs", 1000.0),
        idle_gauge=gauge("idleTimeMsPerSecond", 1000.0),
        backlog_growth_per_s=backlog.rate if backlog is not None else None,
        backlog=backlog.mean if backlog is not None else None,
    )


@dataclass(frozen=True)
class SubtaskFacts:
    job_key: str
    vertex_key: str
    subtask_index: int
    tm_id: str | None
    samples: int
    bp_ratio: float | None  # mean share of time back-pressured
    bp_max: float | None
    bp_share_above_ok: float | None  # share of samples above the OK level
    bp_share_high: float | None
    bp_source: str | None
    busy_ratio: float | None
    idle_ratio: float | None
    out_pool: float | None
    out_pool_max: float | None
    out_pool_share_high: float | None
    in_pool: float | None
    in_pool_share_high: float | None
    floating: float | None
    exclusive: float | None
    records_in_per_s: float | None
    records_out_per_s: float | None
    bytes_out_per_s: float | None
    bytes_in_remote_per_s: float | None
    buffers_in_remote_per_s: float | None
    has_remote_input: bool
    rates: RateInputs = field(default_factory=RateInputs, repr=False)

    @property
    def level(self) -> str:
        return bp_level(self.bp_ratio)


def _ratio_ms(x: float | None) -> float | None:
    return None if x is None else x / 1000.0


def pivot_subtasks(series: Iterable[SeriesStat]) -> list[SubtaskFacts]:
    """Keep the best-named copy of each metric (Shuffle.Netty > task root > legacy buffers.*)
    and turn the per-metric rows into one record per subtask."""
    best: dict[tuple[str, str, int], dict[str, SeriesStat]] = {}
    tm: dict[tuple[str, str, int], str | None] = {}
    for s in series:
        key = (s.job_key, s.vertex_key, s.subtask_index)
        per = best.setdefault(key, {})
        cur = per.get(s.metric)
        if s.n > 0 and (cur is None or s.rank < cur.rank):
            per[s.metric] = s
        if s.tm_id and not tm.get(key):
            tm[key] = s.tm_id
    out = []
    for key, m in sorted(best.items()):

        def mean(metric: str, m: dict[str, SeriesStat] = m) -> float | None:
            s = m.get(metric)
            return s.mean if s is not None else None

        def stat(metric: str, m: dict[str, SeriesStat] = m) -> SeriesStat | None:
            return m.get(metric)

        def rate(counter: str, m: dict[str, SeriesStat] = m) -> float | None:
            s = m.get(counter)
            if s is not None and s.rate is not None:
                return s.rate
            meter = m.get(names.METER_FOR_COUNTER[counter])
            return meter.mean if meter is not None else None

        bp_src = None
        bp = bp_max = share = share_hi = None
        for metric, scale in (
            ("backPressuredTimeMsPerSecond", 1000.0),
            ("backPressureRatio", 1.0),
            ("isBackPressured", 1.0),
        ):
            s = stat(metric)
            if s is not None and s.mean is not None:
                bp_src = metric
                bp = s.mean / scale
                bp_max = None if s.max is None else s.max / scale
                share, share_hi = s.frac_lo, s.frac_hi
                break
        busy = _ratio_ms(mean("busyTimeMsPerSecond"))
        idle = _ratio_ms(mean("idleTimeMsPerSecond"))
        if busy is None and idle is not None and bp is not None and bp_src == "backPressuredTimeMsPerSecond":
            # Sources may report busy time as NaN; idle + busy + back-pressured ~ 1000 ms/s
            # (docs ops/monitoring/back_pressure) gives it back.
            busy = max(0.0, 1.0 - idle - bp)
        out_s = stat("outPoolUsage")
        in_s = stat("inPoolUsage")
        remote_bytes = rate("numBytesInRemote")
        remote_buffers = rate("numBuffersInRemote")
        has_remote = bool(
            (remote_buffers or 0) > 0 or (remote_bytes or 0) > 0 or (in_s is not None and (in_s.max or 0) > 0)
        )
        samples = max((s.n for s in m.values()), default=0)
        out.append(
            SubtaskFacts(
                job_key=key[0],
                vertex_key=key[1],
                subtask_index=key[2],
                tm_id=tm.get(key),
                samples=samples,
                bp_ratio=bp,
                bp_max=bp_max,
                bp_share_above_ok=share,
                bp_share_high=share_hi,
                bp_source=bp_src,
                busy_ratio=busy,
                idle_ratio=idle,
                out_pool=out_s.mean if out_s else None,
                out_pool_max=out_s.max if out_s else None,
                out_pool_share_high=out_s.frac_hi if out_s else None,
                in_pool=in_s.mean if in_s else None,
                in_pool_share_high=in_s.frac_hi if in_s else None,
                floating=mean("inputFloatingBuffersUsage"),
                exclusive=mean("inputExclusiveBuffersUsage"),
                records_in_per_s=rate("numRecordsIn"),
                records_out_per_s=rate("numRecordsOut"),
                bytes_out_per_s=rate("numBytesOut"),
                bytes_in_remote_per_s=remote_bytes,
                buffers_in_remote_per_s=remote_buffers,
                has_remote_input=has_remote,
                rates=_rate_inputs(m),
            )
        )
    return out


def _vals(xs: Iterable[float | None]) -> list[float]:
    return [x for x in xs if x is not None and not math.isnan(x)]


def _mean(xs: Iterable[float | None]) -> float | None:
    v = _vals(xs)
    return sum(v) / len(v) if v else None


def _max(xs: Iterable[float | None]) -> float | None:
    v = _vals(xs)
    return max(v) if v else None


def _sum(xs: Iterable[float | None]) -> float | None:
    v = _vals(xs)
    return sum(v) if v else None


@dataclass(frozen=True)
class VertexFacts:
    job_key: str
    vertex_key: str
    vertex_id: str | None
    name: str
    parallelism: int
    subtasks: tuple[SubtaskFacts, ...] = field(repr=False)
    bp_ratio_max: float | None
    bp_ratio_mean: float | None
    bp_share_above_ok: float | None  # of the worst subtask
    bp_share_high: float | None
    level: str
    backpressured: bool  # sustained LOW or HIGH
    temporary_bp: bool  # HIGH at times, but not sustained
    busy_max: float | None
    busy_mean: float | None
    busy_median: float | None
    busy_subtasks: tuple[int, ...]
    idle_mean: float | None
    out_pool_mean: float | None
    out_pool_max: float | None
    in_pool_mean: float | None  # over subtasks with remote input channels only
    floating_mean: float | None
    exclusive_mean: float | None
    has_remote_input: bool
    records_in_per_s: float | None  # summed over subtasks
    records_out_per_s: float | None
    bytes_out_per_s: float | None
    bytes_in_remote_per_s: float | None
    buffers_in_remote_per_s: float | None
    records_in_skew: float | None  # max / mean over subtasks
    busy_skew: float | None
    avg_record_bytes: float | None
    remote_buffer_bytes: float | None  # average bytes per received remote buffer


def rollup_vertex(
    job_key: str, vertex_key: str, name: str, subs: list[SubtaskFacts], vertex_id: str | None
) -> VertexFacts:
    bps = [s.bp_ratio for s in subs]
    worst = max((s for s in subs if s.bp_ratio is not None), key=lambda s: s.bp_ratio or 0.0, default=None)
    bp_max = _max(bps)
    level = bp_level(bp_max)
    share = worst.bp_share_above_ok if worst else None
    share_hi = worst.bp_share_high if worst else None
    sustained = share is not None and share >= SUSTAINED_SHARE
    backpressured = level in ("LOW", "HIGH") and sustained
    temporary = not backpressured and any(
        (s.bp_share_high or 0) > 0 or (s.bp_max or 0) > LEVEL_HIGH for s in subs
    )
    busy = _vals(s.busy_ratio for s in subs)
    busy_subs = tuple(s.subtask_index for s in subs if s.busy_ratio is not None and s.busy_ratio >= BUSY)
    remote = [s for s in subs if s.has_remote_input]
    rin = _vals(s.records_in_per_s for s in subs)
    rin_mean = sum(rin) / len(rin) if rin else None
    busy_mean = sum(busy) / len(busy) if busy else None
    bytes_out = _sum(s.bytes_out_per_s for s in subs)
    rec_out = _sum(s.records_out_per_s for s in subs)
    b_in = _sum(s.bytes_in_remote_per_s for s in remote)
    buf_in = _sum(s.buffers_in_remote_per_s for s in remote)
    return VertexFacts(
        job_key=job_key,
        vertex_key=vertex_key,
        vertex_id=vertex_id,
        name=name,
        parallelism=len(subs),
        subtasks=tuple(sorted(subs, key=lambda s: s.subtask_index)),
        bp_ratio_max=bp_max,
        bp_ratio_mean=_mean(bps),
        bp_share_above_ok=share,
        bp_share_high=share_hi,
        level=level,
        backpressured=backpressured,
        temporary_bp=temporary,
        busy_max=max(busy) if busy else None,
        busy_mean=busy_mean,
        busy_median=median(busy) if busy else None,
        busy_subtasks=busy_subs,
        idle_mean=_mean(s.idle_ratio for s in subs),
        out_pool_mean=_mean(s.out_pool for s in subs),
        out_pool_max=_max(s.out_pool for s in subs),
        in_pool_mean=_mean(s.in_pool for s in remote),
        floating_mean=_mean(s.floating for s in remote),
        exclusive_mean=_mean(s.exclusive for s in remote),
        has_remote_input=bool(remote),
        records_in_per_s=_sum(rin),
        records_out_per_s=rec_out,
        bytes_out_per_s=bytes_out,
        bytes_in_remote_per_s=b_in,
        buffers_in_remote_per_s=buf_in,
        records_in_skew=(max(rin) / rin_mean) if rin and rin_mean else None,
        busy_skew=(max(busy) / busy_mean) if busy and busy_mean else None,
        avg_record_bytes=(bytes_out / rec_out) if bytes_out and rec_out else None,
        remote_buffer_bytes=(b_in / buf_in) if b_in and buf_in else None,
    )
