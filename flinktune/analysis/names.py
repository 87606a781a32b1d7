"""Metric names the analysis reads, and how each accepted naming scheme maps onto them.

Pure data, no pyspark: the loader turns these tables into Spark column expressions, and the
docs and tests read them directly.

Sources (flink-facts.md §4.2, §4.3, §4.6): the buffer gauges live under the task group
``Shuffle.Netty.Input.Buffers.`` / ``Shuffle.Netty.Output.Buffers.`` (NettyShuffleMetricFactory,
Flink 1.13-2.x), with a legacy copy under ``buffers.`` up to 1.20; ``numBytesInRemote`` and
friends are registered both under ``Shuffle.Netty.Input.`` and at the task root
(InputChannelMetrics). The Prometheus reporter joins the logical scope and the metric name with
``_`` and prefixes ``flink_`` (AbstractPrometheusReporter).
"""

from __future__ import annotations

from typing import Final

# Gauges: averaged, maxed and counted against thresholds.
GAUGES: Final[tuple[str, ...]] = (
    "backPressuredTimeMsPerSecond",
    "busyTimeMsPerSecond",
    "idleTimeMsPerSecond",
    "isBackPressured",
    "backPressureRatio",  # the REST /backpressure endpoint's per-subtask ratio (older source)
    "outPoolUsage",
    "inPoolUsage",
    "inputFloatingBuffersUsage",
    "inputExclusiveBuffersUsage",
    # Meters: Flink reports them as 60 s moving-average rates; used when counters are missing
    # (a single Prometheus scrape has no counter history).
    "numRecordsInPerSecond",
    "numRecordsOutPerSecond",
    "numBytesOutPerSecond",
    "numBytesInRemotePerSecond",
    "numBuffersInRemotePerSecond",
)

# Monotonic counters: turned into rates, with counter resets (task restarts) handled.
COUNTERS: Final[tuple[str, ...]] = (
    "numRecordsIn",
    "numRecordsOut",
    "numBytesOut",
    "numBytesInRemote",
    "numBuffersInRemote",
    "numBuffersOut",
    # The task's accumulated back-pressured and idle milliseconds (TaskIOMetricGroup, 1.16+;
    # flink-facts.md): gauges that only grow (reset when the task restarts), so read as counters;
    # their rate over the window is the share of time back-pressured / idle, where the
    # ...TimeMsPerSecond gauges are 60 s moving averages (TimerGauge, 1.16+) sampled now and then.
    # Not ``accumulateBusyTimeMs``: Flink computes it as time since the task started less these two,
    # whose TimerGauges add a period only when it ends or every 5 s (View.UPDATE_INTERVAL_SECONDS),
    # so it drops back by up to 5 s at each such update: no counter (read as one, each drop would
    # look like a reset). Busy time is 1 - idle - back-pressured of these two instead.
    "accumulateBackPressuredTimeMs",
    "accumulateIdleTimeMs",
)

# Levels: gauges whose net change over the window is read, as well as their mean. A source's
# backlog (FLIP-33's ``pendingRecords``, operator-scoped: the Kafka / Pulsar / Kinesis readers
# register it) growing means the source receives more than the job takes: its growth rate plus the
# source's output is the rate the job must sustain (the Kubernetes operator's autoscaler:
# ScalingMetricEvaluator.computeTargetDataRate, "inputRate + lagRate").
LEVELS: Final[tuple[str, ...]] = ("pendingRecords",)
# Operator-scoped metrics read under any operator's name (``Source__Gen.pendingRecords``).
OPERATOR_METRICS: Final[tuple[str, ...]] = LEVELS

METRICS: Final[tuple[str, ...]] = GAUGES + COUNTERS + LEVELS

# Which counter a meter stands in for when the counter itself is absent.
METER_FOR_COUNTER: Final[dict[str, str]] = {
    "numRecordsIn": "numRecordsInPerSecond",
    "numRecordsOut": "numRecordsOutPerSecond",
    "numBytesOut": "numBytesOutPerSecond",
    "numBytesInRemote": "numBytesInRemotePerSecond",
    "numBuffersInRemote": "numBuffersInRemotePerSecond",
}

# (low, high) cut-offs per gauge, counted per sample: the share of samples above each tells
# sustained from temporary. Back pressure uses the web UI's levels: OK <= 0.10 < LOW <= 0.50 <
# HIGH (JobVertexBackPressureHandler, flink-facts.md §4.5), here in ms per second.
THRESHOLDS: Final[dict[str, tuple[float, float]]] = {
    "backPressuredTimeMsPerSecond": (100.0, 500.0),
    "busyTimeMsPerSecond": (100.0, 500.0),
    "idleTimeMsPerSecond": (100.0, 500.0),
    "isBackPressured": (0.5, 0.5),
    "backPressureRatio": (0.10, 0.50),
    "outPoolUsage": (0.5, 0.9),
    "inPoolUsage": (0.5, 0.9),
    "inputFloatingBuffersUsage": (0.5, 0.9),
    "inputExclusiveBuffersUsage": (0.5, 0.9),
}

# Group prefixes of task-scoped metrics (REST ids and full identifiers, '.'-separated) and the
# preference among duplicates: the current Shuffle.Netty group first, then the task root, then
# the legacy ``buffers.`` copy (gone in 2.0).
GROUP_RANK: Final[dict[str, int]] = {
    "Shuffle.Netty.Input.Buffers.": 0,
    "Shuffle.Netty.Output.Buffers.": 0,
    "Shuffle.Netty.Input.": 0,
    "": 1,
    "buffers.": 2,
}
# Ranks are below this; the aggregation keys a series by metric index * RANK_SPAN + rank.
RANK_SPAN: Final[int] = 8
assert max(GROUP_RANK.values()) < RANK_SPAN
# REST name of the back-pressure endpoint's ratio as written by collectors (``bp.ratio``).
ALIASES: Final[dict[str, str]] = {"bp.ratio": "backPressureRatio"}

PROMETHEUS_TASK_PREFIX: Final[str] = "flink_taskmanager_job_task_"
PROMETHEUS_OPERATOR_PREFIX: Final[str] = "flink_taskmanager_job_task_operator_"

# Prometheus label -> canonical column (AbstractPrometheusReporter / ScopeFormat variables).
PROMETHEUS_LABELS: Final[dict[str, str]] = {
    "job_id": "job_id",
    "job_name": "job_name",
    "task_id": "vertex_id",
    "task_name": "task_name",
    "subtask_index": "subtask_index",
    "tm_id": "tm_id",
    "host": "host",
}

# Canonical long schema (DESIGN.md): column -> type name.
CANONICAL_COLUMNS: Final[dict[str, str]] = {
    "ts": "bigint",
    "job_id": "string",
    "job_name": "string",
    "vertex_id": "string",
    "task_name": "string",
    "subtask_index": "int",
    "tm_id": "string",
    "host": "string",
    "metric": "string",
    "value": "double",
}

# Column names accepted as synonyms when reading other tools' exports.
COLUMN_SYNONYMS: Final[dict[str, tuple[str, ...]]] = {
    "ts": ("ts", "timestamp", "time", "ts_ms"),
    "metric": ("metric", "__name__", "name", "metric_name"),
    "value": ("value", "val"),
    "vertex_id": ("vertex_id", "task_id"),
    "subtask_index": ("subtask_index", "subtask"),
}
