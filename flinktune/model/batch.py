"""Network-buffer demand of a batch job: per pipelined region, not summed over the job.

Facts (Flink source, 1.15 .. 2.x):
- Blocking exchanges split a job into pipelined regions (``PipelinedRegionSchedulingStrategy``);
  a consumer region behind an all-to-all blocking exchange is scheduled only when every producer
  finished, and a finished producer's ``ResultPartition.close`` destroys its buffer pool
  (``Task.releaseResources`` -> ``closeAllResultPartitions``; the data lives in files). So stages
  joined by an all-to-all blocking exchange never hold network buffers at the same time; regions
  joined only by pointwise blocking exchanges, or not joined at all, may overlap and are counted
  together here.
- A batch job puts each pipelined region in a slot sharing group of its own
  (``StreamGraphGenerator.configureStreamGraphBatch``: ``setAllVerticesInSameSlotSharingGroupByDefault
  (false)``; the Table planner's batch properties do the same), so a slot runs one region's subtask
  at a time: regions that may overlap share a TaskManager's ``S`` slots, and at most ``S`` region
  subtasks hold buffers in it at once (the busiest ``S`` are charged).
- Local channels (producer and consumer in one TaskManager) take no exclusive buffers
  (``LocalInputChannel``); when a stage fills every slot of ``T`` TaskManagers with ``S`` slots each,
  each TaskManager runs ``S`` producers of every all-to-all exchange, so at least
  ``p - (T - 1) * S`` of a consumer's ``p`` channels are local whatever the placement.
- The adaptive batch scheduler (1.15+, the default for batch from 1.17) shows parallelism -1 in the
  REST plan until it decides; it decides between ``execution.batch.adaptive.auto-parallelism.min-
  parallelism`` (1) and ``max-parallelism`` (128; from 1.18 ``parallelism.default`` when that is set
  and the max is not: ``AdaptiveBatchSchedulerFactory.getDefaultMaxParallelism``), and producers
  create as many subpartitions as the consumer's max parallelism. The upper bound has the most
  channels and subtasks, so undecided vertices are charged at it (stated).
- ``NetworkBufferPool.createBufferPool`` reserves a pool's required buffers at task setup and fails
  with "Insufficient number of network buffers: required <n>, but only <m> available" (a sort-merge
  partition requires ``sort-shuffle.min-buffers``, 512 from 1.15; a hash partition ``Sp + 1``).

No numpy here (the lint path imports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flinktune.errors import ModelInputError
from flinktune.model import buffers as mb
from flinktune.model import layout
from flinktune.record import Record, replace, store

KEY_ADAPTIVE_MIN = "execution.batch.adaptive.auto-parallelism.min-parallelism"
KEY_ADAPTIVE_MAX = "execution.batch.adaptive.auto-parallelism.max-parallelism"
ADAPTIVE_MAX_DEFAULT = 128       # BatchExecutionOptions.ADAPTIVE_AUTO_PARALLELISM_MAX_PARALLELISM
UNDECIDED = -1                   # ExecutionConfig.PARALLELISM_DEFAULT in the REST plan


class AssumedParallelism(Record):
    """Vertices of a plan whose parallelism the adaptive batch scheduler had not decided yet."""

    __slots__ = _fields = ("parallelism", "source", "vertices")
    parallelism: int
    source: str                  # where the bound comes from, in words
    vertices: tuple[str, ...]

    def __init__(self, parallelism: int, source: str, vertices: tuple[str, ...]) -> None:
        store(self, (parallelism, source, vertices))

    def describe(self) -> str:
        names = ", ".join(self.vertices)
        return (f"parallelism {self.parallelism} assumed for undecided vertex(es) {names} "
                f"(adaptive batch scheduler upper bound, {self.source})")


def adaptive_max_parallelism(max_parallelism: int | None, default_parallelism: int | None,
                             version_at_least_1_18: bool = True) -> tuple[int, str]:
    """The adaptive batch scheduler's upper bound and where it comes from."""
    if max_parallelism is not None:
        return max_parallelism, KEY_ADAPTIVE_MAX
    if version_at_least_1_18 and default_parallelism is not None and default_parallelism > 0:
        return default_parallelism, f"parallelism.default, as {KEY_ADAPTIVE_MAX} is unset"
    return ADAPTIVE_MAX_DEFAULT, f"{KEY_ADAPTIVE_MAX} default"


