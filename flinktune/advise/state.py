"""One candidate configuration as Flink reads it, and the model's numbers for it.

The advisor builds a ``ConfigState`` for the user's file and again after each proposed change, so
every change can show its effect as model numbers before and after (docs/model.md has the formulas):

- per-channel credit ceiling ``(bpc + fpg/C) * segment / rtt`` and the channel throughput
  ``min(ceiling, bandwidth / remote channels)`` (model.credit);
- added latency per exchange ``min(fill time, buffer timeout)`` (model.timeout);
- in-flight data of one input gate ``(C*bpc + fpg) * segment`` (``throughput * target`` with buffer
  debloating) and its drain time ``in-flight / consume rate`` (model.inflight);
- network memory the busiest TaskManager needs (Flink's buffer formula, model.buffers) versus what
  its memory configuration gives (model.memory).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from flinktune.config.catalog import Catalog
from flinktune.config.effective import EffectiveConfig
from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigFormat, ConfigValue
from flinktune.errors import FlinktuneError, ModelInputError
from flinktune.model import buffers as mb
from flinktune.model.batch import BatchDemand, batch_taskmanager_buffers, stage_bound
from flinktune.model.layout import busiest_taskmanager_buffers
from flinktune.model.memory import TaskManagerMemory, derive_taskmanager_memory, taskmanager_memory_options
from flinktune.model.timeout_mode import BufferTimeoutMode, buffer_timeout_mode
from flinktune.releases import (
    BUFFER_TIMEOUT_SWITCH,
    DEBLOATING,
)
from flinktune.versions import FlinkVersion

KEY_SEGMENT = "taskmanager.memory.segment-size"
KEY_SLOTS = "taskmanager.numberOfTaskSlots"
KEY_PARALLELISM = "parallelism.default"
KEY_RUNTIME_MODE = "execution.runtime-mode"
KEY_BATCH_SHUFFLE_MODE = "execution.batch-shuffle-mode"
KEY_TIMEOUT_OLD = "execution.buffer-timeout"
KEY_TIMEOUT_INTERVAL = "execution.buffer-timeout.interval"
KEY_TIMEOUT_ENABLED = "execution.buffer-timeout.enabled"
KEY_DEBLOAT = "taskmanager.network.memory.buffer-debloat.enabled"
KEY_DEBLOAT_TARGET = "taskmanager.network.memory.buffer-debloat.target"
KEY_MIN_SEGMENT = "taskmanager.memory.min-segment-size"
KEY_NET_MIN = "taskmanager.memory.network.min"
KEY_NET_MAX = "taskmanager.memory.network.max"
KEY_NET_FRACTION = "taskmanager.memory.network.fraction"
KEY_PROCESS = "taskmanager.memory.process.size"
KEY_FLINK = "taskmanager.memory.flink.size"
KEY_READ = "taskmanager.memory.framework.off-heap.batch-shuffle.size"
KEY_FRAMEWORK_OFF_HEAP = "taskmanager.memory.framework.off-heap.size"
KEY_LEGACY_BUFFERS = "taskmanager.network.numberOfBuffers"

DEFAULT_SEGMENT = 32 * 1024
DEBLOAT_DEFAULT_TARGET_S = 1.0     # TaskManagerOptions BUFFER_DEBLOAT_TARGET, 1.14+


@dataclass(frozen=True)
class Job:
    """The job facts every state shares (from the environment, the plan, the dump)."""

    parallelism: int
    slots: int
    taskmanagers: int
    exchanges: int
    workload: str                      # streaming | batch
    rtt_s: float
    bandwidth_bytes_per_s: float
    rate_per_subtask: float | None     # records/s one producer subtask emits
    record_bytes: float | None
    latency_target_s: float | None
    skew: float | None
    graph: mb.JobGraph | None = None
    multi_input_vertices: tuple[str, ...] = ()
    # Where each subtask ran ((vertex_id, subtask) -> TaskManager), from the dump's job.json.
    placement: mb.Placement | None = None
    exchanges_source: str = "default"  # plan | flag | profile | project | default (the bound)
    deployment: str = "standalone"     # where the legacy heap keys go (flinktune.situation.legacy)

    @property
    def per_taskmanager(self) -> int:
        return min(self.slots, self.parallelism)

    @property
    def remote_channels_per_taskmanager(self) -> int:
        k = self.per_taskmanager
        return k * max(self.parallelism - k, 0) * self.exchanges

    @property
    def consume_bytes_per_s(self) -> float | None:
        """What one consumer subtask takes in (equal parallelism on both sides)."""
        if self.rate_per_subtask is None or self.record_bytes is None:
            return None
        return self.rate_per_subtask * self.record_bytes

    @property
    def channel_offered_bytes_per_s(self) -> float | None:
        consume = self.consume_bytes_per_s
        return None if consume is None else consume / self.parallelism


def document_from_values(values: Mapping[str, ConfigValue], path: str, fmt: ConfigFormat,
                         origin: ConfigDocument | None = None) -> ConfigDocument:
    """A document holding ``values``; entries unchanged from ``origin`` keep their file and line."""
    entries = []
    for key, value in values.items():
        old = origin.get(key) if origin is not None else None
        if old is not None and old.value == value:
            entries.append(old)
        else:
            entries.append(ConfigEntry(key, value, "" if value is None else str(value), path, 0))
    return ConfigDocument(path=path, format=fmt, entries=tuple(entries))


@dataclass(frozen=True)
class ConfigState:
    """``values`` (key -> value as a file would hold it) read by one Flink version."""

    values: Mapping[str, ConfigValue]
    version: FlinkVersion
    catalog: Catalog
    job: Job
    path: str = "<recommended>"
    format: ConfigFormat = ConfigFormat.FLAT
    memory_overlay: Mapping[str, ConfigValue] = field(default_factory=dict)  # e.g. the operator's TM size
    origin: ConfigDocument | None = None
    eff: EffectiveConfig = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        doc = document_from_values(self.values, self.path, self.format, self.origin)
        object.__setattr__(self, "eff", EffectiveConfig(doc, self.version, self.catalog))

    # ------------------------------------------------------------------ options

    def exists(self, key: str) -> bool:
        return self.catalog.lookup(key, self.version).kind in ("option", "deprecated-alias", "fallback-alias")

    def integer(self, key: str) -> int | None:
        return self.eff.integer(key) if self.exists(key) else None

    def is_set(self, key: str) -> bool:
        return self.exists(key) and self.eff.is_set(key)

    @property
    def segment_bytes(self) -> int:
        return self.eff.memory_bytes(KEY_SEGMENT) or DEFAULT_SEGMENT

    @cached_property
    def settings(self) -> mb.BufferSettings:
        def given(key: str) -> int | None:
            return self.eff.integer(key) if self.is_set(key) else None

        return mb.settings_from(self.version, given)

    @property
    def timeout(self) -> BufferTimeoutMode:
        batch = self.job.workload == "batch"
        if not BUFFER_TIMEOUT_SWITCH.applies(self.version):
            duration = self.eff.duration(KEY_TIMEOUT_OLD)
            return buffer_timeout_mode(self.version,
                                       interval_s=None if duration is None else duration.seconds,
                                       batch_runtime=batch)
        duration = self.eff.duration(KEY_TIMEOUT_INTERVAL)
        return buffer_timeout_mode(self.version, interval_s=None if duration is None else duration.seconds,
                                   enabled=self.eff.boolean(KEY_TIMEOUT_ENABLED), batch_runtime=batch)

    @property
    def debloat(self) -> bool:
        return DEBLOATING.applies(self.version) and bool(self.eff.boolean(KEY_DEBLOAT))

    @property
    def debloat_target_s(self) -> float:
        duration = self.eff.duration(KEY_DEBLOAT_TARGET) if DEBLOATING.applies(self.version) else None
        return DEBLOAT_DEFAULT_TARGET_S if duration is None else duration.seconds

    # ------------------------------------------------------------------ memory and demand

    def memory_source(self) -> dict[str, ConfigValue]:
        """Raw values the memory model reads: the file's keys this version knows, plus the overlay."""
        out: dict[str, ConfigValue] = {}
        for key, value in self.values.items():
            if self.exists(key):
                out[key] = value
        out.update(self.memory_overlay)
        legacy = legacy_heap(out, self.version, self.job.deployment)
        if legacy is not None:
            out[legacy[1]] = legacy[2]
        return out

    # A state is frozen: what is derived from it is computed once (a recommendation asks for a state's
    # memory, demand and fit several times: for its snapshot, the steps, the verdict).

    @cached_property
    def _derived_memory(self) -> tuple[TaskManagerMemory | None, FlinktuneError | None]:
        try:
            options = taskmanager_memory_options(self.memory_source())
            return derive_taskmanager_memory(options, self.version), None
        except FlinktuneError as error:
            return None, error

    @property
    def memory(self) -> TaskManagerMemory:
        """Flink's derivation; raises MemoryConfigError (Flink's text) when Flink would refuse."""
        memory, error = self._derived_memory
        if error is not None:
            raise error
        return memory  # type: ignore[return-value]

    def memory_or_error(self) -> tuple[TaskManagerMemory | None, str | None]:
        memory, error = self._derived_memory
        return memory, None if error is None else error.message

    @property
    def batch_demand(self) -> BatchDemand | None:
        """A blocking batch job's demand per pipelined region (model.batch); None otherwise."""
        return self.batch_demand_for(self.settings)

    @cached_property
    def _batch_demands(self) -> dict[mb.BufferSettings, BatchDemand | None]:
        return {}

    def batch_demand_for(self, settings: mb.BufferSettings) -> BatchDemand | None:
        """``batch_demand`` with other buffer settings (what-if sizing of sort-shuffle.min-buffers)."""
        if settings not in self._batch_demands:
            self._batch_demands[settings] = self._batch_demand_for(settings)
        return self._batch_demands[settings]

    def _batch_demand_for(self, settings: mb.BufferSettings) -> BatchDemand | None:
        job = self.job
        if job.workload != "batch":
            return None
        try:
            mode = (self.eff.string(KEY_BATCH_SHUFFLE_MODE) or "").upper() if self.is_set(
                KEY_BATCH_SHUFFLE_MODE) else ""
        except FlinktuneError:
            mode = ""
        if mode not in ("", "ALL_EXCHANGES_BLOCKING"):
            return None
        if job.graph is not None:
            if not any(e.partition_type is mb.PartitionType.BLOCKING for e in job.graph.edges):
                return None
            if job.placement is not None:
                try:
                    return batch_taskmanager_buffers(job.graph, settings, job.slots, placement=job.placement)
                except ModelInputError:
                    pass
            return batch_taskmanager_buffers(job.graph, settings, job.slots, taskmanagers=job.taskmanagers)
        inputs = 1 if job.exchanges <= 1 else 2
        return stage_bound(job.parallelism, job.slots, job.taskmanagers, settings, inputs=inputs)

    def fit(self, total_buffers: int) -> mb.NetworkFit:
        """Flink's verdict on the demand (a batch job fails at its first stage that does not fit)."""
        batch = self.batch_demand
        if batch is not None:
            return batch.fit(total_buffers, self.segment_bytes)
        return mb.fits(self.demand, total_buffers, self.segment_bytes)

    @cached_property
    def demand(self) -> mb.TaskManagerBuffers:
        """Buffers the busiest TaskManager needs: from the plan, else the worst case (model.buffers)."""
        batch = self.batch_demand
        if batch is not None:
            return batch.busiest
        settings = self.settings
        job = self.job
        if job.graph is not None:
            return busiest_taskmanager_buffers(job.graph, settings, job.slots, placement=job.placement)
        types = ([mb.PartitionType.PIPELINED_BOUNDED] if job.workload == "streaming"
                 # A batch job's exchanges are blocking by default; the pipelined case also covers
                 # execution.batch-shuffle-mode ALL_EXCHANGES_PIPELINED and what `lint` checks.
                 else [mb.PartitionType.BLOCKING, mb.PartitionType.PIPELINED_BOUNDED])
        cases = [mb.worst_case_taskmanager_buffers(job.parallelism, job.slots, settings,
                                                   exchanges=job.exchanges, partition_type=t) for t in types]
        return max(cases, key=lambda d: (d.required, d.target))

    # ------------------------------------------------------------------ model numbers

    def snapshot(self) -> dict[str, float | None]:
        """The numbers a change is judged by (None where an input is unknown)."""
        job = self.job
        out: dict[str, float | None] = {}
        try:
            settings = self.settings
        except ModelInputError:
            return out
        seg = self.segment_bytes
        p = job.parallelism
        credits = settings.buffers_per_channel + settings.floating_per_gate / p
        if job.workload == "streaming":
            # The vectorised model (numpy): a batch job's numbers do not need it.
            from flinktune.model import credit, inflight, timeout

            ceiling = float(credit.credit_ceiling_bytes_per_s(credits, seg, job.rtt_s))
            out["channel_ceiling_bytes_per_s"] = ceiling
            remote = job.remote_channels_per_taskmanager
            share = job.bandwidth_bytes_per_s / remote if remote else math.inf
            out["channel_throughput_bytes_per_s"] = min(ceiling, share)
            mode = self.timeout
            t_eff = mode.effective_timeout_s
            offered = job.channel_offered_bytes_per_s
            if offered and job.record_bytes:
                lam = offered / job.record_bytes
                out["added_latency_s"] = float(timeout.added_latency_s(lam, job.record_bytes, seg, t_eff)[1])
            else:
                out["added_latency_s"] = t_eff          # an upper bound without a rate
            gate = float(inflight.gate_inflight_bytes(p, settings.buffers_per_channel,
                                                      settings.floating_per_gate, seg))
            consume = job.consume_bytes_per_s
            if self.debloat and consume:
                gate = min(gate, float(inflight.debloated_inflight_bytes(consume, self.debloat_target_s)))
            out["gate_inflight_bytes"] = gate
            out["drain_time_s"] = float(inflight.drain_time_s(gate, consume)) if consume else None
        try:
            demand = self.demand
        except ModelInputError:
            demand = None
        if demand is not None:
            out["network_needed_bytes"] = float(demand.required * seg)
            out["network_target_bytes"] = float(demand.target * seg)
        memory, _error = self.memory_or_error()
        if memory is not None:
            out["network_available_bytes"] = float(memory.network_buffers * seg)
            out["task_heap_bytes"] = float(memory.task_heap_bytes)
        return out


