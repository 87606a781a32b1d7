"""How many network buffers each input gate and result partition takes, per Flink version.

Ported (behaviour, not code) from apache/flink:
- input gates: ``SingleInputGateFactory`` + ``NettyShuffleUtils.getMinMaxFloatingBuffersPerInputGate``
  (1.13 .. 1.16: ``buffers-per-channel`` exclusive buffers per remote channel, floating pool [1, fpg]);
  ``InputGateSpecUtils.createGateBuffersSpec`` (1.17+, FLINK-30473: required = min(maxReq, C*bpc+1),
  exclusive per channel = min(bpc, (required-1) // C), floating pool [required - C*excl, C*bpc+fpg - C*excl]);
- result partitions: ``NettyShuffleUtils.getMinMaxNetworkBuffersPerResultPartition`` /
  ``ResultPartitionFactory`` (min Sp+1, bounded max Sp*bpc+fpg; sort-shuffle min
  ``sort-shuffle.min-buffers``, max 4*Sp from 1.15);
- failure: ``NetworkBufferPool.createBufferPool`` / ``requestPooledMemorySegmentsBlocking``: a request
  fails with "Insufficient number of network buffers" when it exceeds total minus already required.
Local (same TaskManager) channels take no exclusive buffers. Flink 2.x fixes buffers-per-channel=2,
floating=8, max-buffers-per-channel=10, overdraft=20, sort-shuffle.min-parallelism=1 (2.0 release
notes, FLINK-33750 et al.).

No numpy here: the lint path and the rules engine import this module.

Over 500 lines: the port of Flink's buffer arithmetic (NettyShuffleUtils, InputGateSpecUtils,
NettyShuffleEnvironmentConfiguration) for every version, one formula per Flink function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum

from flinktune.errors import ModelInputError
from flinktune.record import Record, replace, store
from flinktune.releases import (
    BUFFERS_FIXED,
    GATE_REQUIRED_MAX,
    HYBRID_TIERED,
    LEGACY_HYBRID_REMOVED,
    OVERDRAFT_BUFFERS,
    SORT_PARTITION_BOUNDED,
    SORT_SHUFFLE_DEFAULT,
)
from flinktune.versions import DEFAULT_VERSION, FlinkVersion

INT_MAX = 2**31 - 1
# InputGateSpecUtils.DEFAULT_MAX_REQUIRED_BUFFERS_PER_GATE_FOR_BATCH
DEFAULT_MAX_REQUIRED_PER_GATE_BATCH = 1000
HYBRID_MIN_BUFFERS = 8                       # NettyShuffleUtils.DEFAULT_HYBRID_SHUFFLE_MIN_BUFFERS (1.18+)

# Keys, for messages.
KEY_BPC = "taskmanager.network.memory.buffers-per-channel"
KEY_FPG = "taskmanager.network.memory.floating-buffers-per-gate"
KEY_MAX_PER_CHANNEL = "taskmanager.network.memory.max-buffers-per-channel"
KEY_OVERDRAFT = "taskmanager.network.memory.max-overdraft-buffers-per-gate"
KEY_REQUIRED_MAX = "taskmanager.network.memory.read-buffer.required-per-gate.max"
KEY_SORT_MIN_PAR = "taskmanager.network.sort-shuffle.min-parallelism"
KEY_SORT_MIN_BUF = "taskmanager.network.sort-shuffle.min-buffers"

# What Flink 2.x hard-codes (NettyShuffleEnvironmentConfiguration @ 2.0): not tunable any more.
FIXED_IN_2X: dict[str, int] = {KEY_BPC: 2, KEY_FPG: 8, KEY_MAX_PER_CHANNEL: 10, KEY_OVERDRAFT: 20,
                               KEY_SORT_MIN_PAR: 1}


class PartitionType(StrEnum):
    """``ResultPartitionType`` as the job plan's ``exchange`` field spells it (lower case)."""

    PIPELINED_BOUNDED = "pipelined_bounded"   # streaming
    PIPELINED = "pipelined"                   # batch, pipelined (unbounded pool)
    BLOCKING = "blocking"
    HYBRID_FULL = "hybrid_full"
    HYBRID_SELECTIVE = "hybrid_selective"

    @property
    def is_pipelined(self) -> bool:
        return self in (PartitionType.PIPELINED_BOUNDED, PartitionType.PIPELINED)

    @property
    def is_hybrid(self) -> bool:
        return self in (PartitionType.HYBRID_FULL, PartitionType.HYBRID_SELECTIVE)


ALL_TO_ALL = frozenset({"HASH", "REBALANCE", "BROADCAST", "SHUFFLE", "GLOBAL", "CUSTOM"})
POINTWISE = frozenset({"FORWARD", "RESCALE"})


def parse_partition_type(text: str | PartitionType) -> PartitionType:
    if isinstance(text, PartitionType):
        return text
    try:
        return PartitionType(str(text).strip().lower())
    except ValueError:
        allowed = ", ".join(t.value for t in PartitionType)
        raise ModelInputError(f"exchange type '{text}' is not one of {allowed}") from None