def resolve_undecided(plan: Mapping[str, Any], parallelism: int, source: str
                      ) -> tuple[dict[str, Any], AssumedParallelism | None]:
    """The plan with every parallelism -1 replaced by ``parallelism``, and what was assumed."""
    inner = plan.get("plan", plan)
    if not isinstance(inner, Mapping) or not isinstance(inner.get("nodes"), list):
        raise ModelInputError("a job plan needs a 'nodes' list (the JSON of /jobs/:jobid/plan)")
    undecided: list[str] = []
    nodes = []
    for node in inner["nodes"]:
        if isinstance(node, Mapping) and node.get("parallelism") == UNDECIDED:
            undecided.append(str(node.get("description") or node.get("id") or "?").split("<br/>")[0][:60])
            node = {**node, "parallelism": parallelism}
        nodes.append(node)
    resolved = {**inner, "nodes": nodes}
    if not undecided:
        return resolved, None
    return resolved, AssumedParallelism(parallelism, source, tuple(undecided))


def check_plan(plan: Mapping[str, Any]) -> None:
    """Raise ModelInputError when a plan (``/jobs/:id/plan`` or ``/jobs/:id``) cannot give a job graph.
    Undecided vertices (-1) are valid (charged at the scheduler's bound later); a Flink 2.x plan is
    checked completed from its stream graph, as it will be read (situation.plan)."""
    from flinktune.situation.plan import with_pending_operators

    completed, _pending = with_pending_operators(plan)
    mb.job_graph_from_plan(resolve_undecided(completed, 1, "check")[0])


def has_undecided(plan: Mapping[str, Any]) -> bool:
    inner = plan.get("plan", plan)
    nodes = inner.get("nodes") if isinstance(inner, Mapping) else None
    return isinstance(nodes, list) and any(isinstance(n, Mapping) and n.get("parallelism") == UNDECIDED
                                           for n in nodes)


def _splits(edge: mb.Edge) -> bool:
    return edge.partition_type is mb.PartitionType.BLOCKING


def pipelined_regions(graph: mb.JobGraph) -> tuple[frozenset[str], ...]:
    """Vertices joined by non-blocking exchanges, in graph order of their first vertex."""
    parent = {v.id: v.id for v in graph.vertices}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for edge in graph.edges:
        if not _splits(edge):
            parent[root(edge.source)] = root(edge.target)
    groups: dict[str, list[str]] = {}
    for v in graph.vertices:
        groups.setdefault(root(v.id), []).append(v.id)
    return tuple(frozenset(ids) for ids in groups.values())


def _strictly_ordered(graph: mb.JobGraph, regions: tuple[frozenset[str], ...]) -> set[tuple[int, int]]:
    """(a, b): region b starts only after every subtask of region a finished (a path from a to b
    crosses an all-to-all blocking exchange)."""
    index = {vid: n for n, region in enumerate(regions) for vid in region}
    out: dict[int, list[tuple[int, bool]]] = {n: [] for n in range(len(regions))}
    for edge in graph.edges:
        a, b = index[edge.source], index[edge.target]
        if a != b:
            out[a].append((b, edge.all_to_all))
    ordered: set[tuple[int, int]] = set()
    for start in range(len(regions)):
        seen: set[tuple[int, bool]] = set()
        stack = [(start, False)]
        while stack:
            node, crossed = stack.pop()
            for nxt, a2a in out[node]:
                state = (nxt, crossed or a2a)
                if state in seen:
                    continue
                seen.add(state)
                if state[1]:
                    ordered.add((start, nxt))
                stack.append(state)
    return ordered


class BatchDemand(Record):
    """The busiest moment of a batch job: one region with the regions that may run beside it."""

    __slots__ = _fields = ("busiest", "stage", "regions", "per_stage_required", "summed_required", "stages")
    busiest: mb.TaskManagerBuffers
    stage: tuple[str, ...]                     # vertex ids holding buffers at that moment
    regions: int
    per_stage_required: tuple[int, ...]        # busiest TaskManager's demand, per region's moment
    summed_required: int                       # what summing every stage would give (for comparison)
    stages: tuple[mb.TaskManagerBuffers, ...]  # each moment's busiest TaskManager, in run order

    def __init__(self, busiest: mb.TaskManagerBuffers, stage: tuple[str, ...], regions: int,
                 per_stage_required: tuple[int, ...], summed_required: int,
                 stages: tuple[mb.TaskManagerBuffers, ...] = ()) -> None:
        store(self, (busiest, stage, regions, per_stage_required, summed_required, stages))

    def fit(self, total_buffers: int, segment_bytes: int) -> mb.NetworkFit:
        """Flink's verdict: the first stage (in run order) that does not fit fails the job with its
        numbers; when all fit, the busiest stage's fit."""
        for stage in self.stages:
            result = mb.fits(stage, total_buffers, segment_bytes)
            if not result.fits:
                return replace(result, required=self.busiest.required, target=self.busiest.target)
        return mb.fits(self.busiest, total_buffers, segment_bytes)


