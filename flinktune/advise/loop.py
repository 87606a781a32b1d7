"""The one loop that runs the planner's steps: it applies what a step proposes, refits the
TaskManager size (one size change per run, always measured from the file's own size: no ratchet),
rolls a step back when nothing up to the memory ceiling fits it, and computes every change's effects
by replaying the changes on the original file.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from flinktune.advise.change import Effect, ProposedChange
from flinktune.advise.limits import MIB, memory_ceiling
from flinktune.advise.plan import SPEC_MEMORY, Plan, apply_change
from flinktune.advise.state import KEY_FLINK, KEY_PROCESS, METRICS, ConfigState
from flinktune.advise.text import mem_value, size_text
from flinktune.errors import FlinktuneError
from flinktune.model.network_fit import heap_floor_bytes, next_total_bytes
from flinktune.record import replace
from flinktune.units import parse_memory_size

SIZE_KEYS = (KEY_PROCESS, KEY_FLINK, SPEC_MEMORY)


def run(plan: Plan, steps: Sequence[ModuleType]) -> list[ProposedChange]:
    """Run ``steps`` (modules with ``NAME`` and ``propose(plan)``) in order; the changes with effects.

    First, do no harm: when the file's network buffers fit and the proposed set does not (a step
    raised the demand beyond what any TaskManager up to the ceiling gives), the step that raised it
    last is dropped and the steps run again without it, with a note saying why."""
    initial = (dict(plan.values), dict(plan.overlay), list(plan.notes), list(plan.withheld))
    skipped: dict[str, str] = {}
    while True:
        plan.values, plan.overlay = dict(initial[0]), dict(initial[1])
        plan.notes, plan.withheld, plan.changes = list(initial[2]), list(initial[3]), []
        plan.rescaled = None      # a step may rescale the job (steps/parallelism.py)
        _run_steps(plan, [s for s in steps if s.NAME not in skipped])
        harm = _harmful_step(plan)
        if harm is None:
            break
        skipped[harm[0]] = harm[1]
    for name, why in skipped.items():
        plan.notes.append(f"Not proposed ({name}): {why}")
    _verify_keys(plan)
    return with_effects(plan)


def _run_steps(plan: Plan, steps: Sequence[ModuleType]) -> None:
    for step in steps:
        plan.step = step.NAME
        mark = (len(plan.changes), dict(plan.values), dict(plan.overlay), list(plan.changes), plan.rescaled)
        notes = len(plan.notes)
        step.propose(plan)
        if len(plan.changes) == mark[0]:
            continue
        problem = fit_memory(plan)
        if problem is not None:
            _count, plan.values, plan.overlay, plan.changes, plan.rescaled = mark
            del plan.notes[notes:]
            plan.notes.append(f"Not proposed ({step.NAME}): {problem}")


def _fits(state: ConfigState) -> bool | None:
    memory, _error = state.memory_or_error()
    if memory is None:
        return None
    try:
        return state.demand.required <= memory.network_buffers
    except FlinktuneError:
        return None


def _harmful_step(plan: Plan) -> tuple[str, str] | None:
    """(step, why) when the changes turn a configuration whose buffers fit into one whose do not."""
    if _fits(plan.original) is not True or _fits(plan.sized) is not False:
        return None
    previous = plan.original.demand.required
    culprit = None
    for index, change in enumerate(plan.changes):
        values, overlay = replay(plan, plan.changes[:index + 1])
        try:
            required = plan.state(values, overlay, plan.sized_job).demand.required
        except FlinktuneError:
            continue
        if required > previous and change.proposed_by not in ("network-memory", "memory-fit"):
            culprit = change.proposed_by
        previous = required
    if culprit is None and plan.rescaled is not None:
        # No setting raised the demand: the rescaled job did (steps/parallelism.py).
        culprit = next((c.proposed_by for c in plan.changes if c.proposed_by == "parallelism"), None)
    if culprit is None:
        return None
    final = plan.sized
    memory, _e = final.memory_or_error()
    return culprit, (f"it would raise the buffer demand to {final.demand.required} buffers per TaskManager, "
                     "more "
                     f"than the {memory.network_buffers if memory else 0} any TaskManager size up to the "
                     "memory "
                     "ceiling gives; the current settings fit, so they are kept")


def _base_size(plan: Plan) -> tuple[str, int] | None:
    """The size the file sets (the operator's field, process size or total Flink memory)."""
    state = plan.original
    if plan.spec.taskmanager_memory_bytes is not None:
        return SPEC_MEMORY, plan.spec.taskmanager_memory_bytes
    if state.is_set(KEY_PROCESS):
        return KEY_PROCESS, state.eff.memory_bytes(KEY_PROCESS) or 0
    if state.is_set(KEY_FLINK):
        return KEY_FLINK, state.eff.memory_bytes(KEY_FLINK) or 0
    return None


def fit_memory(plan: Plan) -> str | None:
    """Keep the changes so far inside the TaskManager: raise its size if they squeeze the task heap
    (or no longer fit). None when it fits; else why not."""
    slots = plan.job.slots
    original, _error = plan.original.memory_or_error()
    heap_before = original.task_heap_bytes if original is not None else 1 << 62
    floor = heap_floor_bytes(heap_before, slots)
    memory, error = plan.current.memory_or_error()
    if memory is not None and memory.task_heap_bytes >= floor:
        return None
    if memory is None and error is not None and "need to be configured" in error:
        return None        # no size at all: reported by the memory step, nothing to raise
    base = _base_size(plan)
    if base is None:
        return (f"the changes need more TaskManager memory ({error or 'task heap too small'}) and no size "
                "is set")
    key, base_bytes = base
    ceiling = memory_ceiling(base_bytes)
    size = base_bytes
    while True:
        size = next_total_bytes(size)
        if size > ceiling:
            return (f"no TaskManager size up to the ceiling {size_text(ceiling)} (docs/recommend.md) leaves "
                    f"{size_text(floor)} of task heap for {slots} slot(s) with these changes: run fewer "
                    "slots per TaskManager or a lower parallelism")
        values, overlay = dict(plan.values), dict(plan.overlay)
        if key == SPEC_MEMORY:
            overlay[KEY_PROCESS] = mem_value(size)
        else:
            values[key] = mem_value(size)
        candidate = plan.state(values, overlay)
        found, _e = candidate.memory_or_error()
        if found is not None and found.task_heap_bytes >= floor:
            break
    heap_text = size_text(memory.task_heap_bytes) if memory is not None else ""
    steps = ", ".join(sorted({c.proposed_by for c in plan.changes if c.proposed_by}))
    why = (f"the changes above ({steps}) would leave "
           f"{'no valid memory layout' if memory is None else 'a task heap of ' + heap_text}"
           f" for {slots} slot(s); sized from the file's {size_text(base_bytes)} to keep at least "
           f"{size_text(floor)} of task heap (ceiling {size_text(ceiling)})")
    _set_size(plan, key, size, why)
    return None


def _set_size(plan: Plan, key: str, size: int, why: str) -> None:
    """One size change per run: a later raise replaces the earlier one (measured from the file)."""
    metrics = ("network_available_bytes", "task_heap_bytes")
    if key == SPEC_MEMORY:
        text = plan.spec.taskmanager_memory_text or ""
        value = f"{size // MIB}Mi" if text.endswith(("i", "Mi", "Gi")) else f"{size // MIB}m"
        change = ProposedChange("set", SPEC_MEMORY, value, target="spec",
                                why=why + "; the operator maps this field to taskmanager.memory.process.size",
                                file=plan.document.path, line=plan.spec.taskmanager_memory_line,
                                proposed_by="memory-fit",
                                current=text, metrics=metrics)
    else:
        change = ProposedChange("set", key, mem_value(size), why=why, file=plan.document.path,
                                line=plan.line(key), proposed_by="memory-fit",
                                current=plan.original.values.get(key) and str(plan.original.values.get(key)),
                                default=plan.default(key), metrics=metrics)
    plan.changes = [c for c in plan.changes if c.key != key]
    plan.changes.append(change)
    plan.values, plan.overlay = replay(plan, plan.changes)


def replay(plan: Plan, changes: Sequence[ProposedChange]) -> tuple[dict, dict]:
    values = dict(plan.original.values)
    overlay = dict(plan.original.memory_overlay)
    for change in changes:
        apply_change(values, overlay, change)
    return values, overlay


def _verify_keys(plan: Plan) -> None:
    """Never propose a key the target version lacks (belt and braces over each step)."""
    kept = []
    for change in plan.changes:
        key = change.new_key if change.action == "rename" else change.key
        if change.target == "config" and change.action in ("set", "rename") and not plan.readable(key or ""):
            plan.notes.append(f"(internal) dropped a change to {key}: not an option of Flink {plan.version}")
            continue
        kept.append(change)
    plan.changes = kept
    plan.values, plan.overlay = replay(plan, kept)


def with_effects(plan: Plan) -> list[ProposedChange]:
    out = []
    states: list[ConfigState] = [plan.original]
    rescaled = False
    for index in range(len(plan.changes)):
        values, overlay = replay(plan, plan.changes[:index + 1])
        # The job as it is up to this change: rescaled from the parallelism change on.
        rescaled = rescaled or plan.changes[index].proposed_by == "parallelism"
        states.append(plan.state(values, overlay, plan.sized_job if rescaled else None))
    for index, change in enumerate(plan.changes):
        before = states[index].snapshot()
        after = states[index + 1].snapshot()
        effects = tuple(Effect(name, METRICS[name][0], METRICS[name][1], before.get(name), after.get(name))
                        for name in change.metrics if name in METRICS
                        and (before.get(name) is not None or after.get(name) is not None))
        out.append(replace(change, effects=effects or change.effects))
    return out


def parse_size(text: str) -> int:
    return parse_memory_size(text).bytes
