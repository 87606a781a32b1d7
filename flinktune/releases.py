"""What changed in which Flink release, for everything flinktune models: the one table.

Each behaviour that depends on the version is one ``Change``: the release it arrived in, what it is,
and where that is stated (tags of /work/shared/reference/flink-facts.md: ``M:<v>`` apache/flink at the
release cut, ``RN`` release notes, JIRA ids). Code asks the change, never compares with a literal
version: ``if OVERDRAFT_BUFFERS.applies(version)``.

Adding a Flink release is one entry in ``flinktune.versions.PATCH_RELEASES`` and its option catalog
(``flinktune/data``); a release that changes something flinktune models adds one ``Change`` here,
and the code that models it asks for it.
"""

from __future__ import annotations

from flinktune.versions import FlinkVersion


class Change:
    """A behaviour that starts with release ``since`` (and holds in every later one)."""

    __slots__ = ("since", "source", "what")

    def __init__(self, since: FlinkVersion, what: str, source: str) -> None:
        self.since, self.what, self.source = since, what, source

    def applies(self, version: FlinkVersion) -> bool:
        return version >= self.since

    def __repr__(self) -> str:
        return f"Change({self.since}, {self.what!r})"


# --- 1.14 -------------------------------------------------------------------------------------------
DEBLOATING = Change(
    FlinkVersion(1, 14),
    "buffer debloating (taskmanager.network.memory.buffer-debloat.*)",
    "TMO @M:1.14; FLIP-183")

# --- 1.15 -------------------------------------------------------------------------------------------
SORT_SHUFFLE_DEFAULT = Change(
    FlinkVersion(1, 15),
    "batch shuffles are sort-merge by default: sort-shuffle.min-parallelism 1 (was "
    "Integer.MAX_VALUE), sort-shuffle.min-buffers 512 (was 64), batch-shuffle read memory 64m "
    "(was 32m)",
    "NSEO and TMO @M:1.14 vs M:1.15; docs ops/batch/blocking_shuffle @M:1.15")
SORT_PARTITION_BOUNDED = Change(
    FlinkVersion(1, 15),
    "a sort-merge result partition's pool is bounded by max(min-buffers, 4 x subpartitions) "
    "(unbounded before)",
    "NettyShuffleUtils @M:1.15")

# --- 1.16 -------------------------------------------------------------------------------------------
OVERDRAFT_BUFFERS = Change(
    FlinkVersion(1, 16),
    "overdraft buffers (max-overdraft-buffers-per-gate, default 5)",
    "NSEO @M:1.16; FLINK-26762")

# --- 1.17 -------------------------------------------------------------------------------------------
GATE_REQUIRED_MAX = Change(
    FlinkVersion(1, 17),
    "an input gate's required buffers are capped (read-buffer.required-per-gate.max; 1000 for "
    "blocking gates), exclusive buffers become floating above the cap, and "
    "floating-buffers-per-gate must be at least 1",
    "NSEO, InputGateSpecUtils @M:1.17; FLINK-30473")
PARALLELISM_OVERRIDES = Change(
    FlinkVersion(1, 17),
    "pipeline.jobvertex-parallelism-overrides (JobVertexID:parallelism) applied by the Dispatcher",
    "PipelineOptions.PARALLELISM_OVERRIDES @M:1.17; FLINK-29501")
NETWORK_MAX_UNBOUNDED = Change(
    FlinkVersion(1, 17),
    "taskmanager.memory.network.max defaults to unbounded (was 1g)",
    "TMO @M:1.16 vs M:1.17; FLINK-30472")

# --- 1.18 -------------------------------------------------------------------------------------------
BUFFER_TIMEOUT_SWITCH = Change(
    FlinkVersion(1, 18),
    "execution.buffer-timeout.enabled / .interval (flush only when full from a config file; batch"
    " runtime turns the timeout off)",
    "ExecutionOptions @M:1.18; FLINK-32023, PR#22560")
HYBRID_TIERED = Change(
    FlinkVersion(1, 18),
    "hybrid shuffle's new mode (tiered storage) is the default; a tiered partition requires "
    "min(tiered exclusive buffers, subpartitions + 1)",
    "NSEO, NettyShuffleUtils @M:1.18")
ADAPTIVE_MAX_FROM_DEFAULT = Change(
    FlinkVersion(1, 18),
    "the adaptive batch scheduler's max parallelism falls back to parallelism.default when that "
    "is set and the max is not",
    "AdaptiveBatchSchedulerFactory.getDefaultMaxParallelism @M:1.18")

# --- 1.19 -------------------------------------------------------------------------------------------
CONFIG_YAML = Change(
    FlinkVersion(1, 19),
    "config.yaml (standard YAML) is read",
    "GlobalConfiguration @M:1.19; FLINK-33577")

# --- 1.20 -------------------------------------------------------------------------------------------
BUFFER_OPTIONS_DEPRECATED = Change(
    FlinkVersion(1, 20),
    "buffers-per-channel, floating-buffers-per-gate, max-buffers-per-channel and max-overdraft-"
    "buffers-per-gate are deprecated (removed in 2.0)",
    "NSEO @M:1.20 (@deprecated)")

# --- 2.0 --------------------------------------------------------------------------------------------
BUFFERS_FIXED = Change(
    FlinkVersion(2, 0),
    "buffers-per-channel (2), floating-buffers-per-gate (8), max-buffers-per-channel (10), "
    "max-overdraft-buffers-per-gate (20) and sort-shuffle.min-parallelism (1) are hard-coded: the"
    " options were removed",
    "NettyShuffleEnvironmentConfiguration @M:2.0p; RN 2.0")
LEGACY_OPTIONS_REMOVED = Change(
    FlinkVersion(2, 0),
    "the legacy memory keys (taskmanager.heap.size ...) and taskmanager.network.numberOfBuffers "
    "are gone",
    "RN 2.0; FLINK-33750")
ONLY_CONFIG_YAML = Change(
    FlinkVersion(2, 0),
    "only config.yaml is read (flink-conf.yaml is not)",
    "RN 2.0; FLINK-33677")
LEGACY_HYBRID_REMOVED = Change(
    FlinkVersion(2, 0),
    "the legacy hybrid shuffle mode is gone: hybrid is always tiered",
    "ResultPartitionFactory @2.3.0; RN 2.0")
LEGACY_STATE_BACKEND_NAMES = Change(
    FlinkVersion(2, 0),
    "the legacy state backend names (state.backend: jobmanager, filesystem) are gone",
    "StateBackendLoader @M:2.0p; RN 2.0")
STREAM_GRAPH_SUBMISSION = Change(
    FlinkVersion(2, 0),
    "clients submit the StreamGraph: pipeline.jobvertex-parallelism-overrides is ignored for them",
    "Dispatcher.internalSubmitJob in flink-dist 2.3.0; FLINK-38770 (measured on 2.3 by "
    "tests/e2e_flink/test_parallelism.py)")
JAVA_11_MINIMUM = Change(
    FlinkVersion(2, 0),
    "Java 8 support dropped: Java 11 is the oldest runtime",
    "RN 2.0")

# --- 2.3 -------------------------------------------------------------------------------------------
ADAPTIVE_PARTITIONER = Change(
    FlinkVersion(2, 3),
    "taskmanager.network.adaptive-partitioner.enabled: rebalance / rescale to the channel with the least "
    "backlog",
    "NettyShuffleEnvironmentOptions @2.3.0 (flinktune/data/flink_options.json); FLIP-339")

CHANGES: tuple[Change, ...] = tuple(value for value in list(globals().values()) if isinstance(value, Change))