LEGACY_HEAP_KEYS = ("taskmanager.heap.size", "taskmanager.heap.mb")


def legacy_heap(values: Mapping[str, ConfigValue], version: FlinkVersion,
                deployment: str = "standalone") -> tuple[str, str, str] | None:
    """(legacy key, the key Flink maps it to, value) when a pre-1.10 TaskManager heap key sizes the
    TaskManager, as flinktune.situation.legacy maps it (standalone: total Flink memory; Kubernetes
    / YARN: process size; only when the new key is not set; 1.x only)."""
    from flinktune.config.types import ConfigEntry
    from flinktune.situation.legacy import legacy_heap_entries

    entries = tuple(ConfigEntry(k, v, "" if v is None else str(v), "<values>", 0) for k, v in values.items())
    doc = ConfigDocument(path="<values>", format=ConfigFormat.FLAT, entries=entries)
    mapped, _notes = legacy_heap_entries(doc, version, deployment, lambda key: values.get(key) is not None)
    for entry in mapped:
        if entry.key.startswith("taskmanager."):
            legacy = "taskmanager.heap.size" if values.get("taskmanager.heap.size") is not None \
                else "taskmanager.heap.mb"
            return legacy, entry.key, str(entry.value)
    return None


METRICS: dict[str, tuple[str, str]] = {
    # name -> (label, unit)
    "channel_ceiling_bytes_per_s": ("credit ceiling per channel", "B/s"),
    "channel_throughput_bytes_per_s": ("channel throughput", "B/s"),
    "added_latency_s": ("added latency per exchange (max)", "s"),
    "gate_inflight_bytes": ("in-flight per input gate", "B"),
    "drain_time_s": ("barrier drain time", "s"),
    "network_needed_bytes": ("network memory needed", "B"),
    "network_target_bytes": ("network memory pools want", "B"),
    "network_available_bytes": ("network memory available", "B"),
    "task_heap_bytes": ("task heap", "B"),
}


def jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return value
