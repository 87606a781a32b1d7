"""Where a job's subtasks run and what each TaskManager holds, counted once per kind (issue 26).

Flink sizes network buffers per subtask: every input gate and result partition (model.buffers has the
formulas). Under the default placement (one slot sharing group: slot ``k`` holds subtask ``k`` of every
vertex that has one, TaskManager ``t`` slots ``[t*S, (t+1)*S)``) most of those subtasks are alike:

- within a TaskManager, a vertex's subtasks differ only along a pointwise exchange between unequal
  parallelisms (each consumer reads its own range of producers); otherwise they are identical and
  counted once with their number (``SubtaskBuffers.count``);
- from one TaskManager to the next, what it holds changes only at the TaskManager where a vertex ends,
  where the producers of an all-to-all input end (its local channels change there), and along such
  pointwise exchanges; the TaskManagers between two of those places hold the same and are counted
  once (``TaskManagerClass``).

So the work grows with the vertices and exchanges, not with the parallelism (except, for a pointwise
exchange between unequal parallelisms, with the subtasks of its two vertices). An explicit placement
(``flinktune collect``'s job.json) is read subtask by subtask, as large as it is, each TaskManager a
class of its own. ``tests/layout_oracle.py`` keeps the per-subtask computation this replaces; the
property tests check both agree.

No numpy here: the lint path imports this module.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise

from flinktune.errors import ModelInputError
from flinktune.model.buffers import (
    BufferSettings,
    Edge,
    GateBuffers,
    JobGraph,
    PartitionBuffers,
    PartitionType,
    Placement,
    Request,
    RequestRun,
    SubtaskBuffers,
    TaskManagerBuffers,
    TaskManagerId,
    _positive_int,
    busiest_taskmanager,
    input_gate_buffers,
    result_partition_buffers,
)
from flinktune.record import Record, replace, store


def pointwise_consumer_range(i: int, p_up: int, p_down: int) -> tuple[int, int]:
    """Producer subtasks [a, b) consumer ``i`` reads (VertexInputInfoComputationUtils, pointwise)."""
    if p_up >= p_down:
        return (i * p_up) // p_down, ((i + 1) * p_up) // p_down
    j = ((i + 1) * p_up - 1) // p_down
    return j, j + 1


def pointwise_subpartitions(j: int, p_up: int, p_down: int) -> int:
    """Subpartitions of producer ``j`` on a pointwise edge."""
    if p_up >= p_down:
        return 1
    return ((j + 1) * p_down) // p_up - (j * p_down) // p_up


def _overlap(a: int, b: int, lo: int, hi: int) -> int:
    return max(0, min(b, hi) - max(a, lo))


class TaskManagerClass(Record):
    """``count`` TaskManagers that hold the same: ``taskmanager`` is the first of them, ``subtasks`` its
    subtasks in runs of identical ones (graph order, then index). Under the default placement the
    others are the next ``count - 1`` TaskManagers, their subtask indices ``S`` further each."""

    __slots__ = _fields = ("taskmanager", "count", "subtasks")
    taskmanager: TaskManagerId
    count: int
    subtasks: tuple[SubtaskBuffers, ...]

    def __init__(self, taskmanager: TaskManagerId, count: int, subtasks: tuple[SubtaskBuffers, ...]) -> None:
        store(self, (taskmanager, count, subtasks))


class _Graph:
    """The graph's adjacency and the buffer formulas, each distinct gate and partition computed once."""

    def __init__(self, graph: JobGraph, settings: BufferSettings) -> None:
        self.graph = graph
        self.settings = settings
        self.parallelism = {v.id: v.parallelism for v in graph.vertices}
        self.inputs: dict[str, list[Edge]] = {v.id: [] for v in graph.vertices}
        self.outputs: dict[str, list[Edge]] = {v.id: [] for v in graph.vertices}
        for edge in graph.edges:
            self.inputs[edge.target].append(edge)
            self.outputs[edge.source].append(edge)
        self._gates: dict[tuple[int, int, PartitionType], GateBuffers] = {}
        self._partitions: dict[tuple[int, PartitionType], PartitionBuffers] = {}

    def gate(self, channels: int, remote: int, ptype: PartitionType) -> GateBuffers:
        key = (channels, remote, ptype)
        found = self._gates.get(key)
        if found is None:
            found = self._gates[key] = input_gate_buffers(self.settings, channels, remote, ptype)
        return found

    def partition(self, subpartitions: int, ptype: PartitionType) -> PartitionBuffers:
        key = (subpartitions, ptype)
        found = self._partitions.get(key)
        if found is None:
            found = self._partitions[key] = result_partition_buffers(self.settings, subpartitions, ptype)
        return found

    def uneven(self, vertex_id: str) -> bool:
        """Does a subtask's demand depend on its index (a pointwise exchange to or from another
        parallelism)?"""
        p = self.parallelism[vertex_id]
        return (any(not e.all_to_all and self.parallelism[e.source] != p for e in self.inputs[vertex_id])
                or any(not e.all_to_all and self.parallelism[e.target] != p for e in self.outputs[vertex_id]))

    def partitions(self, vertex_id: str, i: int) -> tuple[PartitionBuffers, ...]:
        p = self.parallelism[vertex_id]
        out = []
        for edge in self.outputs[vertex_id]:
            p_down = self.parallelism[edge.target]
            sub = p_down if edge.all_to_all else pointwise_subpartitions(i, p, p_down)
            out.append(self.partition(sub, edge.partition_type))
        return tuple(out)

    def channels(self, edge: Edge, i: int) -> tuple[int, int]:
        """The producer range [a, b) consumer ``i`` of ``edge`` reads."""
        p_up = self.parallelism[edge.source]
        return (0, p_up) if edge.all_to_all else pointwise_consumer_range(i, p_up,
                                                                           self.parallelism[edge.target])


