"""What a simulation run returns: samples like a metrics reporter's, and summary statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from flinktune.sim.scenario import Scenario

# Flink's short canonical metric names (flink-facts.md §4.2), what the dump's ``metric`` holds.
GAUGES = ("outPoolUsage", "inPoolUsage", "inputExclusiveBuffersUsage", "inputFloatingBuffersUsage",
          "backPressuredTimeMsPerSecond", "busyTimeMsPerSecond", "idleTimeMsPerSecond",
          "isBackPressured", "checkpointAlignmentTime")
COUNTERS = ("numRecordsIn", "numRecordsOut", "numBytesOut", "numBytesInLocal", "numBytesInRemote",
            "numBuffersOut", "numBuffersInLocal", "numBuffersInRemote")


def percentiles(values: list[float] | np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"p50": float("nan"), "p90": float("nan"), "p99": float("nan"), "max": float("nan")}
    arr = np.asarray(values, dtype=np.float64)
    p50, p90, p99 = np.percentile(arr, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99), "max": float(arr.max())}


@dataclass(frozen=True)
class ChannelStats:
    producer: str
    consumer: str
    from_subtask: int
    to_subtask: int
    remote: bool
    records: int
    bytes: int
    buffers: int
    records_per_s: float          # steady state (after warm-up)
    bytes_per_s: float
    latency_s: dict[str, float]   # written into the channel -> deserialised
    max_credit: int


@dataclass(frozen=True)
class VertexStats:
    name: str
    vertex_id: str
    parallelism: int
    records_in_per_s: float
    records_out_per_s: float
    latency_s: dict[str, float]   # source -> deserialised here
    busy_ms_per_s: float
    backpressured_ms_per_s: float
    idle_ms_per_s: float
    out_pool_usage: float
    in_pool_usage: float


@dataclass(frozen=True)
class Samples:
    """Long-format samples: one row per (time, vertex, subtask, metric)."""

    t_s: np.ndarray            # float64 simulated seconds
    vertex: np.ndarray         # int32 index into the job's vertices
    subtask: np.ndarray        # int32
    metric: np.ndarray         # int32 index into ``metric_names``
    value: np.ndarray          # float64
    metric_names: tuple[str, ...]

    def series(self, metric: str, vertex: int, subtask: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(times, values) of one metric; mean over subtasks when ``subtask`` is None."""
        code = self.metric_names.index(metric)
        mask = (self.metric == code) & (self.vertex == vertex)
        if subtask is not None:
            mask &= self.subtask == subtask
            return self.t_s[mask], self.value[mask]
        times, inverse = np.unique(self.t_s[mask], return_inverse=True)
        values = self.value[mask]
        ok = ~np.isnan(values)
        sums = np.bincount(inverse[ok], weights=values[ok], minlength=len(times))
        counts = np.bincount(inverse[ok], minlength=len(times))
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        return times, means

    def rate(self, counter: str, vertex: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-interval rate (per second) of a cumulative counter summed over subtasks."""
        code = self.metric_names.index(counter)
        mask = (self.metric == code) & (self.vertex == vertex)
        times, inverse = np.unique(self.t_s[mask], return_inverse=True)
        totals = np.bincount(inverse, weights=self.value[mask], minlength=len(times))
        prev_t = np.concatenate([[0.0], times[:-1]])
        prev_v = np.concatenate([[0.0], totals[:-1]])
        return times, (totals - prev_v) / (times - prev_t)


@dataclass(frozen=True)
class Invariants:
    fifo_violations: int
    records_conserved: bool
    drained: bool
    detail: str = ""


@dataclass(frozen=True)
class SimResult:
    scenario: Scenario
    job_id: str
    vertex_ids: tuple[str, ...]
    placement: tuple[tuple[int, ...], ...]     # placement[v][subtask] = TaskManager index
    samples: Samples
    channels: tuple[ChannelStats, ...]
    vertices: tuple[VertexStats, ...]
    events_processed: int
    wall_s: float
    invariants: Invariants
    checkpoints_completed: int = 0
    extra: dict[str, float] = field(default_factory=dict)

    def channel(self, producer_subtask: int, consumer_subtask: int, edge: int = 0) -> ChannelStats:
        """The channel of edge ``edge`` (0 = out of the source) between two subtasks."""
        producer = self.scenario.job.vertices[edge].name
        for stat in self.channels:
            if (stat.producer == producer and stat.from_subtask == producer_subtask
                    and stat.to_subtask == consumer_subtask):
                return stat
        raise KeyError((producer_subtask, consumer_subtask, edge))

    def tm_host(self, tm: int) -> tuple[str, str]:
        """(tm_id, host) as the dump names them."""
        host = f"sim-tm-{tm + 1}"
        return f"{host}:6122-{self.job_id[tm % 26:tm % 26 + 6]}", host
