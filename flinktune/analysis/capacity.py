"""How fast each subtask and vertex can go: the true processing rate, from the dump.

A subtask's **true processing rate** is the records it handled divided by the time it was busy
(records per busy second): what it would take if it were busy all the time. The same ratio drives
the Flink Kubernetes operator's autoscaler (flink-autoscaler ScalingMetricEvaluator
.computeTrueProcessingRate, ``rate / (busyTimeMsPerSecond / 1000)``) and DS2 (Kalavri et al.,
OSDI 2018: "true processing rate" = records processed / useful time).

Numerator and denominator are aggregated the same way (FLINK-39306: the autoscaler's busy-time
numerator once averaged differently from its denominator and mis-sized vertices), over the same
window after the warm-up:

- **counters** when every subtask has them: ``numRecordsIn`` (a source: ``numRecordsOut``) and
  ``accumulateIdleTimeMs`` / ``accumulateBackPressuredTimeMs`` (1.16+), each as its increase over the
  window divided by the window; busy is the rest, ``1 - idle - back-pressured`` (Flink's own
  ``accumulateBusyTimeMs`` is that difference taken at once, and drops back whenever the idle or
  back-pressured timer catches up, every 5 s: it is no counter). The timers add a period when it
  ends or every 5 s, so each end of the window may miss up to 5 s of idle or back-pressured time:
  the longer the window, the smaller that error (docs/analysis.md, "Parallelism");
- else **gauges**: the time-weighted means of ``numRecordsInPerSecond`` and ``busyTimeMsPerSecond``,
  both 60 s moving averages in Flink (MeterView; TimerGauge, 1.16+), so both lag the same way;
- else **mixed** (a counter over a gauge), said in the method.

Busy time missing (NaN for some sources) comes back as ``1 - idle - back-pressured`` (docs
ops/monitoring/back_pressure: the three add up to 1000 ms per second).

A vertex's rate per subtask is ``sum(records) / sum(busy time)`` over its subtasks (the autoscaler's
``AVG`` busy-time aggregator: the vertex rate over the mean busy share, divided by the parallelism);
the busiest subtask's share of the vertex's input says whether the load is even (flinktune.model
.scaling uses it for key groups and hot keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flinktune.analysis.facts import LEVEL_LOW, SubtaskFacts, VertexFacts

METHODS = ("counters", "gauges", "mixed")
# ``out / (1 - bp)`` amplifies an error in ``bp`` by ``1 / (1 - bp)^2``: at 90% back-pressured a
# point of error is 10% of the estimate, at 98% half of it. Above this share the estimate of what a
# source would send unblocked is only shown, not acted on (flinktune.analysis.parallelism).
UNBLOCKED_RELIABLE_BACKPRESSURE = 0.9
UNBLOCKED_MAX_BACKPRESSURE = 0.95
# A source idle this share of the time or more (idleTimeMsPerSecond: waiting for input, a rate limit,
# an empty partition) while back-pressured above the web UI's OK level (facts.LEVEL_LOW) is not held
# back by back pressure alone: between back-pressured spells it catches up, so ``out / (1 - bp)``
# overstates what it would send (a 20,000 records/s limit read as 51,676 on a real run); the
# estimate is then only shown. At or below OK, ``out / (1 - bp)`` is within 11% of ``out``.
UNBLOCKED_MAX_IDLE = 0.1


@dataclass(frozen=True)
class SubtaskRate:
    subtask_index: int
    records_per_s: float | None      # records in (a source: out)
    busy: float | None               # share of time busy, 0..1
    backpressured: float | None
    true_rate: float | None          # records per busy second
    idle: float | None = None        # share of time idle (waiting for input)


@dataclass(frozen=True)
class VertexRates:
    vertex_key: str
    name: str
    parallelism: int
    is_source: bool
    method: str                          # counters | gauges | mixed | none
    input_per_s: float | None            # observed, summed (a source: what it emits)
    output_per_s: float | None
    busy: float | None                   # mean over subtasks
    busiest: float | None                # the busiest subtask's share of time busy
    backpressured: float | None          # mean over subtasks
    true_rate_per_subtask: float | None  # sum(records) / sum(busy seconds)
    busiest_input_share: float | None    # the busiest subtask's share of the input (1/p: even)
    busiest_input_subtask: int | None
    backlog_growth_per_s: float | None   # a source's pendingRecords growth, summed
    subtasks: tuple[SubtaskRate, ...] = ()

    @property
    def capacity_per_s(self) -> float | None:
        """What the vertex takes with every subtask busy all the time (even load)."""
        r = self.true_rate_per_subtask
        return None if r is None else r * self.parallelism

    @property
    def unblocked_output_per_s(self) -> float | None:
        """A source's output if nothing were back-pressured: per subtask ``out / (1 - bp)`` (the
        autoscaler's ScalingMetrics.computeObservedTprWithBackpressure), ``bp`` taken at most
        UNBLOCKED_MAX_BACKPRESSURE, and never above what the source takes busy all the time."""
        total = 0.0
        for s in self.subtasks:
            if s.records_per_s is None:
                return None
            bp = min(max(s.backpressured or 0.0, 0.0), UNBLOCKED_MAX_BACKPRESSURE)
            total += s.records_per_s / (1.0 - bp)
        if not self.subtasks:
            return None
        capacity = self.capacity_per_s
        return min(total, capacity) if capacity is not None else total

    @property
    def waits_for_input(self) -> bool:
        """Idle (UNBLOCKED_MAX_IDLE) while back-pressured above OK: ``out / (1 - bp)`` overstates."""
        return ((self.idle_mean or 0.0) >= UNBLOCKED_MAX_IDLE
                and (self.backpressured_max or 0.0) > LEVEL_LOW)

    @property
    def idle_mean(self) -> float | None:
        values = [s.idle for s in self.subtasks if s.idle is not None]
        return sum(values) / len(values) if values else None

    @property
    def backpressured_max(self) -> float | None:
        values = [s.backpressured for s in self.subtasks if s.backpressured is not None]
        return max(values) if values else None


def _records(s: SubtaskFacts, source: bool, counters: bool) -> float | None:
    r = s.rates
    if source:
        return r.records_out_counter if counters else r.records_out_meter
    return r.records_in_counter if counters else r.records_in_meter


def _share(counter: float | None, gauge: float | None, counters: bool) -> float | None:
    value = counter if counters else gauge
    return None if value is None else min(max(value, 0.0), 1.0)


def _busy(s: SubtaskFacts, counters: bool) -> float | None:
    r = s.rates
    if not counters and r.busy_gauge is not None:
        return min(max(r.busy_gauge, 0.0), 1.0)
    idle = _share(r.idle_counter, r.idle_gauge, counters)
    bp = _share(r.backpressured_counter, r.backpressured_gauge, counters)
    if idle is None or bp is None:
        return None
    return max(0.0, 1.0 - idle - bp)


def _method(subs: Sequence[SubtaskFacts], source: bool) -> str:
    def all_have(get) -> bool:  # type: ignore[no-untyped-def]
        return bool(subs) and all(get(s) is not None for s in subs)

    if all_have(lambda s: _records(s, source, True)) and all_have(lambda s: _busy(s, True)):
        return "counters"
    if all_have(lambda s: _records(s, source, False)) and all_have(lambda s: _busy(s, False)):
        return "gauges"
    if all_have(lambda s: _records(s, source, True)) and all_have(lambda s: _busy(s, False)):
        return "mixed"
    return "none"


def vertex_rates(v: VertexFacts, is_source: bool) -> VertexRates:
    """The rates of one vertex (module docstring)."""
    method = _method(v.subtasks, is_source)
    rec_counters = method in ("counters", "mixed")
    busy_counters = method == "counters"
    subtasks = []
    for s in v.subtasks:
        records = _records(s, is_source, rec_counters) if method != "none" else None
        busy = _busy(s, busy_counters) if method != "none" else None
        bp = _share(s.rates.backpressured_counter, s.rates.backpressured_gauge, busy_counters)
        if bp is None:
            bp = s.bp_ratio
        true_rate = records / busy if records is not None and busy and records > 0 else None
        idle = _share(s.rates.idle_counter, s.rates.idle_gauge, busy_counters)
        if idle is None and busy is not None and bp is not None:
            idle = max(0.0, 1.0 - busy - bp)
        subtasks.append(SubtaskRate(s.subtask_index, records, busy, bp, true_rate, idle))
    known = [t for t in subtasks if t.records_per_s is not None and t.busy is not None]
    records_sum = sum(t.records_per_s or 0.0 for t in known)
    busy_sum = sum(t.busy or 0.0 for t in known)
    true_rate = records_sum / busy_sum if known and busy_sum > 0 and records_sum > 0 else None
    with_records = [t for t in subtasks if t.records_per_s is not None]
    total_in = sum(t.records_per_s or 0.0 for t in with_records) if with_records else None
    hottest = max(with_records, key=lambda t: t.records_per_s or 0.0, default=None)
    share = (hottest.records_per_s / total_in
             if hottest is not None and total_in and hottest.records_per_s is not None and v.parallelism > 1
             else None)
    busy_values = [t.busy for t in subtasks if t.busy is not None]
    bp_values = [t.backpressured for t in subtasks if t.backpressured is not None]
    out = _sum(s.rates.records_out_counter if rec_counters else s.rates.records_out_meter for s in v.subtasks)
    if out is None:
        out = v.records_out_per_s
    if is_source:
        total_in = total_in if total_in is not None else out
    growth = _sum(s.rates.backlog_growth_per_s for s in v.subtasks)
    return VertexRates(
        vertex_key=v.vertex_key,
        name=v.name,
        parallelism=v.parallelism,
        is_source=is_source,
        method=method,
        input_per_s=total_in,
        output_per_s=out,
        busy=sum(busy_values) / len(busy_values) if busy_values else None,
        busiest=max(busy_values) if busy_values else None,
        backpressured=sum(bp_values) / len(bp_values) if bp_values else None,
        true_rate_per_subtask=true_rate,
        busiest_input_share=share,
        busiest_input_subtask=hottest.subtask_index if share is not None and hottest is not None else None,
        backlog_growth_per_s=growth,
        subtasks=tuple(subtasks),
    )


def _sum(values) -> float | None:  # type: ignore[no-untyped-def]
    known = [x for x in values if x is not None]
    return sum(known) if known else None