def batch_taskmanager_buffers(graph: mb.JobGraph, settings: mb.BufferSettings, slots_per_taskmanager: int,
                              *, taskmanagers: int | None = None,
                              placement: mb.Placement | None = None) -> BatchDemand:
    """The busiest TaskManager at the busiest moment of a batch job (see the module docstring).

    Channels are local as the placement says (default: slot k holds subtask k of every vertex).
    With ``taskmanagers`` given and no placement, a consumer's local channels are only those
    guaranteed by a full cluster (``p - (T - 1) * S``), since the scheduler places each stage anew.
    TaskManagers that hold the same are computed once (model.layout).
    """
    slots = slots_per_taskmanager
    classes = layout.taskmanager_classes(graph, settings, slots, placement=placement,
                                         guaranteed_taskmanagers=taskmanagers if placement is None else None)
    regions = pipelined_regions(graph)
    region_of = {vid: n for n, region in enumerate(regions) for vid in region}
    ordered = _strictly_ordered(graph, regions)
    order = {v.id: n for n, v in enumerate(graph.vertices)}
    best: tuple[mb.TaskManagerBuffers, tuple[str, ...]] | None = None
    per_stage = []
    run_order = sorted(range(len(regions)),
                       key=lambda r: (sum((q, r) in ordered for q in range(len(regions))), r))
    stages = []
    for r in run_order:
        together = [q for q in range(len(regions))
                    if q == r or ((q, r) not in ordered and (r, q) not in ordered)]
        members = set().union(*(regions[q] for q in together))
        # One region subtask (its vertices' subtask k, sharing a slot) per slot at a time; TaskManagers
        # in the order their first subtask of this moment comes (graph order, then index).
        demands = []
        for c in classes:
            mine = [sb for sb in c.subtasks if sb.vertex_id in members]
            if mine:
                first = min((order[sb.vertex_id], sb.subtask) for sb in mine)
                chosen = layout.busiest_slots(mine, region_of, order, slots)
                demands.append((first, layout.taskmanager_demand(c.taskmanager, chosen, order)))
        demands.sort(key=lambda item: item[0])
        top = mb.busiest_taskmanager([d for _, d in demands])
        per_stage.append(top.required)
        stages.append(top)
        if best is None or (top.required, top.target) > (best[0].required, best[0].target):
            best = (top, tuple(sorted(members, key=order.__getitem__)))
    assert best is not None
    top, stage = best
    summed = layout.busiest_taskmanager_buffers(graph, settings, slots, placement=placement).required
    locality = ("subtasks placed as given" if placement is not None else
                f"{slots} slots per TaskManager, slot k holds subtask k of every vertex")
    if placement is None and taskmanagers is not None:
        locality += f", only the local channels {taskmanagers} full TaskManager(s) guarantee"
    assumption = (f"batch job in {len(regions)} pipelined region(s); buffers held at once by "
                  f"{', '.join(stage)} (stages behind an all-to-all blocking exchange run after it; regions "
                  f"side by side share the {slots} slots); {locality}")
    busiest = mb.TaskManagerBuffers(top.taskmanager, top.required, top.target, top.subtasks, top.requests,
                                    assumption)
    return BatchDemand(busiest, stage, len(regions), tuple(per_stage), summed, tuple(stages))


def stage_bound(parallelism: int, slots: int, taskmanagers: int, settings: mb.BufferSettings,
                inputs: int = 1) -> BatchDemand:
    """No plan: a batch chain whose busiest blocking stage reads ``inputs`` all-to-all blocking
    exchanges at ``parallelism`` and writes one, a full TaskManager of subtasks per stage, channels
    local only where the cluster guarantees it (stated). The upstream stage runs first, so Flink's
    error names its numbers when it already fails."""
    p = parallelism
    vertices = [mb.Vertex(f"upstream{n}", p) for n in range(inputs)]
    vertices += [mb.Vertex("stage", p), mb.Vertex("downstream", p)]
    edges = [mb.Edge(f"upstream{n}", "stage", "HASH", mb.PartitionType.BLOCKING) for n in range(inputs)]
    edges.append(mb.Edge("stage", "downstream", "HASH", mb.PartitionType.BLOCKING))
    demand = batch_taskmanager_buffers(mb.JobGraph(tuple(vertices), tuple(edges)), settings, slots,
                                       taskmanagers=taskmanagers)
    b = demand.busiest
    assumption = (f"batch job without a plan: its busiest blocking stage at parallelism {p} reads {inputs} "
                  f"all-to-all exchange(s) and writes one in each of {min(slots, p)} slot(s), stages one "
                  f"after another; channels local only where {taskmanagers} TaskManager(s) of {slots} "
                  "slots guarantee it")
    return replace(demand, busiest=replace(b, assumption=assumption))