def _positive_int(name: str, value: object, *, allow_zero: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelInputError(f"{name} must be a whole number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ModelInputError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value}")
    if value > INT_MAX:
        raise ModelInputError(f"{name} must fit in a 32-bit integer, got {value}")
    return value


# ---------------------------------------------------------------------------------------------
# Settings per version
# ---------------------------------------------------------------------------------------------

class BufferSettings(Record):
    """The buffer options in force for one Flink version (defaults filled in, 2.x fixed values)."""

    __slots__ = _fields = ("version", "buffers_per_channel", "floating_per_gate", "max_buffers_per_channel",
                           "max_overdraft_per_gate", "required_per_gate_max", "sort_shuffle_min_parallelism",
                           "sort_shuffle_min_buffers", "hybrid_new_mode")
    version: FlinkVersion
    buffers_per_channel: int
    floating_per_gate: int
    max_buffers_per_channel: int
    max_overdraft_per_gate: int          # 0 before 1.16 (no overdraft)
    required_per_gate_max: int | None    # only 1.17+; None = unset (Flink's per-type default)
    sort_shuffle_min_parallelism: int
    sort_shuffle_min_buffers: int
    hybrid_new_mode: bool                # tiered-storage hybrid shuffle (1.18+ default)

    def __init__(self, version: FlinkVersion, buffers_per_channel: int, floating_per_gate: int,
                 max_buffers_per_channel: int, max_overdraft_per_gate: int, required_per_gate_max: int | None,
                 sort_shuffle_min_parallelism: int, sort_shuffle_min_buffers: int,
                 hybrid_new_mode: bool) -> None:
        store(self, (version, buffers_per_channel, floating_per_gate, max_buffers_per_channel,
                     max_overdraft_per_gate, required_per_gate_max, sort_shuffle_min_parallelism,
                     sort_shuffle_min_buffers, hybrid_new_mode))

    @property
    def tunable(self) -> bool:
        """False on 2.x, where buffers-per-channel and friends are hard-coded."""
        return not BUFFERS_FIXED.applies(self.version)


def buffer_settings(
    version: FlinkVersion = DEFAULT_VERSION,
    *,
    buffers_per_channel: int | None = None,
    floating_per_gate: int | None = None,
    max_buffers_per_channel: int | None = None,
    max_overdraft_per_gate: int | None = None,
    required_per_gate_max: int | None = None,
    sort_shuffle_min_parallelism: int | None = None,
    sort_shuffle_min_buffers: int | None = None,
    hybrid_new_mode: bool | None = None,
) -> BufferSettings:
    """Defaults by version (flink-facts §1.6) with explicit overrides, validated as Flink does.

    On Flink 2.x an override that differs from the hard-coded value raises ModelInputError: those
    keys were removed and setting them changes nothing.
    """
    given = {KEY_BPC: buffers_per_channel, KEY_FPG: floating_per_gate,
             KEY_MAX_PER_CHANNEL: max_buffers_per_channel, KEY_OVERDRAFT: max_overdraft_per_gate,
             KEY_SORT_MIN_PAR: sort_shuffle_min_parallelism}
    if BUFFERS_FIXED.applies(version):
        for key, value in given.items():
            if value is not None and value != FIXED_IN_2X[key]:
                raise ModelInputError(
                    f"{key} is fixed to {FIXED_IN_2X[key]} in Flink {version} (the option was removed "
                    f"in 2.0); it cannot be tuned, got {value}"
                )
        bpc, fpg, max_pc, overdraft, sort_par = (FIXED_IN_2X[k] for k in (
            KEY_BPC, KEY_FPG, KEY_MAX_PER_CHANNEL, KEY_OVERDRAFT, KEY_SORT_MIN_PAR))
    else:
        bpc = 2 if buffers_per_channel is None else buffers_per_channel
        fpg = 8 if floating_per_gate is None else floating_per_gate
        max_pc = 10 if max_buffers_per_channel is None else max_buffers_per_channel
        default_overdraft = 5 if OVERDRAFT_BUFFERS.applies(version) else 0
        if max_overdraft_per_gate is not None and not OVERDRAFT_BUFFERS.applies(version):
            raise ModelInputError(f"{KEY_OVERDRAFT} does not exist before Flink 1.16")
        overdraft = default_overdraft if max_overdraft_per_gate is None else max_overdraft_per_gate
        default_sort_par = 1 if SORT_SHUFFLE_DEFAULT.applies(version) else INT_MAX
        sort_par = default_sort_par if sort_shuffle_min_parallelism is None else sort_shuffle_min_parallelism
    if LEGACY_HYBRID_REMOVED.applies(version) and hybrid_new_mode is not None and not hybrid_new_mode:
        # 2.0 removed the legacy hybrid shuffle (HybridShuffleConfiguration is gone from
        # ResultPartitionFactory @2.3.0; 2.0 release notes): hybrid is always tiered storage.
        raise ModelInputError(f"the legacy hybrid shuffle mode does not exist in Flink {version}; "
                              "hybrid shuffles always use tiered storage from 2.0")
    if required_per_gate_max is not None and not GATE_REQUIRED_MAX.applies(version):
        raise ModelInputError(f"{KEY_REQUIRED_MAX} does not exist before Flink 1.17")
    sort_buffers = ((512 if SORT_SHUFFLE_DEFAULT.applies(version) else 64) if sort_shuffle_min_buffers is None
                    else sort_shuffle_min_buffers)
    # NettyShuffleEnvironmentConfiguration's checks (1.17+ texts); earlier versions accepted
    # nonsense silently, which the model cannot evaluate either, so it rejects it too.
    if isinstance(bpc, bool) or not isinstance(bpc, int) or bpc < 0:
        raise ModelInputError(f"{KEY_BPC}: Must be non-negative (got {bpc!r}).")
    if isinstance(fpg, bool) or not isinstance(fpg, int) or fpg < 1:
        raise ModelInputError("The configured floating buffer should be at least 1, please increase the "
                              f"value of {KEY_FPG} (got {fpg!r}).")
    if required_per_gate_max is not None and (
            isinstance(required_per_gate_max, bool) or not isinstance(required_per_gate_max, int)
            or required_per_gate_max < 1):
        raise ModelInputError("At least one buffer is required for each gate, please increase the value of "
                              f"{KEY_REQUIRED_MAX} (got {required_per_gate_max!r}).")
    _positive_int(KEY_MAX_PER_CHANNEL, max_pc)
    _positive_int(KEY_OVERDRAFT, overdraft, allow_zero=True)
    _positive_int(KEY_SORT_MIN_PAR, sort_par)
    _positive_int(KEY_SORT_MIN_BUF, sort_buffers)
    for name, value in ((KEY_BPC, bpc), (KEY_FPG, fpg)):
        _positive_int(name, value, allow_zero=True)
    return BufferSettings(
        version=version, buffers_per_channel=bpc, floating_per_gate=fpg, max_buffers_per_channel=max_pc,
        max_overdraft_per_gate=overdraft, required_per_gate_max=required_per_gate_max,
        sort_shuffle_min_parallelism=sort_par, sort_shuffle_min_buffers=sort_buffers,
        hybrid_new_mode=HYBRID_TIERED.applies(version) if hybrid_new_mode is None else bool(hybrid_new_mode),
    )


def settings_from(version: FlinkVersion, given: Callable[[str], int | None]) -> BufferSettings:
    """The buffer settings of a configuration: ``given(key)`` is the file's value of a key or None;
    only the keys ``version`` reads are asked (the rest: Flink's default or its fixed 2.x value)."""
    tunable = not BUFFERS_FIXED.applies(version)
    overdraft, required_max = OVERDRAFT_BUFFERS.applies(version), GATE_REQUIRED_MAX.applies(version)
    return buffer_settings(
        version,
        buffers_per_channel=given(KEY_BPC) if tunable else None,
        floating_per_gate=given(KEY_FPG) if tunable else None,
        max_buffers_per_channel=given(KEY_MAX_PER_CHANNEL) if tunable else None,
        max_overdraft_per_gate=given(KEY_OVERDRAFT) if tunable and overdraft else None,
        required_per_gate_max=given(KEY_REQUIRED_MAX) if required_max else None,
        sort_shuffle_min_parallelism=given(KEY_SORT_MIN_PAR) if tunable else None,
        sort_shuffle_min_buffers=given(KEY_SORT_MIN_BUF),
    )


def pool_bound(channels: int, buffers_per_channel: int, floating_per_gate: int) -> int:
    """The docs' per-pool bound: ``#channels * buffers-per-channel + floating-buffers-per-gate``."""
    _positive_int("channels", channels)
    _positive_int("buffers_per_channel", buffers_per_channel, allow_zero=True)
    _positive_int("floating_per_gate", floating_per_gate, allow_zero=True)
    return channels * buffers_per_channel + floating_per_gate


# ---------------------------------------------------------------------------------------------
# One input gate, one result partition
# ---------------------------------------------------------------------------------------------

class GateBuffers(Record):
    """Buffers of one input gate (consumer side of one edge, one subtask)."""

    __slots__ = _fields = ("channels", "remote_channels", "exclusive_per_channel", "floating_min",
                           "floating_max")
    channels: int
    remote_channels: int
    exclusive_per_channel: int   # requested from the global pool by each remote channel
    floating_min: int            # the gate's floating LocalBufferPool: required part
    floating_max: int            # ... and its maximum size

    def __init__(self, channels: int, remote_channels: int, exclusive_per_channel: int, floating_min: int,
                 floating_max: int) -> None:
        store(self, (channels, remote_channels, exclusive_per_channel, floating_min, floating_max))

    @property
    def exclusive(self) -> int:
        return self.remote_channels * self.exclusive_per_channel

    @property
    def required(self) -> int:
        """Buffers the gate must get at start-up, else "Insufficient number of network buffers"."""
        return self.exclusive + self.floating_min

    @property
    def target(self) -> int:
        """Buffers the gate holds at most (exclusive + full floating pool)."""
        return self.exclusive + self.floating_max


def input_gate_buffers(settings: BufferSettings, channels: int, remote_channels: int | None = None,
                       partition_type: PartitionType | str = PartitionType.PIPELINED_BOUNDED) -> GateBuffers:
    """Buffers of one input gate with ``channels`` input channels, ``remote_channels`` of them remote."""
    _positive_int("channels", channels)
    remote = channels if remote_channels is None else _positive_int("remote_channels", remote_channels,
                                                                    allow_zero=True)
    if remote > channels:
        raise ModelInputError(f"remote_channels ({remote}) cannot exceed channels ({channels})")
    ptype = parse_partition_type(partition_type)
    bpc, fpg = settings.buffers_per_channel, settings.floating_per_gate
    if not GATE_REQUIRED_MAX.applies(settings.version):
        # 1.13 .. 1.16: bpc exclusive per remote channel; floating pool min 1, max fpg.
        return GateBuffers(channels, remote, bpc, 1, fpg)
    if settings.required_per_gate_max is not None:
        max_required = settings.required_per_gate_max
    elif ptype.is_pipelined or (ptype.is_hybrid and not settings.hybrid_new_mode):
        max_required = INT_MAX
    else:
        max_required = DEFAULT_MAX_REQUIRED_PER_GATE_BATCH
    target_required = channels * bpc + 1
    required = min(max_required, target_required)
    exclusive = min(bpc, (required - 1) // channels)
    maximum = channels * bpc + fpg
    if ptype.is_hybrid and settings.hybrid_new_mode:
        # Tiered-storage gates need only 2 buffers (InputGateSpecUtils.DEFAULT_MIN_BUFFERS_PER_GATE);
        # modelled as a floating pool of [2, C*bpc+fpg] without exclusive buffers.
        return GateBuffers(channels, remote, 0, 2, max(maximum, 2))
    floating_min = max(required - channels * exclusive, 1)
    floating_max = max(maximum - channels * exclusive, floating_min)
    return GateBuffers(channels, remote, exclusive, floating_min, floating_max)


class PartitionBuffers(Record):
    """Buffers of one result partition (producer side of one edge, one subtask)."""

    __slots__ = _fields = ("subpartitions", "kind", "required", "maximum", "max_per_subpartition",
                           "overdraft_max")
    subpartitions: int
    kind: str                    # pipelined | hash-blocking | sort-blocking | hybrid
    required: int                # LocalBufferPool minimum
    maximum: int | None          # LocalBufferPool maximum; None = unbounded
    max_per_subpartition: int | None
    overdraft_max: int           # optional extra buffers while back-pressured (pipelined, 1.16+)

    def __init__(self, subpartitions: int, kind: str, required: int, maximum: int | None,
                 max_per_subpartition: int | None, overdraft_max: int) -> None:
        store(self, (subpartitions, kind, required, maximum, max_per_subpartition, overdraft_max))

    @property
    def announced(self) -> int:
        """What ``computeNetworkBuffersForAnnouncing`` counts: max if pipelined-consumable, else min."""
        if self.kind == "pipelined" and self.maximum is not None:
            return self.maximum
        return self.required


def result_partition_buffers(settings: BufferSettings, subpartitions: int,
                             partition_type: PartitionType | str = PartitionType.PIPELINED_BOUNDED
                             ) -> PartitionBuffers:
    """Buffers of one result partition with ``subpartitions`` subpartitions."""
    _positive_int("subpartitions", subpartitions)
    ptype = parse_partition_type(partition_type)
    bpc, fpg, version = settings.buffers_per_channel, settings.floating_per_gate, settings.version
    sort = ptype is PartitionType.BLOCKING and subpartitions >= settings.sort_shuffle_min_parallelism
    if sort:
        required = settings.sort_shuffle_min_buffers
        bounded = SORT_PARTITION_BOUNDED.applies(version)
        maximum: int | None = max(required, 4 * subpartitions) if bounded else None
        kind = "sort-blocking"
    else:
        required = subpartitions + 1
        if ptype.is_hybrid and HYBRID_TIERED.applies(version):
            required = min(HYBRID_MIN_BUFFERS, required)
        if ptype is PartitionType.PIPELINED_BOUNDED:
            maximum = max(required, subpartitions * bpc + fpg)
        else:
            maximum = None
        kind = "pipelined" if ptype.is_pipelined else "hybrid" if ptype.is_hybrid else "hash-blocking"
    return PartitionBuffers(
        subpartitions=subpartitions, kind=kind, required=required, maximum=maximum,
        max_per_subpartition=settings.max_buffers_per_channel if ptype is PartitionType.PIPELINED_BOUNDED
        else None,
        overdraft_max=settings.max_overdraft_per_gate if ptype.is_pipelined else 0,
    )


# ---------------------------------------------------------------------------------------------
# Job graphs and TaskManager totals
# ---------------------------------------------------------------------------------------------

class Vertex(Record):
    """A job vertex: its id and parallelism."""

    __slots__ = _fields = ("id", "parallelism")
    id: str
    parallelism: int

    def __init__(self, id: str, parallelism: int) -> None:
        if not id:
            raise ModelInputError("a vertex needs a non-empty id")
        _positive_int(f"parallelism of vertex '{id}'", parallelism)
        store(self, (id, parallelism))


class Edge(Record):
    """A data exchange between two vertices."""

    __slots__ = _fields = ("source", "target", "ship_strategy", "partition_type")
    source: str
    target: str
    ship_strategy: str
    partition_type: PartitionType

    def __init__(self, source: str, target: str, ship_strategy: str = "HASH",
                 partition_type: PartitionType | str = PartitionType.PIPELINED_BOUNDED) -> None:
        strategy = ship_strategy.strip().upper()
        if strategy not in ALL_TO_ALL | POINTWISE:
            raise ModelInputError(f"ship strategy '{ship_strategy}' of edge {source} -> "
                                  f"{target} is not one of {', '.join(sorted(ALL_TO_ALL | POINTWISE))}")
        store(self, (source, target, strategy, parse_partition_type(partition_type)))

    @property
    def all_to_all(self) -> bool:
        return self.ship_strategy in ALL_TO_ALL


class JobGraph(Record):
    """The vertices and exchanges that decide how many network buffers a job needs."""

    __slots__ = _fields = ("vertices", "edges")
    vertices: tuple[Vertex, ...]
    edges: tuple[Edge, ...]

    def __init__(self, vertices: Iterable[Vertex], edges: Iterable[Edge] = ()) -> None:
        store(self, (tuple(vertices), tuple(edges)))
        if not self.vertices:
            raise ModelInputError("a job graph needs at least one vertex")
        ids = [v.id for v in self.vertices]
        if len(set(ids)) != len(ids):
            raise ModelInputError("vertex ids in a job graph must be unique")
        known = set(ids)
        for edge in self.edges:
            for end in (edge.source, edge.target):
                if end not in known:
                    raise ModelInputError(f"edge {edge.source} -> {edge.target} names unknown vertex '{end}'")

    def vertex(self, vertex_id: str) -> Vertex:
        for v in self.vertices:
            if v.id == vertex_id:
                return v
        raise ModelInputError(f"unknown vertex '{vertex_id}'")


def job_graph_from_plan(plan: Mapping[str, object]) -> JobGraph:
    """A JobGraph from Flink's REST ``/jobs/:jobid/plan`` JSON (``{"plan": {...}}`` or the inner object).

    Uses ``nodes[].id``, ``nodes[].parallelism`` and ``nodes[].inputs[]{id, ship_strategy, exchange}``
    (JsonPlanGenerator). A ship strategy outside the known set (a custom partitioner's ``toString``)
    counts as all-to-all unless it starts with FORWARD or RESCALE.
    """
    inner = plan.get("plan", plan)
    if not isinstance(inner, Mapping) or not isinstance(inner.get("nodes"), list):
        raise ModelInputError("a job plan needs a 'nodes' list (the JSON of /jobs/:jobid/plan)")
    vertices, edges = [], []
    for node in inner["nodes"]:
        if not isinstance(node, Mapping):
            raise ModelInputError("every plan node must be an object")
        vertex_id = str(node.get("id", ""))
        vertices.append(Vertex(vertex_id, node.get("parallelism")))  # type: ignore[arg-type]
        for item in node.get("inputs") or []:
            if not isinstance(item, Mapping):
                raise ModelInputError(f"inputs of plan node '{vertex_id}' must be objects")
            strategy = str(item.get("ship_strategy", "HASH")).strip().upper()
            if strategy not in ALL_TO_ALL | POINTWISE:
                strategy = "FORWARD" if strategy.startswith("FORWARD") else \
                    "RESCALE" if strategy.startswith("RESCALE") else "CUSTOM"
            exchange = str(item.get("exchange", "pipelined_bounded"))
            edges.append(Edge(str(item.get("id", "")), vertex_id, strategy, parse_partition_type(exchange)))
    return JobGraph(tuple(vertices), tuple(edges))


def chain_graph(parallelism: int, exchanges: int, ship_strategy: str = "HASH",
                partition_type: PartitionType | str = PartitionType.PIPELINED_BOUNDED) -> JobGraph:
    """``v0 -> v1 -> ... -> v<exchanges>``, all with the same parallelism, joined by one strategy."""
    _positive_int("exchanges", exchanges)
    vertices = tuple(Vertex(f"v{i}", parallelism) for i in range(exchanges + 1))
    ptype = parse_partition_type(partition_type)
    edges = tuple(Edge(f"v{i}", f"v{i + 1}", ship_strategy, ptype) for i in range(exchanges))
    return JobGraph(vertices, edges)


# A TaskManager: its index under the default placement, or the id a placement gives it (Flink's
# ``taskmanager-id``, e.g. "127.0.0.1:44405-ec9a66").
TaskManagerId = int | str
# Where each subtask runs: (vertex id, subtask index) -> TaskManager.
Placement = Mapping[tuple[str, int], TaskManagerId]


class Request(Record):
    """``count`` requests of ``size`` buffers each. ``phase`` is the step of a task's set-up that makes
    it (0: result partitions, then per input gate ``1 + 2i`` its floating pool and ``2 + 2i`` its
    exclusive buffers): the tasks of a stage deploy at once and run their set-up side by side, so the
    pool meets their requests phase by phase (``fits``)."""

    __slots__ = _fields = ("what", "size", "count", "phase")
    what: str
    size: int
    count: int
    phase: int

    def __init__(self, what: str, size: int, count: int = 1, phase: int = 0) -> None:
        store(self, (what, size, count, phase))


class RequestRun(Record):
    """The requests of ``repeat`` consecutive subtask (or slot) indices ``first, first + 1, ...``, each
    making ``pattern`` in that order: identical subtasks counted once. Request ``n`` of index ``k`` is
    named ``names[n][0] + str(k) + names[n][1]`` (its ``what`` is not used)."""

    __slots__ = _fields = ("first", "repeat", "pattern", "names")
    first: int
    repeat: int
    pattern: tuple[Request, ...]
    names: tuple[tuple[str, str], ...]

    def __init__(self, first: int, repeat: int, pattern: tuple[Request, ...],
                 names: tuple[tuple[str, str], ...]) -> None:
        store(self, (first, repeat, pattern, names))

    def name(self, n: int, index: int) -> str:
        before, after = self.names[n]
        return f"{before}{index}{after}"

    def each(self) -> Iterator[Request]:
        for index in range(self.first, self.first + self.repeat):
            for n, request in enumerate(self.pattern):
                yield replace(request, what=self.name(n, index))


class SubtaskBuffers(Record):
    """The input gates and result partitions of ``count`` identical subtasks of one vertex, indices
    ``subtask .. subtask + count - 1``, and the TaskManager they run in. ``required`` and ``target``
    are one subtask's."""

    __slots__ = _fields = ("vertex_id", "subtask", "taskmanager", "gates", "partitions", "count")
    vertex_id: str
    subtask: int
    taskmanager: TaskManagerId   # k // slots by default, else the placement's id
    gates: tuple[GateBuffers, ...]
    partitions: tuple[PartitionBuffers, ...]
    count: int

    def __init__(self, vertex_id: str, subtask: int, taskmanager: TaskManagerId,
                 gates: tuple[GateBuffers, ...], partitions: tuple[PartitionBuffers, ...],
                 count: int = 1) -> None:
        store(self, (vertex_id, subtask, taskmanager, gates, partitions, count))

    @property
    def required(self) -> int:
        return sum(g.required for g in self.gates) + sum(p.required for p in self.partitions)

    @property
    def target(self) -> int:
        """Gates at their maximum, partitions as Flink announces them (bounded max / blocking min)."""
        return sum(g.target for g in self.gates) + sum(p.announced for p in self.partitions)

    def pattern(self) -> tuple[tuple[Request, ...], tuple[tuple[str, str], ...]]:
        """One subtask's requests in Flink's order and their names around the subtask index
        (``RequestRun``)."""
        # Task.setupPartitionsAndGates: partitions first, then each gate: its floating pool,
        # then the exclusive buffers of every remote channel, one request per channel.
        head = f"{self.vertex_id}["
        out = [Request("", p.required) for p in self.partitions]
        names = [(head, "] result partition")] * len(self.partitions)
        for index, gate in enumerate(self.gates):
            out.append(Request("", gate.floating_min, 1, 1 + 2 * index))
            names.append((head, f"] input gate {index} floating pool"))
            if gate.exclusive_per_channel and gate.remote_channels:
                out.append(Request("", gate.exclusive_per_channel, gate.remote_channels, 2 + 2 * index))
                names.append((head, f"] input gate {index} exclusive buffers"))
        return tuple(out), tuple(names)

    def requests(self) -> list[Request]:
        pattern, names = self.pattern()
        return list(RequestRun(self.subtask, self.count, pattern, names).each())


class TaskManagerBuffers(Record):
    """The buffer demand of one TaskManager (all subtasks placed on it). ``requests`` are single
    requests or runs of identical subtasks' (``RequestRun``), in the order the subtasks set up."""

    __slots__ = _fields = ("taskmanager", "required", "target", "subtasks", "requests", "assumption")
    taskmanager: TaskManagerId
    required: int
    target: int
    subtasks: int
    requests: tuple[Request | RequestRun, ...]
    assumption: str

    def __init__(self, taskmanager: TaskManagerId, required: int, target: int, subtasks: int,
                 requests: tuple[Request | RequestRun, ...] = (), assumption: str = "") -> None:
        store(self, (taskmanager, required, target, subtasks, requests, assumption))

    def each_request(self) -> tuple[Request, ...]:
        """Every request one by one (runs expanded): as many as the TaskManager's subtasks make."""
        return tuple(r for item in self.requests
                     for r in (item.each() if isinstance(item, RequestRun) else (item,)))


_NO_TASKMANAGER = frozenset({"", "(unassigned)"})


def _subtask_taskmanager(subtask: Mapping[str, object]) -> str | None:
    """The TaskManager of one subtask entry: its id, else its ``host:data-port`` endpoint."""
    for key in ("taskmanager_id", "taskmanager-id"):  # collect's job.json / Flink's REST answer
        value = subtask.get(key)
        if isinstance(value, str) and value not in _NO_TASKMANAGER:
            return value
    endpoint = subtask.get("endpoint")
    if isinstance(endpoint, str) and endpoint not in _NO_TASKMANAGER:
        return endpoint
    # Before 1.15 the REST answer had only ``host``, spelled host:data-port; a bare host name cannot
    # tell two TaskManagers on one machine apart, so it is not used.
    host = subtask.get("host")
    if isinstance(host, str) and ":" in host:
        return host
    return None


def placement_from_job_json(data: object) -> dict[tuple[str, int], str]:
    """Subtask placement, ``(vertex_id, subtask_index) -> TaskManager id``, for ``subtask_buffers``.

    Reads ``flinktune collect``'s ``job.json`` (``{"job": ..., "vertices": [{"id", "subtasks":
    [{"subtask", "taskmanager_id", ...}]}]}``), the same shape with Flink's REST spelling
    (``taskmanager-id``, ``endpoint``: the ``subtasks`` of ``/jobs/:jobid/vertices/:vertexid``), a list
    of such vertices, or one vertex. Subtasks not yet placed (``(unassigned)``, no id) are left out,
    so the model names them if it needs them.
    """
    if isinstance(data, Mapping) and "vertices" in data:
        vertices = data["vertices"]
    elif isinstance(data, Mapping) and "subtasks" in data:
        vertices = [data]
    else:
        vertices = data
    if not isinstance(vertices, list):
        raise ModelInputError("a placement needs a 'vertices' list, each vertex with 'id' and 'subtasks' "
                              "(job.json from flinktune collect, or Flink's /jobs/:jobid/vertices/:vid)")
    out: dict[tuple[str, int], str] = {}
    for n, vertex in enumerate(vertices):
        if not isinstance(vertex, Mapping) or not isinstance(vertex.get("id"), str) or not vertex["id"]:
            raise ModelInputError(f"vertex {n} of the placement needs a non-empty 'id'")
        vertex_id = vertex["id"]
        subtasks = vertex.get("subtasks")
        if not isinstance(subtasks, list):
            raise ModelInputError(f"vertex '{vertex_id}' of the placement needs a 'subtasks' list")
        for subtask in subtasks:
            index = subtask.get("subtask") if isinstance(subtask, Mapping) else None
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise ModelInputError(f"a subtask of vertex '{vertex_id}' needs a non-negative 'subtask' "
                                      f"index, got {index!r}")
            tm = _subtask_taskmanager(subtask)  # type: ignore[arg-type]
            if tm is None:
                continue
            if out.setdefault((vertex_id, index), tm) != tm:
                raise ModelInputError(f"subtask {index} of vertex '{vertex_id}' is listed twice, in "
                                      f"TaskManagers {out[(vertex_id, index)]} and {tm}")
    return out


def busiest_taskmanager(demands: Sequence[TaskManagerBuffers]) -> TaskManagerBuffers:
    if not demands:
        raise ModelInputError("no TaskManager demand to compare")
    return max(demands, key=lambda d: (d.required, d.target))


def worst_case_taskmanager_buffers(parallelism: int, slots: int, settings: BufferSettings,
                                   *, exchanges: int = 1,
                                   partition_type: PartitionType | str = PartitionType.PIPELINED_BOUNDED
                                   ) -> TaskManagerBuffers:
    """A full TaskManager's demand when no job graph is known.

    Assumption (stated in the result): a chain of ``exchanges + 1`` vertices of parallelism
    ``parallelism`` joined by ``exchanges`` all-to-all exchanges (e.g. keyBy), default slot sharing
    with ``min(slots, parallelism)`` slots each holding one subtask of every vertex, and every channel
    remote (the upper bound; same-TaskManager channels would save their exclusive buffers).
    Per slot that is ``exchanges`` x (one result partition of ``parallelism`` subpartitions + one
    input gate of ``parallelism`` channels).
    """
    p = _positive_int("parallelism", parallelism)
    s = _positive_int("slots", slots)
    n = _positive_int("exchanges", exchanges)
    gate = input_gate_buffers(settings, p, p, partition_type)
    part = result_partition_buffers(settings, p, partition_type)
    per_slot_required = n * (gate.required + part.required)
    per_slot_target = n * (gate.target + part.announced)
    s = min(s, p)  # default slot sharing fills only as many slots as the parallelism
    # Every slot makes the same requests: one run of ``s`` slots.
    pattern: list[Request] = []
    names: list[tuple[str, str]] = []
    for e in range(n):
        pattern.append(Request("", part.required))
        names.append(("slot ", f" exchange {e} result partition"))
    for e in range(n):
        pattern.append(Request("", gate.floating_min, 1, 1))
        names.append(("slot ", f" exchange {e} input gate floating pool"))
        if gate.exclusive_per_channel:
            pattern.append(Request("", gate.exclusive_per_channel, gate.remote_channels, 2))
            names.append(("slot ", f" exchange {e} input gate exclusive buffers"))
    requests = (RequestRun(0, s, tuple(pattern), tuple(names)),)
    assumption = (f"chain of {n} all-to-all exchange(s) at parallelism {p}, {s} slots per TaskManager with "
                  "default slot sharing, every channel remote")
    return TaskManagerBuffers(0, s * per_slot_required, s * per_slot_target, s * (n + 1), requests,
                              assumption)


# ---------------------------------------------------------------------------------------------
# Does it fit?
# ---------------------------------------------------------------------------------------------

class NetworkFit(Record):
    """Whether a TaskManager's network buffers cover what its subtasks request."""

    __slots__ = _fields = ("fits", "required", "target", "total_buffers", "segment_bytes", "failing_request",
                           "available_at_failure", "failing_what", "message", "racing")
    fits: bool
    required: int               # buffers the TaskManager must hand out at start-up
    target: int                 # buffers its pools grow to
    total_buffers: int          # network buffers of the TaskManager
    segment_bytes: int
    failing_request: int | None     # what Flink prints as "required <n>"
    available_at_failure: int | None  # ... and as "only <m> available"
    failing_what: str | None
    message: str | None         # Flink's exception text when it does not fit
    # Other request sizes in the failing demand. Its tasks set up side by side, so which request Flink
    # meets first without room is a race: it may name one of these instead (with fewer available than
    # the size). Empty: every request has one size and Flink's numbers are exactly these.
    racing: tuple[int, ...]

    def __init__(self, fits: bool, required: int, target: int, total_buffers: int, segment_bytes: int,
                 failing_request: int | None, available_at_failure: int | None, failing_what: str | None,
                 message: str | None, racing: tuple[int, ...] = ()) -> None:
        store(self, (fits, required, target, total_buffers, segment_bytes, failing_request,
                     available_at_failure, failing_what, message, racing))

    @property
    def racing_text(self) -> str:
        """A note for the predicted error when its numbers depend on the race (else empty)."""
        if not self.racing or self.failing_request is None:
            return ""
        sizes = " / ".join(str(n) for n in (self.failing_request, *self.racing))
        return ("the tasks set up side by side, so which request meets an empty pool first is a race: "
                f"Flink names one of required {sizes}, with fewer available than that")

    def matches(self, required: int, available: int) -> bool:
        """Are Flink's printed numbers ones this prediction allows (exact when there is no race)?"""
        if self.failing_request is None:
            return False
        if not self.racing:
            return (required, available) == (self.failing_request, self.available_at_failure)
        return required in (self.failing_request, *self.racing) and 0 <= available < required

    @property
    def requested_usage_percent(self) -> float:
        """The ``RequestedMemoryUsage`` gauge (1.15+): target / total, in percent."""
        return 100.0 * self.target / self.total_buffers if self.total_buffers else float("inf")

    @property
    def headroom_buffers(self) -> int:
        return self.total_buffers - self.required


def insufficient_buffers_message(requested: int, available: int, total_buffers: int,
                                 segment_bytes: int) -> str:
    """``NetworkBufferPool``'s text (1.13 .. 2.x, unchanged)."""
    return (f"Insufficient number of network buffers: required {requested}, but only {available} available. "
            f"The total number of network buffers is currently set to {total_buffers} of {segment_bytes} "
            "bytes each. You can increase this number by setting the configuration keys "
            "'taskmanager.memory.network.fraction', 'taskmanager.memory.network.min', and "
            "'taskmanager.memory.network.max'.")


def fits(demand: TaskManagerBuffers | int, total_buffers: int, segment_bytes: int) -> NetworkFit:
    """Would the TaskManager start the job's tasks, or fail with "Insufficient number of network buffers"?

    With a TaskManagerBuffers the requests are replayed phase by phase (``Request.phase``: the tasks
    deploy at once, so every task's result partitions are set up before the input gates' pools and
    exclusive buffers), so the numbers are those Flink prints for the first failing request. The
    verdict never depends on the order; the printed figures can, where requests of different sizes
    race in one phase. With a plain int the whole demand is one request. A run of identical subtasks
    is replayed in whole repetitions at once, then request by request in the one that fails.
    """
    total = _positive_int("total_buffers", total_buffers, allow_zero=True)
    seg = _positive_int("segment_bytes", segment_bytes)
    if isinstance(demand, int) and not isinstance(demand, bool):
        required = _positive_int("required buffers", demand, allow_zero=True)
        target = required
        items: Sequence[Request | RequestRun] = ()
    elif isinstance(demand, TaskManagerBuffers):
        required, target = demand.required, demand.target
        items = demand.requests
    else:
        raise ModelInputError(f"cannot check the fit of a {type(demand).__name__}")
    # (run, named as given): a single request is a run of one, its name its own.
    runs = [(item, False) if isinstance(item, RequestRun) else (RequestRun(0, 1, (item,), (("", ""),)), True)
            for item in items if not isinstance(item, RequestRun) or item.repeat > 0]
    if not runs:
        runs = [(RequestRun(0, 1, (Request("all pools", required),), (("", ""),)), True)]
    sizes_all = {r.size for run, _ in runs for r in run.pattern if r.size > 0}
    used = 0
    for phase in sorted({r.phase for run, _ in runs for r in run.pattern}):
        for run, single in runs:
            part = [(n, r) for n, r in enumerate(run.pattern) if r.phase == phase and r.size > 0]
            if not part:
                continue
            per_index = sum(r.size * r.count for _, r in part)
            if per_index * run.repeat <= total - used:
                used += per_index * run.repeat
                continue
            whole = (total - used) // per_index     # repetitions that still fit entirely
            used += whole * per_index
            for n, request in part:
                room = total - used
                if request.size * request.count <= room:
                    used += request.size * request.count
                    continue
                granted = room // request.size  # the first request that no longer fits
                used += granted * request.size
                available = total - used
                what = run.pattern[n].what if single else run.name(n, run.first + whole)
                sizes = sorted(sizes_all - {request.size}, reverse=True)
                return NetworkFit(False, required, target, total, seg, request.size, available, what,
                                  insufficient_buffers_message(request.size, available, total, seg),
                                  tuple(sizes))
    return NetworkFit(True, required, target, total, seg, None, None, None, None)