def _default_gates(g: _Graph, vertex_id: str, i: int, slots: int, all_remote: bool,
                   guaranteed: int | None) -> tuple[GateBuffers, ...]:
    """Subtask ``i``'s gates under the default placement. ``guaranteed``: a cluster of that many full
    TaskManagers, where an all-to-all input's local channels are only those any placement keeps."""
    tm = i // slots
    gates = []
    for edge in g.inputs[vertex_id]:
        a, b = g.channels(edge, i)
        channels = b - a
        if all_remote:
            local = 0
        elif guaranteed is not None and edge.all_to_all:
            # Up to T*S producers run at once, S per TaskManager at most: every TaskManager then ran at
            # least p - (T-1)*S of them. More producers than slots run in waves: nothing is certain.
            p_up = g.parallelism[edge.source]
            local = max(0, p_up - (guaranteed - 1) * slots) if p_up <= guaranteed * slots else 0
            local = min(local, channels)
        else:
            local = _overlap(a, b, tm * slots, (tm + 1) * slots)
        gates.append(g.gate(channels, channels - local, edge.partition_type))
    return tuple(gates)


def _runs(items: Iterable[SubtaskBuffers]) -> list[SubtaskBuffers]:
    """Consecutive subtasks of one vertex with the same gates and partitions merged into one run."""
    out: list[SubtaskBuffers] = []
    for sb in items:
        last = out[-1] if out else None
        if (last is not None and last.vertex_id == sb.vertex_id and last.taskmanager == sb.taskmanager
                and last.subtask + last.count == sb.subtask and last.gates == sb.gates
                and last.partitions == sb.partitions):
            out[-1] = replace(last, count=last.count + sb.count)
        else:
            out.append(sb)
    return out