# ---------------------------------------------------------------------------------------------
# Sort-merge write buffers: memory against spilling (SortMergeResultPartition, 1.15 .. 2.x)
# ---------------------------------------------------------------------------------------------

SORT_WRITE_BUFFER_BYTES = 8 * 1024 * 1024    # SortMergeResultPartition.NUM_WRITE_BUFFER_BYTES (1.16+)
SORT_WRITE_BATCH = 512                        # ... EXPECTED_WRITE_BATCH_SIZE


def sort_spill_region_bytes(min_buffers: int, subpartitions: int, segment_bytes: int) -> int | None:
    """Bytes one sort-merge spill (a data region of the partition's file) holds when the partition
    gets only its ``min_buffers``; None when those suffice for the hash-based data buffer
    (``>= 2 x subpartitions``: no sorting). Write buffers are ``min(512, 8 MiB / segment, half)``;
    the rest collects records until full, then spills (``requestNetworkBuffers``)."""
    if min_buffers >= 2 * subpartitions:
        return None
    write = 1 if segment_bytes >= SORT_WRITE_BUFFER_BYTES else min(SORT_WRITE_BATCH,
                                                                     SORT_WRITE_BUFFER_BYTES // segment_bytes)
    write = min(min_buffers // 2, write)
    return (min_buffers - write) * segment_bytes


# ---------------------------------------------------------------------------------------------
# Batch shuffle read memory (BatchShuffleReadBufferPool, TaskManagerOptions)
# ---------------------------------------------------------------------------------------------

KEY_READ = "taskmanager.memory.framework.off-heap.batch-shuffle.size"
KEY_SEGMENT = "taskmanager.memory.segment-size"
KEY_FRAMEWORK_OFF_HEAP = "taskmanager.memory.framework.off-heap.size"
KEY_TASK_OFF_HEAP = "taskmanager.memory.task.off-heap.size"
# What Flink's defaults leave in framework off-heap beside the read buffers (128m - 64m, 1.15+).
READ_REST_BYTES = 64 * 1024 * 1024


def read_below_segment_message(segment_bytes: int) -> str:
    """``BatchShuffleReadBufferPool``'s constructor check: the TaskManager does not start."""
    return (f"Illegal configuration, config value for '{KEY_READ}' must be no smaller than '{KEY_SEGMENT}', "
            f"please increase '{KEY_READ}' to at least {segment_bytes} bytes.")


READ_OOM_PREFIX = "Can't allocate enough direct buffer for batch shuffle read buffer pool"


class ReadMemoryVerdict(Record):
    """Does ``batch-shuffle.size`` fit where Flink allocates it?"""

    __slots__ = _fields = ("read_bytes", "framework_off_heap_bytes", "task_off_heap_bytes", "segment_bytes")
    read_bytes: int
    framework_off_heap_bytes: int
    task_off_heap_bytes: int
    segment_bytes: int

    def __init__(self, read_bytes: int, framework_off_heap_bytes: int, task_off_heap_bytes: int,
                 segment_bytes: int) -> None:
        store(self, (read_bytes, framework_off_heap_bytes, task_off_heap_bytes, segment_bytes))

    @property
    def below_segment(self) -> bool:
        """TaskManagers refuse to start (IllegalArgumentException at shuffle environment creation)."""
        return self.read_bytes < self.segment_bytes

    @property
    def exceeds_direct(self) -> bool:
        """The read pool cannot fit in the JVM's direct memory limit, which is framework off-heap +
        task off-heap + network (the network takes its whole share at start-up): the first
        sort-merge partition's ``readBufferPool.initialize()`` throws ``READ_OOM_PREFIX``."""
        return self.read_bytes > self.framework_off_heap_bytes + self.task_off_heap_bytes

    @property
    def squeezes_framework(self) -> bool:
        """Fits, but leaves framework off-heap less than Flink's default rest for Netty and the like."""
        return not self.exceeds_direct and self.read_bytes + READ_REST_BYTES > self.framework_off_heap_bytes

    def framework_off_heap_fix(self) -> int:
        """Framework off-heap that holds the read memory and Flink's default rest beside it."""
        return self.read_bytes + READ_REST_BYTES
