"""Does the job's network-buffer demand fit the TaskManager's network memory? One answer for every
command: ``lint`` (FTC030 / FTC034), ``recommend`` and ``model --config`` all call ``network_verdict``.

Inputs come from a ``flinktune.situation.Situation``: the memory Flink derives for the effective
configuration (model.memory, Flink's own refusal text when it refuses), the buffer settings in
force for the version (model.buffers), and the job graph: the plan and the subtask placement when
known, else the stated bound of ``exchanges`` all-to-all exchanges in a chain, ``min(slots,
parallelism)`` busy slots each holding one subtask of every vertex, every channel remote
(``buffers.worst_case_taskmanager_buffers``). Without a plan the exchanges count is the user's
(flag, profile, project) or the pessimistic default (situation.DEFAULT_EXCHANGES); the verdict then
also gives the one-exchange demand, which any job with a keyBy needs at least, so that callers can
tell "fails for sure" from "fails at the pessimistic bound".

Numpy-free: the lint path imports this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flinktune.errors import FlinktuneError, ModelInputError
from flinktune.model import buffers as mb
from flinktune.model.memory import (
    TaskManagerMemory,
    derive_taskmanager_memory,
    taskmanager_memory_options,
)
from flinktune.record import Record, replace, store
from flinktune.releases import ADAPTIVE_MAX_FROM_DEFAULT
from flinktune.situation import Situation
from flinktune.situation.sourced import Sourced

if TYPE_CHECKING:
    from flinktune.model.batch import AssumedParallelism, BatchDemand
# model.batch and model.layout are imported where a plan or a batch workload needs them: lint's
# start-up on a streaming file does not pay for them.

# Fixes are sized with this margin above Flink's exact requirement (never exactly 100%).
DEFAULT_HEADROOM = 0.25
MIB = 1024 * 1024


class MemoryVerdict(Record):
    """The TaskManager memory Flink derives, or its refusal."""

    __slots__ = _fields = ("memory", "error", "sized")
    memory: TaskManagerMemory | None
    error: str | None            # Flink's exception text when it refuses to start
    sized: bool                  # the configuration sets a size at all

    def __init__(self, memory: TaskManagerMemory | None, error: str | None, sized: bool) -> None:
        store(self, (memory, error, sized))

    @property
    def refused(self) -> bool:
        return self.error is not None


class NetworkVerdict(Record):
    """The network-buffer demand of the busiest TaskManager against what its memory gives."""

    __slots__ = _fields = ("memory", "settings", "settings_error", "parallelism", "slots", "exchanges",
                           "graph_known", "demand", "minimum_demand", "fit", "minimum_fit")
    memory: MemoryVerdict
    settings: mb.BufferSettings | None      # None: a buffer option Flink would refuse
    settings_error: str | None
    parallelism: Sourced[int]
    slots: Sourced[int]
    exchanges: Sourced[int] | None           # None when the plan gives the graph
    graph_known: bool
    demand: mb.TaskManagerBuffers | None      # at the plan, or at the stated bound
    minimum_demand: mb.TaskManagerBuffers | None   # one exchange (only when exchanges is the default)
    fit: mb.NetworkFit | None                 # None when memory or settings are unknown
    minimum_fit: mb.NetworkFit | None

    def __init__(self, memory: MemoryVerdict, settings: mb.BufferSettings | None, settings_error: str | None,
                 parallelism: Sourced[int], slots: Sourced[int], exchanges: Sourced[int] | None,
                 graph_known: bool, demand: mb.TaskManagerBuffers | None,
                 minimum_demand: mb.TaskManagerBuffers | None,
                 fit: mb.NetworkFit | None, minimum_fit: mb.NetworkFit | None) -> None:
        store(self, (memory, settings, settings_error, parallelism, slots, exchanges, graph_known, demand,
                     minimum_demand, fit, minimum_fit))

    @property
    def segment_bytes(self) -> int | None:
        return None if self.memory.memory is None else self.memory.memory.segment_bytes

    @property
    def available(self) -> int | None:
        return None if self.memory.memory is None else self.memory.memory.network_buffers

    @property
    def fits(self) -> bool | None:
        """Does it fit at the plan / the stated bound? None when that cannot be judged."""
        return None if self.fit is None else self.fit.fits

    @property
    def fails_for_sure(self) -> bool:
        """Does not fit even with what is certain: the plan, the stated exchanges, or one exchange."""
        if self.fit is None or self.fit.fits:
            return False
        if self.minimum_fit is None:
            return True
        return not self.minimum_fit.fits

    @property
    def assumption(self) -> str:
        if self.demand is None:
            return ""
        text = self.demand.assumption
        if self.exchanges is not None:
            text += f"; {self.exchanges.value} exchange(s) from {self.exchanges.describe()}"
        return text

    def needed_network_bytes(self, headroom: float = DEFAULT_HEADROOM) -> int | None:
        """Network memory to give (whole MiB): the demand plus ``headroom``, at least one buffer more."""
        if self.demand is None or self.segment_bytes is None:
            return None
        need = self.demand.required * self.segment_bytes
        with_margin = max(int(need * (1 + headroom)), need + self.segment_bytes)
        return -(-with_margin // MIB) * MIB

    def as_dict(self) -> dict[str, Any]:
        return {
            "fits": self.fits, "fails_for_sure": self.fails_for_sure,
            "required": None if self.demand is None else self.demand.required,
            "minimum_required": None if self.minimum_demand is None else self.minimum_demand.required,
            "available": self.available, "segment_bytes": self.segment_bytes,
            "parallelism": self.parallelism.value, "slots": self.slots.value,
            "exchanges": None if self.exchanges is None else self.exchanges.value,
            "graph_known": self.graph_known, "assumption": self.assumption,
            "message": None if self.fit is None else self.fit.message,
            "memory_error": self.memory.error,
        }


def fit_words(fit: mb.NetworkFit, one_exchange: mb.NetworkFit | None,
              not_fit: str = "DOES NOT FIT") -> tuple[str, bool]:
    """The verdict in words, and whether only the pessimistic bound fails: ``one_exchange`` is the fit
    at one all-to-all exchange (what any job with a keyBy needs), given when the bound was judged."""
    if fit.fits:
        return "fits", False
    if one_exchange is not None and one_exchange.fits:
        return (f"fits one all-to-all exchange ({one_exchange.required} needed), NOT the pessimistic "
                "bound"), True
    return not_fit, False


def taskmanager_memory(situation: Situation) -> MemoryVerdict:
    """Flink's TaskManager memory derivation for the situation's effective configuration.

    A configuration that sets no size at all gets Flink's refusal when the situation says the file
    is complete, and no verdict (``memory`` and ``error`` None) when it is an overlay.
    A value that does not parse gives no verdict either (the invalid-value rule reports it).
    """
    def compute() -> MemoryVerdict:
        sized = situation.sets_memory_size("taskmanager")
        if not sized and not situation.complete:
            return MemoryVerdict(None, None, False)
        try:
            options = taskmanager_memory_options(situation.effective)
        except FlinktuneError:
            return MemoryVerdict(None, None, sized)
        try:
            return MemoryVerdict(derive_taskmanager_memory(options, situation.flink_version), None, sized)
        except ModelInputError as error:
            return MemoryVerdict(None, error.message, sized)

    return _memo(situation, "tm-memory", compute)


def jobmanager_memory(situation: Situation) -> tuple[Any, str | None, bool]:
    """(JobManagerMemory or None, Flink's refusal or None, sized) as for ``taskmanager_memory``."""
    from flinktune.model.memory import derive_jobmanager_memory, jobmanager_memory_options

    def compute() -> tuple[Any, str | None, bool]:
        sized = situation.sets_memory_size("jobmanager")
        if not sized and not situation.complete:
            return None, None, False
        try:
            options = jobmanager_memory_options(situation.effective)
        except FlinktuneError:
            return None, None, sized
        try:
            return derive_jobmanager_memory(options), None, sized
        except ModelInputError as error:
            return None, error.message, sized

    return _memo(situation, "jm-memory", compute)


def buffer_settings(situation: Situation) -> mb.BufferSettings:
    """The buffer options in force: what the file sets where the version reads it, else defaults
    (2.x: the hard-coded values). Raises ModelInputError for values Flink refuses."""
    eff = situation.effective
    version = situation.flink_version

    def given(key: str) -> int | None:
        status = eff.status(key)
        if status.kind not in ("option", "deprecated-alias", "fallback-alias") or not eff.is_set(key):
            return None
        try:
            return eff.integer(key)
        except FlinktuneError as error:
            raise ModelInputError(error.message) from None

    return mb.settings_from(version, given)


def _partition_types(situation: Situation) -> list[mb.PartitionType]:
    if situation.workload.value == "streaming":
        return [mb.PartitionType.PIPELINED_BOUNDED]
    # A batch job's exchanges are blocking by default; the pipelined case also covers
    # execution.batch-shuffle-mode ALL_EXCHANGES_PIPELINED.
    return [mb.PartitionType.BLOCKING, mb.PartitionType.PIPELINED_BOUNDED]


KEY_BATCH_SHUFFLE_MODE = "execution.batch-shuffle-mode"
KEY_DEFAULT_PARALLELISM = "parallelism.default"


def plan_graph(situation: Situation) -> tuple[mb.JobGraph, AssumedParallelism | None] | None:
    """The plan's job graph, vertices the adaptive batch scheduler had not decided yet (parallelism
    -1 in the REST plan) charged at its upper bound (model.batch; the assumption is returned)."""
    if situation.plan is None:
        return None

    def compute() -> tuple[mb.JobGraph, AssumedParallelism | None]:
        from flinktune.model.batch import (
            KEY_ADAPTIVE_MAX,
            adaptive_max_parallelism,
            has_undecided,
            resolve_undecided,
        )

        plan = situation.plan
        assumed = None
        if has_undecided(plan):
            eff = situation.effective

            def integer(key: str) -> int | None:
                try:
                    return eff.integer(key) if eff.is_set(key) else None
                except FlinktuneError:
                    return None

            bound, source = adaptive_max_parallelism(integer(KEY_ADAPTIVE_MAX),
                                                     integer(KEY_DEFAULT_PARALLELISM),
                                                     ADAPTIVE_MAX_FROM_DEFAULT.applies(situation.flink_version))
            plan, assumed = resolve_undecided(plan, bound, source)
        return mb.job_graph_from_plan(plan), assumed

    return _memo(situation, "plan-graph", compute)


def blocking_batch(situation: Situation) -> bool:
    """A batch job whose exchanges are blocking (the default ALL_EXCHANGES_BLOCKING; a plan says)."""
    if situation.workload.value != "batch":
        return False
    eff = situation.effective
    try:
        mode = ((eff.string(KEY_BATCH_SHUFFLE_MODE) or "").upper()
                if eff.is_set(KEY_BATCH_SHUFFLE_MODE) else "")
    except FlinktuneError:
        mode = ""
    return mode in ("", "ALL_EXCHANGES_BLOCKING")


def batch_demand(situation: Situation, settings: mb.BufferSettings, exchanges: int | None = None
                 ) -> BatchDemand | None:
    """A blocking batch job's demand per pipelined region (model.batch); None for other jobs."""
    if not blocking_batch(situation):
        return None
    from flinktune.model.batch import batch_taskmanager_buffers, stage_bound

    slots, tms = situation.slots.value, situation.taskmanagers.value
    found = plan_graph(situation)
    if found is not None:
        graph, assumed = found
        if not any(e.partition_type is mb.PartitionType.BLOCKING for e in graph.edges):
            return None
        placement = situation.placement
        demand = None
        if placement is not None:
            try:
                demand = batch_taskmanager_buffers(graph, settings, slots, placement=placement)
            except ModelInputError:
                demand = None   # a placement from another run: the guaranteed locality stands in
        if demand is None:
            demand = batch_taskmanager_buffers(graph, settings, slots, taskmanagers=tms)
        notes = [n for n in (situation.plan_note, assumed.describe() if assumed is not None else None) if n]
        if notes:
            b = demand.busiest
            demand = replace(demand, busiest=replace(b, assumption="; ".join([b.assumption, *notes])))
        return demand
    n = situation.exchanges.value if exchanges is None else exchanges
    # The busiest stage of a chain reads one exchange; a join stage reads two (the pessimistic bound).
    return stage_bound(situation.parallelism.value, slots, tms, settings, inputs=1 if n <= 1 else 2)


def buffer_demand(situation: Situation, settings: mb.BufferSettings, exchanges: int | None = None
                  ) -> mb.TaskManagerBuffers:
    """The busiest TaskManager's demand: from the plan (and placement) when known, else the bound.
    A blocking batch job counts only what one pipelined region holds at once (model.batch)."""
    batch = batch_demand(situation, settings, exchanges)
    if batch is not None:
        return batch.busiest
    slots = situation.slots.value
    if situation.plan is not None:
        from flinktune.model.layout import busiest_taskmanager_buffers

        graph = plan_graph(situation)[0]  # type: ignore[index]
        placement = situation.placement
        if placement is not None:
            try:
                return busiest_taskmanager_buffers(graph, settings, slots, placement=placement)
            except ModelInputError:
                pass   # a placement from another run: the default placement stands in (stated)
        return busiest_taskmanager_buffers(graph, settings, slots)
    n = situation.exchanges.value if exchanges is None else exchanges
    cases = [mb.worst_case_taskmanager_buffers(situation.parallelism.value, slots, settings, exchanges=n,
                                               partition_type=t) for t in _partition_types(situation)]
    return max(cases, key=lambda d: (d.required, d.target))


def network_verdict(situation: Situation) -> NetworkVerdict:
    """THE network-buffer verdict of a situation (see the module docstring)."""
    return _memo(situation, "network-verdict", lambda: _verdict(situation))


def _verdict(situation: Situation) -> NetworkVerdict:
    memory = taskmanager_memory(situation)
    graph_known = situation.plan is not None
    exchanges = None if graph_known else situation.exchanges
    try:
        settings = buffer_settings(situation)
    except ModelInputError as error:
        return NetworkVerdict(memory, None, error.message, situation.parallelism, situation.slots, exchanges,
                              graph_known, None, None, None, None)
    try:
        demand = buffer_demand(situation, settings)
        minimum = (buffer_demand(situation, settings, exchanges=1)
                   if exchanges is not None and not exchanges.stated and exchanges.value > 1 else None)
    except ModelInputError as error:
        return NetworkVerdict(memory, settings, error.message, situation.parallelism, situation.slots,
                              exchanges, graph_known, None, None, None, None)
    fit = minimum_fit = None
    if memory.memory is not None:
        total, segment = memory.memory.network_buffers, memory.memory.segment_bytes
        fit = mb.fits(demand, total, segment)
        minimum_fit = mb.fits(minimum, total, segment) if minimum is not None else None
        try:
            batch = batch_demand(situation, settings)
            batch_min = batch_demand(situation, settings, exchanges=1) if minimum is not None else None
        except ModelInputError:
            batch = batch_min = None
        # Flink fails at the first stage (in run order) that does not fit, with that stage's numbers.
        if batch is not None:
            fit = batch.fit(total, segment)
        if batch_min is not None:
            minimum_fit = batch_min.fit(total, segment)
    return NetworkVerdict(memory, settings, None, situation.parallelism, situation.slots, exchanges,
                          graph_known, demand, minimum, fit, minimum_fit)


def _memo(situation: Situation, name: str, compute: Any) -> Any:
    """Per-situation memo (a Situation is frozen; its __dict__ holds cached values)."""
    cache = situation.__dict__.setdefault("_model_memo", {})
    if name not in cache:
        cache[name] = compute()
    return cache[name]


KEY_NET_MIN = "taskmanager.memory.network.min"
KEY_NET_MAX = "taskmanager.memory.network.max"
KEY_TM_PROCESS = "taskmanager.memory.process.size"
KEY_TM_FLINK = "taskmanager.memory.flink.size"
_MAX_TOTAL = 1024**4   # 1 TiB: past this, no single TaskManager size is a sensible fix


def _with_setting(situation: Situation, key: str, value: str) -> Situation:
    from flinktune.config.types import ConfigEntry

    document = situation.document
    entry = ConfigEntry(key, value, value, document.path, 0)
    entries = (*(e for e in document.entries if e.key != key), entry)
    return situation.with_document(replace(document, entries=entries))


def _clean(after: Situation) -> bool:
    """The memory derives and no min exceeds its max (what FTC011 / FTC050 would report)."""
    verdict = network_verdict(after)
    if verdict.memory.memory is None:
        return False
    eff = after.effective
    try:
        low, high = eff.memory_bytes(KEY_NET_MIN), eff.memory_bytes(KEY_NET_MAX)
    except FlinktuneError:
        return False
    return low is None or high is None or low <= high


HEAP_FLOOR_PER_SLOT = 128 * MIB


def heap_floor_bytes(heap_before: int, slots: int) -> int:
    """The task heap a memory raise keeps: what the file gives, up to 128 MiB per slot, at least 32 MiB
    per slot unless the file gives less already (a small heap is the user's choice, not a reason to
    grow). recommend and lint's fix grow a TaskManager by the same rule."""
    return min(max(32 * MIB * slots, min(heap_before, HEAP_FLOOR_PER_SLOT * slots)), heap_before)


def next_total_bytes(size: int) -> int:
    """The next TaskManager size tried when growing one: 256 MiB steps, an eighth of the size when larger."""
    return size + max(256 * MIB, (size // 8) // (256 * MIB) * (256 * MIB))


def network_fix_changes(situation: Situation, headroom: float = DEFAULT_HEADROOM
                        ) -> tuple[tuple[str, str], ...]:
    """The config changes (key, value) that move a network shortfall to fitting without creating
    another error: ``network.min`` to the demand plus headroom when ``network.max`` allows it; else
    ``network.max`` first (before 1.17 it defaults to 1g: raising only the min would fail with "min
    ... larger than max"); else, when a larger min would squeeze the task heap, ``network.min`` together
    with the total size the file sets, grown until the heap is kept (``heap_floor_bytes``, as recommend).
    Growing only the total until the network fraction gives enough would ask for ten times the
    memory. Empty when there is no shortfall or no change helps."""
    from flinktune.units import format_memory

    verdict = network_verdict(situation)
    needed = verdict.needed_network_bytes(headroom)
    memory = verdict.memory.memory
    if verdict.fit is None or verdict.fit.fits or needed is None or memory is None:
        return ()
    eff = situation.effective
    try:
        high = eff.memory_bytes(KEY_NET_MAX)
    except FlinktuneError:
        return ()
    changes: list[tuple[str, str]] = []
    trial = situation
    if high is not None and high < needed:
        changes.append((KEY_NET_MAX, format_memory(needed)))
        trial = _with_setting(trial, *changes[-1])
        if _clean(trial) and network_verdict(trial).fits:
            return tuple(changes)
    changes.append((KEY_NET_MIN, format_memory(needed)))
    trial = _with_setting(trial, *changes[-1])
    floor = heap_floor_bytes(memory.task_heap_bytes, situation.slots.value)
    if _fits_keeping_heap(trial, floor):
        return tuple(changes)
    # A larger network would eat the task heap: grow the total the file sizes, as recommend does.
    total_key = KEY_TM_FLINK if memory.path == "flink-size" else KEY_TM_PROCESS
    if situation.spec.taskmanager_memory_bytes is not None:
        return ()   # the operator's spec.taskManager.resource.memory decides: a manual change
    total = memory.total_flink_bytes if total_key == KEY_TM_FLINK else memory.total_process_bytes
    while total < _MAX_TOTAL:
        total = next_total_bytes(total)
        grown = _with_setting(trial, total_key, format_memory(total))
        if _fits_keeping_heap(grown, floor):
            return (*changes, (total_key, format_memory(total)))
    return ()


def _fits_keeping_heap(after: Situation, floor: int) -> bool:
    """Derives, no min above its max, the demand fits, and the task heap stays at ``floor`` at least."""
    if not _clean(after):
        return False
    verdict = network_verdict(after)
    return bool(verdict.fits) and verdict.memory.memory is not None and \
        verdict.memory.memory.task_heap_bytes >= floor


def network_fix(situation: Situation, headroom: float = DEFAULT_HEADROOM) -> tuple[str, str] | None:
    """The fix when one config change does it (``network_fix_changes``), else None."""
    changes = network_fix_changes(situation, headroom)
    return changes[0] if len(changes) == 1 else None