def _default_classes(g: _Graph, slots: int, all_remote: bool, guaranteed: int | None
                     ) -> list[TaskManagerClass]:
    taskmanagers = -(-max(g.parallelism.values()) // slots)
    uneven = {vid for vid in g.parallelism if g.uneven(vid)}
    # TaskManagers whose content may differ from the one before (see the module docstring).
    changes = {0}
    for vid, p in g.parallelism.items():
        changes.add(p // slots)
        if vid in uneven:
            changes.update(range(-(-p // slots)))
        if not all_remote:
            for edge in g.inputs[vid]:
                if edge.all_to_all and guaranteed is None:
                    changes.add(g.parallelism[edge.source] // slots)
    starts = sorted(t for t in changes if t < taskmanagers)
    classes = []
    for n, t in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else taskmanagers
        classes.append((t, 1))
        if end - t > 1:
            classes.append((t + 1, end - t - 1))

    def subtask(vid: str, i: int, count: int = 1) -> SubtaskBuffers:
        gates = _default_gates(g, vid, i, slots, all_remote, guaranteed)
        return SubtaskBuffers(vid, i, i // slots, gates, g.partitions(vid, i), count)

    out = []
    for t, count in classes:
        subtasks: list[SubtaskBuffers] = []
        for vertex in g.graph.vertices:
            lo, hi = t * slots, min((t + 1) * slots, vertex.parallelism)
            if lo >= hi:
                continue
            if vertex.id in uneven:
                subtasks += _runs(subtask(vertex.id, i) for i in range(lo, hi))
            else:   # the first subtask stands for all (module docstring)
                subtasks.append(subtask(vertex.id, lo, hi - lo))
        out.append(TaskManagerClass(t, count, tuple(subtasks)))
    return out


def _placed(graph: JobGraph, placement: Placement) -> dict[str, dict[TaskManagerId, list[int]]]:
    """Per vertex and TaskManager, the (ascending) subtask indices it runs; every subtask must be placed."""
    out: dict[str, dict[TaskManagerId, list[int]]] = {}
    for vertex in graph.vertices:
        per_tm: dict[TaskManagerId, list[int]] = {}
        for k in range(vertex.parallelism):
            tm = placement.get((vertex.id, k))
            if tm is None:
                raise ModelInputError(f"the placement names no TaskManager for subtask {k} of vertex "
                                      f"'{vertex.id}' (parallelism {vertex.parallelism})")
            if isinstance(tm, bool) or not isinstance(tm, int | str) or tm == "":
                raise ModelInputError(f"TaskManager of subtask {k} of vertex '{vertex.id}' must be an id "
                                      f"(text or number), got {tm!r}")
            per_tm.setdefault(tm, []).append(k)
        out[vertex.id] = per_tm
    return out


def check_placement(graph: JobGraph, placement: Placement) -> None:
    """Raise ModelInputError unless ``placement`` names a TaskManager for every subtask of the graph."""
    _placed(graph, placement)


def _placed_subtasks(g: _Graph, placement: Placement, all_remote: bool) -> list[SubtaskBuffers]:
    placed = _placed(g.graph, placement)
    out = []
    for vertex in g.graph.vertices:
        for i in range(vertex.parallelism):
            tm = placement[(vertex.id, i)]
            gates = []
            for edge in g.inputs[vertex.id]:
                a, b = g.channels(edge, i)
                if all_remote:
                    local = 0
                else:
                    # Producer subtasks in [a, b) that run in this subtask's TaskManager.
                    same_tm = placed[edge.source].get(tm, [])
                    local = bisect_left(same_tm, b) - bisect_left(same_tm, a)
                gates.append(g.gate(b - a, b - a - local, edge.partition_type))
            out.append(SubtaskBuffers(vertex.id, i, tm, tuple(gates), g.partitions(vertex.id, i)))
    return out


def taskmanager_classes(graph: JobGraph, settings: BufferSettings, slots_per_taskmanager: int, *,
                        all_remote: bool = False, placement: Placement | None = None,
                        guaranteed_taskmanagers: int | None = None) -> list[TaskManagerClass]:
    """The TaskManagers of a job graph, those that hold the same counted once (module docstring).

    Default placement: in TaskManager order, the classes of consecutive ones. With ``placement``:
    each TaskManager it names, in the order its subtasks first appear (graph order, then index).
    ``guaranteed_taskmanagers`` (default placement only): an all-to-all input's channels are local only
    where that many full TaskManagers guarantee it (model.batch), pointwise ones as placed.
    """
    slots = _positive_int("slots_per_taskmanager", slots_per_taskmanager)
    g = _Graph(graph, settings)
    if placement is None:
        return _default_classes(g, slots, all_remote, guaranteed_taskmanagers)
    per_tm: dict[TaskManagerId, list[SubtaskBuffers]] = {}
    for sb in _placed_subtasks(g, placement, all_remote):
        per_tm.setdefault(sb.taskmanager, []).append(sb)
    return [TaskManagerClass(tm, 1, tuple(_runs(subs))) for tm, subs in per_tm.items()]


def subtask_buffers(graph: JobGraph, settings: BufferSettings, slots_per_taskmanager: int,
                    *, all_remote: bool = False, placement: Placement | None = None) -> list[SubtaskBuffers]:
    """Every subtask's gates and partitions, and the TaskManager it runs in, one by one (graph order,
    then index): a listing as large as the job (the model itself counts in classes).

    ``placement`` maps ``(vertex_id, subtask_index)`` to the TaskManager that runs it (what
    ``flinktune collect`` records in ``job.json``; see ``placement_from_job_json``); every subtask of
    the graph must be in it. Without it the placement is assumed: one slot sharing group, slot ``k``
    holds subtask ``k`` of every vertex (that has one) and TaskManager ``t`` holds slots
    ``[t*S, (t+1)*S)``. Flink's scheduler may place subtasks differently (it interleaves them with
    ``cluster.evenly-spread-out-slots``), which changes the count when TaskManagers are not full or
    edges are pointwise. A channel is local when producer and consumer subtasks share a
    TaskManager, unless ``all_remote``.
    """
    slots = _positive_int("slots_per_taskmanager", slots_per_taskmanager)
    g = _Graph(graph, settings)
    if placement is not None:
        return _placed_subtasks(g, placement, all_remote)
    return [SubtaskBuffers(v.id, i, i // slots, _default_gates(g, v.id, i, slots, all_remote, None),
                           g.partitions(v.id, i)) for v in graph.vertices for i in range(v.parallelism)]


# ---------------------------------------------------------------------------------------------
# One TaskManager's demand from its runs
# ---------------------------------------------------------------------------------------------

def _segments(pieces: Sequence[SubtaskBuffers], order: dict[str, int]
              ) -> Iterator[tuple[int, int, list[SubtaskBuffers]]]:
    """``(lo, hi, runs)``: the index ranges where the same runs of ``pieces`` are present, ascending,
    each with those runs in graph order (indices no run covers are left out)."""
    starts: dict[int, list[SubtaskBuffers]] = {}
    ends: dict[int, list[SubtaskBuffers]] = {}
    for sb in pieces:
        starts.setdefault(sb.subtask, []).append(sb)
        ends.setdefault(sb.subtask + sb.count, []).append(sb)
    cuts = sorted(starts.keys() | ends.keys())
    active: dict[tuple[int, int], SubtaskBuffers] = {}
    for lo, hi in pairwise(cuts):
        for sb in ends.get(lo, ()):
            del active[(order[sb.vertex_id], sb.subtask)]
        for sb in starts.get(lo, ()):
            active[(order[sb.vertex_id], sb.subtask)] = sb
        if active:
            yield lo, hi, [active[key] for key in sorted(active)]


def _request_runs(pieces: Sequence[SubtaskBuffers], order: dict[str, int]) -> tuple[RequestRun, ...]:
    """The requests of ``pieces`` (runs of subtasks on one TaskManager) in the order Flink's tasks set
    up: by subtask index, then graph order (``fits`` replays them phase by phase)."""
    runs: list[RequestRun] = []
    last_key: object = None
    for lo, hi, here in _segments(pieces, order):
        key = tuple((sb.vertex_id, sb.gates, sb.partitions) for sb in here)
        if runs and key == last_key and runs[-1].first + runs[-1].repeat == lo:
            runs[-1] = replace(runs[-1], repeat=runs[-1].repeat + hi - lo)
            continue
        pattern: list[Request] = []
        names: list[tuple[str, str]] = []
        for sb in here:
            requests, labels = sb.pattern()
            pattern += requests
            names += labels
        runs.append(RequestRun(lo, hi - lo, tuple(pattern), tuple(names)))
        last_key = key
    return tuple(runs)


def taskmanager_demand(taskmanager: TaskManagerId, subtasks: Sequence[SubtaskBuffers], order: dict[str, int],
                       assumption: str = "") -> TaskManagerBuffers:
    """What the TaskManager holding ``subtasks`` (runs) requests."""
    return TaskManagerBuffers(taskmanager, sum(sb.count * sb.required for sb in subtasks),
                              sum(sb.count * sb.target for sb in subtasks), sum(sb.count for sb in subtasks),
                              _request_runs(subtasks, order), assumption)


def busiest_slots(subtasks: Sequence[SubtaskBuffers], region_of: dict[str, int], order: dict[str, int],
                  slots: int) -> list[SubtaskBuffers]:
    """The subtasks of the ``slots`` busiest region subtasks on one TaskManager (a batch job: a slot runs
    one region's subtask ``k``, its vertices' subtasks ``k``, at a time). Ties go to the region subtask
    Flink's order meets first (graph order of its first vertex, then index), as a stable sort would."""
    groups: list[tuple[int, int, int, int, list[SubtaskBuffers]]] = []   # (-required, first, lo, hi, runs)
    for region in sorted({region_of[sb.vertex_id] for sb in subtasks}):
        mine = [sb for sb in subtasks if region_of[sb.vertex_id] == region]
        for lo, hi, here in _segments(mine, order):
            groups.append((-sum(sb.required for sb in here), order[here[0].vertex_id], lo, hi, here))
    groups.sort(key=lambda group: group[:3])
    chosen: list[SubtaskBuffers] = []
    left = slots
    for _required, _first, lo, hi, here in groups:
        if left <= 0:
            break
        take = min(hi - lo, left)
        left -= take
        chosen += [replace(sb, subtask=lo, count=take) for sb in here]
    return chosen


def _placement_assumption(placement: Placement | None, taskmanagers: int, slots: int,
                          all_remote: bool) -> str:
    locality = ", every channel remote" if all_remote else ", same-TaskManager channels local"
    if placement is None:
        return (f"default slot sharing, {slots} slots per TaskManager, slot k holds subtask k of every "
                f"vertex{locality}")
    return f"subtasks placed as given ({taskmanagers} TaskManager(s)){locality}"


def _listing_order(classes: list[TaskManagerClass]) -> list[TaskManagerClass]:
    return sorted(classes, key=lambda c: (isinstance(c.taskmanager, str), c.taskmanager))


def busiest_taskmanager_buffers(graph: JobGraph, settings: BufferSettings, slots_per_taskmanager: int, *,
                                all_remote: bool = False, placement: Placement | None = None
                                ) -> TaskManagerBuffers:
    """The busiest TaskManager of ``taskmanager_buffers`` (the first of equals), computed per class."""
    classes = _listing_order(taskmanager_classes(graph, settings, slots_per_taskmanager,
                                                 all_remote=all_remote, placement=placement))
    order = {v.id: n for n, v in enumerate(graph.vertices)}
    assumption = _placement_assumption(placement, len(classes), slots_per_taskmanager, all_remote)
    return busiest_taskmanager([taskmanager_demand(c.taskmanager, c.subtasks, order, assumption)
                                for c in classes])


def taskmanager_buffers(graph: JobGraph, settings: BufferSettings, slots_per_taskmanager: int,
                        *, all_remote: bool = False, placement: Placement | None = None
                        ) -> list[TaskManagerBuffers]:
    """Per-TaskManager totals for a job graph, one entry per TaskManager (see ``subtask_buffers`` for
    the placement): a listing as large as the cluster; ``busiest_taskmanager_buffers`` for the busiest.

    Sorted by TaskManager (index, or id when ``placement`` is given); TaskManagers the placement
    gives no subtask of this graph do not appear.
    """
    slots = slots_per_taskmanager
    classes = _listing_order(taskmanager_classes(graph, settings, slots, all_remote=all_remote,
                                                 placement=placement))
    order = {v.id: n for n, v in enumerate(graph.vertices)}
    taskmanagers = sum(c.count for c in classes)
    assumption = _placement_assumption(placement, taskmanagers, slots, all_remote)
    out = []
    for c in classes:
        for n in range(c.count):
            tm = c.taskmanager if n == 0 else c.taskmanager + n  # type: ignore[operator]
            subtasks = [replace(sb, subtask=sb.subtask + n * slots, taskmanager=tm) for sb in c.subtasks]
            out.append(taskmanager_demand(tm, subtasks, order, assumption))
    return out
