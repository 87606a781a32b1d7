"""Which task metrics `collect` asks Flink's REST API for, and their canonical short names.

REST metric ids are the metric group path plus the name, relative to the task scope
(flink-facts.md §4.4, MetricStore @1.20): e.g. ``Shuffle.Netty.Output.Buffers.outPoolUsage``.
Flink <= 1.20 also registers legacy copies under ``buffers.*`` and task-root copies of the
``numBytesIn{Local,Remote}`` / ``numBuffersIn{Local,Remote}`` counters; 2.x dropped ``buffers.*``
(FLINK-36355, NettyShuffleMetricFactory @2.0). We ask for both spellings and keep the current one
when both answer, so each (subtask, metric) gets exactly one row.
"""

from __future__ import annotations

from dataclasses import dataclass

# Group prefixes stripped to get the canonical short name (DESIGN.md: "canonical short Flink name").
_PREFIXES: tuple[str, ...] = (
    "Shuffle.Netty.Input.Buffers.",
    "Shuffle.Netty.Output.Buffers.",
    "Shuffle.Netty.Input.",
    "Shuffle.Netty.Output.",
    "buffers.",
)


# Operator-scoped metrics collected under any operator's name (``Source__Gen.pendingRecords``, the
# FLIP-33 backlog of a source reader): a vertex has one source operator, so the short name is kept.
OPERATOR_METRICS: tuple[str, ...] = ("pendingRecords",)


def canonical_name(rest_id: str) -> str:
    """``Shuffle.Netty.Input.Buffers.inPoolUsage`` -> ``inPoolUsage``; unknown ids are kept as they are."""
    for name in OPERATOR_METRICS:
        if rest_id.endswith("." + name):
            return name
    for prefix in _PREFIXES:
        if rest_id.startswith(prefix) and len(rest_id) > len(prefix):
            return rest_id[len(prefix) :]
    return rest_id


@dataclass(frozen=True)
class MetricSpec:
    """One canonical metric and the REST ids that carry it, most preferred first."""

    name: str
    rest_ids: tuple[str, ...]


def _buffers(name: str, direction: str) -> MetricSpec:
    # Shuffle.Netty.<Input|Output>.Buffers.* exists in every supported version; buffers.* only <= 1.20.
    return MetricSpec(name, (f"Shuffle.Netty.{direction}.Buffers.{name}", f"buffers.{name}"))


def _channel_counter(name: str) -> MetricSpec:
    # InputChannelMetrics @1.20 registers these under Shuffle.Netty.Input and (deprecated) at the task root.
    return MetricSpec(name, (f"Shuffle.Netty.Input.{name}", name))


def _plain(name: str) -> MetricSpec:
    return MetricSpec(name, (name,))


# What the analysis uses (issue 5: backpressure status, busy/idle, pool usages, counter rates,
# buffer fill, record size). Names from NettyShuffleMetricFactory, TaskIOMetricGroup and
# MetricNames @1.20 (flink-facts.md §4.2).
DEFAULT_METRICS: tuple[MetricSpec, ...] = (
    _buffers("outPoolUsage", "Output"),
    _buffers("outputQueueLength", "Output"),
    _buffers("outputQueueSize", "Output"),
    _buffers("inPoolUsage", "Input"),
    _buffers("inputFloatingBuffersUsage", "Input"),
    _buffers("inputExclusiveBuffersUsage", "Input"),
    _buffers("inputQueueLength", "Input"),
    _buffers("inputQueueSize", "Input"),
    _plain("backPressuredTimeMsPerSecond"),
    _plain("softBackPressuredTimeMsPerSecond"),
    _plain("hardBackPressuredTimeMsPerSecond"),
    _plain("busyTimeMsPerSecond"),
    _plain("idleTimeMsPerSecond"),
    # Accumulated back-pressured / idle time (TaskIOMetricGroup, 1.16+): shares of time between two
    # polls, where the ...PerSecond gauges are 60 s moving averages (TimerGauge). Busy time is the
    # rest (accumulateBusyTimeMs is not monotonic: flinktune.analysis.names).
    _plain("accumulateBackPressuredTimeMs"),
    _plain("accumulateIdleTimeMs"),
    _plain("isBackPressured"),
    _plain("numRecordsIn"),
    _plain("numRecordsOut"),
    _plain("numRecordsInPerSecond"),
    _plain("numRecordsOutPerSecond"),
    _plain("numBytesIn"),
    _plain("numBytesOut"),
    _plain("numBytesInPerSecond"),
    _plain("numBytesOutPerSecond"),
    _plain("numBuffersOut"),
    _plain("numBuffersOutPerSecond"),
    _channel_counter("numBytesInLocal"),
    _channel_counter("numBytesInRemote"),
    _channel_counter("numBuffersInLocal"),
    _channel_counter("numBuffersInRemote"),
    _channel_counter("numBytesInLocalPerSecond"),
    _channel_counter("numBytesInRemotePerSecond"),
    _channel_counter("numBuffersInLocalPerSecond"),
    _channel_counter("numBuffersInRemotePerSecond"),
)


def metric_specs(extra_rest_ids: tuple[str, ...] = ()) -> tuple[MetricSpec, ...]:
    """The default set plus the user's ``--metric`` ids (each its own spec, named canonically)."""
    specs = list(DEFAULT_METRICS)
    known = {rid for spec in specs for rid in spec.rest_ids}
    for rest_id in extra_rest_ids:
        rest_id = rest_id.strip()
        if rest_id and rest_id not in known:
            specs.append(MetricSpec(canonical_name(rest_id), (rest_id,)))
            known.add(rest_id)
    return tuple(specs)


def operator_metric_ids(available: list[str]) -> tuple[str, ...]:
    """The operator-scoped ids among a vertex's ``available`` metric ids that `collect` reads
    (OPERATOR_METRICS), e.g. ``Source__Gen.pendingRecords``."""
    return tuple(sorted(i for i in available for name in OPERATOR_METRICS if i.endswith("." + name)))


def pick_values(specs: tuple[MetricSpec, ...], answered: dict[str, float]) -> list[tuple[str, float]]:
    """One (canonical name, value) per spec that Flink answered, preferring the first REST id."""
    picked: list[tuple[str, float]] = []
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            continue
        for rest_id in spec.rest_ids:
            if rest_id in answered:
                picked.append((spec.name, answered[rest_id]))
                seen.add(spec.name)
                break
    return picked


def parse_metric_value(text: object) -> float | None:
    """REST metric values are strings: numbers, ``NaN``, or ``true``/``false`` (e.g. isBackPressured)."""
    if isinstance(text, bool):
        return 1.0 if text else 0.0
    if isinstance(text, int | float):
        return float(text)
    if not isinstance(text, str):
        return None
    lowered = text.strip().lower()
    if lowered == "true":
        return 1.0
    if lowered == "false":
        return 0.0
    try:
        return float(text)
    except ValueError:
        return None
