"""The per-subtask, per-TaskManager buffer computation flinktune used before issue 26, kept as a test
oracle for the closed form (flinktune.model.layout, flinktune.model.batch): every subtask's gates and
partitions, summed per TaskManager, per pipelined region's moment for batch jobs; requests replayed one
by one. Quadratic at scale, exact by construction: only small layouts are checked against it.

The gate and partition formulas (``input_gate_buffers``, ``result_partition_buffers``), the pointwise
ranges (``pointwise_consumer_range``, ``pointwise_subpartitions``) and the region split
(``pipelined_regions``, ``_strictly_ordered``) are flinktune's: the closed form does not change them,
only how many times and for which subtasks they are evaluated.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from flinktune.errors import ModelInputError
from flinktune.model import batch as mbatch
from flinktune.model import buffers as mb
from flinktune.model.layout import pointwise_consumer_range, pointwise_subpartitions
from flinktune.record import replace


@dataclass(frozen=True)
class OracleTaskManager:
    taskmanager: Any
    required: int
    target: int
    subtasks: int
    requests: tuple[mb.Request, ...]


OracleSubtask = mb.SubtaskBuffers     # one subtask (count 1): its gates, partitions and totals


def _requests(sb: OracleSubtask) -> list[mb.Request]:
    """One subtask's requests, one by one, named as Flink's set-up makes them."""
    out = [mb.Request(f"{sb.vertex_id}[{sb.subtask}] result partition", p.required) for p in sb.partitions]
    for index, gate in enumerate(sb.gates):
        out.append(mb.Request(f"{sb.vertex_id}[{sb.subtask}] input gate {index} floating pool",
                              gate.floating_min, 1, 1 + 2 * index))
        if gate.exclusive_per_channel and gate.remote_channels:
            what = f"{sb.vertex_id}[{sb.subtask}] input gate {index} exclusive buffers"
            out.append(mb.Request(what, gate.exclusive_per_channel, gate.remote_channels, 2 + 2 * index))
    return out


def _overlap(a: int, b: int, lo: int, hi: int) -> int:
    return max(0, min(b, hi) - max(a, lo))


def subtasks(graph: mb.JobGraph, settings: mb.BufferSettings, slots: int, *, all_remote: bool = False,
             placement: mb.Placement | None = None) -> list[OracleSubtask]:
    placed: dict[str, dict[Any, list[int]]] | None = None
    if placement is not None:
        placed = {}
        for vertex in graph.vertices:
            per_tm: dict[Any, list[int]] = {}
            for k in range(vertex.parallelism):
                tm = placement.get((vertex.id, k))
                if tm is None:
                    raise ModelInputError(f"unplaced {vertex.id}[{k}]")
                per_tm.setdefault(tm, []).append(k)
            placed[vertex.id] = per_tm
    result = []
    for vertex in graph.vertices:
        for i in range(vertex.parallelism):
            tm = i // slots if placement is None else placement[(vertex.id, i)]
            gates = []
            for edge in (e for e in graph.edges if e.target == vertex.id):
                p_up = graph.vertex(edge.source).parallelism
                a, b = (0, p_up) if edge.all_to_all else pointwise_consumer_range(i, p_up, vertex.parallelism)
                channels = b - a
                if all_remote:
                    local = 0
                elif placed is None:
                    local = _overlap(a, b, tm * slots, (tm + 1) * slots)
                else:
                    same_tm = placed[edge.source].get(tm, [])
                    local = bisect_left(same_tm, b) - bisect_left(same_tm, a)
                gates.append(mb.input_gate_buffers(settings, channels, channels - local, edge.partition_type))
            partitions = []
            for edge in (e for e in graph.edges if e.source == vertex.id):
                p_down = graph.vertex(edge.target).parallelism
                sub = p_down if edge.all_to_all else pointwise_subpartitions(i, vertex.parallelism, p_down)
                partitions.append(mb.result_partition_buffers(settings, sub, edge.partition_type))
            result.append(OracleSubtask(vertex.id, i, tm, tuple(gates), tuple(partitions)))
    return result


def taskmanagers(graph: mb.JobGraph, settings: mb.BufferSettings, slots: int, *, all_remote: bool = False,
                 placement: mb.Placement | None = None) -> list[OracleTaskManager]:
    per_tm: dict[Any, list[OracleSubtask]] = {}
    for sb in subtasks(graph, settings, slots, all_remote=all_remote, placement=placement):
        per_tm.setdefault(sb.taskmanager, []).append(sb)
    order = {v.id: n for n, v in enumerate(graph.vertices)}
    out = []
    for tm, subs in sorted(per_tm.items(), key=lambda item: (isinstance(item[0], str), item[0])):
        subs.sort(key=lambda s: (s.subtask, order[s.vertex_id]))
        requests = tuple(r for s in subs for r in _requests(s))
        out.append(OracleTaskManager(tm, sum(s.required for s in subs), sum(s.target for s in subs),
                                     len(subs), requests))
    return out


def busiest(demands: list[OracleTaskManager]) -> OracleTaskManager:
    return max(demands, key=lambda d: (d.required, d.target))


def _guaranteed(graph: mb.JobGraph, settings: mb.BufferSettings, sb: OracleSubtask, slots: int,
                tms: int) -> OracleSubtask:
    inputs = [e for e in graph.edges if e.target == sb.vertex_id]
    gates = []
    for edge, gate in zip(inputs, sb.gates, strict=True):
        if not edge.all_to_all:
            gates.append(gate)
            continue
        p_up = graph.vertex(edge.source).parallelism
        local = max(0, p_up - (tms - 1) * slots) if p_up <= tms * slots else 0
        local = min(local, gate.channels)
        gates.append(mb.input_gate_buffers(settings, gate.channels, gate.channels - local,
                                           edge.partition_type))
    return replace(sb, gates=tuple(gates))


@dataclass(frozen=True)
class OracleBatch:
    busiest: OracleTaskManager
    stage: tuple[str, ...]
    regions: int
    per_stage_required: tuple[int, ...]
    summed_required: int
    stages: tuple[OracleTaskManager, ...]

    def fit(self, total: int, segment: int) -> mb.NetworkFit:
        for stage in self.stages:
            result = fits(stage, total, segment)
            if not result.fits:
                return replace(result, required=self.busiest.required, target=self.busiest.target)
        return fits(self.busiest, total, segment)


def batch(graph: mb.JobGraph, settings: mb.BufferSettings, slots: int, *, taskmanagers: int | None = None,
          placement: mb.Placement | None = None) -> OracleBatch:
    subs = subtasks(graph, settings, slots, placement=placement)
    if placement is None and taskmanagers is not None:
        subs = [_guaranteed(graph, settings, sb, slots, taskmanagers) for sb in subs]
    regions = mbatch.pipelined_regions(graph)
    region_of = {vid: n for n, region in enumerate(regions) for vid in region}
    ordered = mbatch._strictly_ordered(graph, regions)
    order = {v.id: n for n, v in enumerate(graph.vertices)}
    best: tuple[OracleTaskManager, tuple[str, ...]] | None = None
    per_stage, stages = [], []
    run_order = sorted(range(len(regions)),
                       key=lambda r: (sum((q, r) in ordered for q in range(len(regions))), r))
    for r in run_order:
        together = [q for q in range(len(regions))
                    if q == r or ((q, r) not in ordered and (r, q) not in ordered)]
        members = set().union(*(regions[q] for q in together))
        per_tm: dict[Any, dict[tuple[int, int], list[OracleSubtask]]] = {}
        for sb in subs:
            if sb.vertex_id in members:
                per_tm.setdefault(sb.taskmanager, {}).setdefault((region_of[sb.vertex_id], sb.subtask),
                                                                 []).append(sb)
        demands = []
        for tm, groups in per_tm.items():
            chosen = sorted(groups.values(), key=lambda g: -sum(s.required for s in g))[:slots]
            flat = [s for group in chosen for s in group]
            flat.sort(key=lambda s: (s.subtask, order[s.vertex_id]))
            requests = tuple(req for s in flat for req in _requests(s))
            demands.append(OracleTaskManager(tm, sum(s.required for s in flat), sum(s.target for s in flat),
                                             len(flat), requests))
        top = busiest(demands)
        per_stage.append(top.required)
        stages.append(top)
        if best is None or (top.required, top.target) > (best[0].required, best[0].target):
            best = (top, tuple(sorted(members, key=order.__getitem__)))
    assert best is not None
    summed = busiest(taskmanagers_of(graph, settings, slots, placement)).required
    return OracleBatch(best[0], best[1], len(regions), tuple(per_stage), summed, tuple(stages))


def taskmanagers_of(graph: mb.JobGraph, settings: mb.BufferSettings, slots: int,
                    placement: mb.Placement | None) -> list[OracleTaskManager]:
    return taskmanagers(graph, settings, slots, placement=placement)


def worst_case(parallelism: int, slots: int, settings: mb.BufferSettings, exchanges: int,
               partition_type: mb.PartitionType) -> OracleTaskManager:
    p, n = parallelism, exchanges
    gate = mb.input_gate_buffers(settings, p, p, partition_type)
    part = mb.result_partition_buffers(settings, p, partition_type)
    s = min(slots, p)
    requests: list[mb.Request] = []
    for slot in range(s):
        for e in range(n):
            requests.append(mb.Request(f"slot {slot} exchange {e} result partition", part.required))
        for e in range(n):
            requests.append(mb.Request(f"slot {slot} exchange {e} input gate floating pool",
                                       gate.floating_min, 1, 1))
            if gate.exclusive_per_channel:
                requests.append(mb.Request(f"slot {slot} exchange {e} input gate exclusive buffers",
                                           gate.exclusive_per_channel, gate.remote_channels, 2))
    return OracleTaskManager(0, s * n * (gate.required + part.required),
                             s * n * (gate.target + part.announced), s * (n + 1), tuple(requests))


def fits(demand: OracleTaskManager, total: int, segment: int) -> mb.NetworkFit:
    """The old replay: every request one by one, stably sorted by phase."""
    requests = sorted(demand.requests, key=lambda r: r.phase) or [mb.Request("all pools", demand.required)]
    used = 0
    for request in requests:
        if request.size <= 0:
            continue
        room = total - used
        if request.size * request.count <= room:
            used += request.size * request.count
            continue
        granted = room // request.size
        used += granted * request.size
        available = total - used
        sizes = sorted({r.size for r in requests if r.size > 0} - {request.size}, reverse=True)
        return mb.NetworkFit(False, demand.required, demand.target, total, segment, request.size, available,
                             request.what, mb.insufficient_buffers_message(request.size, available, total,
                                                                           segment), tuple(sizes))
    return mb.NetworkFit(True, demand.required, demand.target, total, segment, None, None, None, None)
