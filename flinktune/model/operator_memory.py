"""The Kubernetes operator's autoscaler sizing of TaskManager network memory, side by side with Flink.

A port (behaviour, not code) of apache/flink-kubernetes-operator
``flink-autoscaler/src/main/java/org/apache/flink/autoscaler/tuning/MemoryTuning.java``
(``adjustNetworkMemory`` and ``calculateNetworkSegmentNumber``, read at commit 6e9caeb4 of the
operator's main branch, built against Flink 1.20.4). With ``job.autoscaler.memory.tuning.enabled``
the operator writes its result into ``taskmanager.memory.network.min`` and ``.max``.

What it charges, per vertex, summed over the graph and multiplied by the slots of a TaskManager:
- every input edge and every output edge counts ``channels x buffers-per-channel + floating``,
  where ``channels`` is the connected vertex's parallelism (all-to-all) or, for FORWARD / RESCALE,
  ``ceil(connected / current)``; a FORWARD edge between equal parallelisms counts ``bpc + floating``;
- two exchanges between the same two vertices once (its topology maps are keyed by vertex);
- local and remote channels alike, and the producer side like a gate (Flink sizes a result
  partition's pool by its subpartitions, i.e. the *consumer* parallelism, which is what
  ``connected`` is for an output edge, so that side agrees with Flink's bounded maximum).
It reads ``buffers-per-channel`` and ``floating-buffers-per-gate`` from the configuration with
Flink 1.20's defaults (2 and 8), also on 2.x, where Flink fixes them to the same values.

The number is the pools' *maximum* (Flink's target), not what Flink requires to start the job, so it
over-provisions against the start-up boundary; see docs/model.md for measured comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flinktune.errors import FlinktuneError, ModelInputError
from flinktune.model.buffers import JobGraph

if TYPE_CHECKING:
    from flinktune.situation import Situation

# AutoScalerOptions.MEMORY_TUNING_ENABLED (operator docs: job.autoscaler.memory.tuning.enabled).
MEMORY_TUNING_KEY = "job.autoscaler.memory.tuning.enabled"

# The operator's ShipStrategy enum; anything else maps to UNKNOWN (charged like all-to-all).
_POINTWISE = ("FORWARD", "RESCALE")


def _whole(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ModelInputError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return value


def network_segment_number(current_parallelism: int, connected_parallelism: int, ship_strategy: str,
                           buffers_per_channel: int = 2, floating_buffers: int = 8) -> int:
    """``MemoryTuning.calculateNetworkSegmentNumber``: segments one subtask charges for one edge."""
    current = _whole("current_parallelism", current_parallelism, 1)
    connected = _whole("connected_parallelism", connected_parallelism, 1)
    bpc = _whole("buffers_per_channel", buffers_per_channel, 0)
    fpg = _whole("floating_buffers", floating_buffers, 0)
    strategy = str(ship_strategy).strip().upper()
    if current == connected and strategy == "FORWARD":
        return bpc + fpg
    if strategy in _POINTWISE:
        # Math.ceil(connected / (double) current)
        return math.ceil(connected / current) * bpc + fpg
    return connected * bpc + fpg


@dataclass(frozen=True)
class OperatorNetworkMemory:
    """What ``adjustNetworkMemory`` computes for one TaskManager, before its memory budget caps it."""

    segments_per_slot: int
    slots: int
    segment_bytes: int

    @property
    def segments(self) -> int:
        return self.segments_per_slot * self.slots

    @property
    def network_bytes(self) -> int:
        """What the operator writes to ``taskmanager.memory.network.min`` / ``.max``."""
        return self.segments * self.segment_bytes


def operator_network_memory(graph: JobGraph, slots: int, segment_bytes: int = 32 * 1024,
                            buffers_per_channel: int = 2, floating_buffers: int = 8,
                            parallelism: Mapping[str, int] | None = None) -> OperatorNetworkMemory:
    """``MemoryTuning.adjustNetworkMemory`` for ``graph``, ``slots`` per TaskManager.

    ``parallelism`` overrides vertex parallelisms (the operator uses the parallelisms it is about to
    apply after scaling). The operator then caps the result by the TaskManager's remaining memory
    budget (``MemoryBudget.budget``); that cap depends on measured heap/metaspace use and is not
    modelled here.
    """
    _whole("slots", slots, 1)
    _whole("segment_bytes", segment_bytes, 1)
    par = {v.id: v.parallelism for v in graph.vertices}
    for vertex_id, value in (parallelism or {}).items():
        if vertex_id not in par:
            raise ModelInputError(f"parallelism given for unknown vertex '{vertex_id}'")
        par[vertex_id] = _whole(f"parallelism of vertex '{vertex_id}'", value, 1)
    # VertexInfo keeps inputs and outputs in maps keyed by the connected vertex (JobTopology.java,
    # ``inputs.put(inputId, shipStrategy)``): two exchanges between the same pair of vertices count
    # once, with the strategy of the last one in the plan.
    pairs = {(edge.source, edge.target): edge for edge in graph.edges}
    per_slot = 0
    for edge in pairs.values():
        # The consumer's input entry and the producer's output entry, one each per pair.
        per_slot += network_segment_number(par[edge.target], par[edge.source], edge.ship_strategy,
                                           buffers_per_channel, floating_buffers)
        per_slot += network_segment_number(par[edge.source], par[edge.target], edge.ship_strategy,
                                           buffers_per_channel, floating_buffers)
    return OperatorNetworkMemory(per_slot, slots, segment_bytes)


@dataclass(frozen=True)
class OperatorComparison:
    """The operator's network-memory figure for a situation, and what it rests on."""

    memory: OperatorNetworkMemory
    graph_known: bool            # the job plan was given; else a stated chain of HASH exchanges
    assumption: str


def memory_tuning_enabled(situation: Situation) -> bool:
    """``job.autoscaler.memory.tuning.enabled: true`` in the (FlinkDeployment's) configuration."""
    effective = situation.effective
    if not effective.is_set(MEMORY_TUNING_KEY):
        return False
    try:
        return bool(effective.boolean(MEMORY_TUNING_KEY))
    except FlinktuneError:
        return False  # an unreadable value: the operator would not tune either; the lint reports it


def operator_comparison(situation: Situation) -> OperatorComparison | None:
    """What the operator's memory tuning would set ``network.min`` / ``.max`` to, when it is on.

    None when memory tuning is off or the buffer options are refused. The job graph is the plan when
    the situation has one (the operator reads the real topology); otherwise the situation's stated
    chain of all-to-all exchanges at its parallelism.
    """
    if not memory_tuning_enabled(situation):
        return None
    from flinktune.model import buffers as mb
    from flinktune.model.network_fit import buffer_settings, taskmanager_memory

    try:
        settings = buffer_settings(situation)
    except ModelInputError:
        return None
    memory = taskmanager_memory(situation).memory
    segment = memory.segment_bytes if memory is not None else 32 * 1024
    slots = situation.slots.value
    if situation.plan is not None:
        graph = mb.job_graph_from_plan(situation.plan)
        assumption = f"the job plan's graph, {slots} slots per TaskManager"
    else:
        exchanges = situation.exchanges.value
        graph = mb.chain_graph(situation.parallelism.value, exchanges, "HASH")
        assumption = (f"no job plan: a chain of {exchanges} HASH exchange(s) at parallelism "
                      f"{situation.parallelism.value}, {slots} slots per TaskManager")
    result = operator_network_memory(graph, slots, segment, settings.buffers_per_channel,
                                     settings.floating_per_gate)
    return OperatorComparison(result, situation.plan is not None, assumption)
