"""Batch shuffles (FLIP-148 and the batch shuffle guide): sort-merge instead of hash for large
parallelism, write and read buffers for large jobs. The evidence is the job itself (a batch job and
its parallelism, from the plan, the dump, the flags or the config): hash shuffle's one buffer and one
file per subpartition is what the docs warn about. Sort-merge is the default from 1.15
(min-parallelism 1), opt-in before; min-buffers >= 2048 in production; read memory comes out of
framework off-heap (TaskManagerOptions)."""

from __future__ import annotations

from flinktune.advise.limits import (
    BATCH_FLOATING,
    HUGE_BATCH_PARALLELISM,
    LARGE_BATCH_PARALLELISM,
    MIB,
    NETWORK_HEADROOM,
    SORT_MIN_BUFFERS_PRODUCTION,
)
from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_FRAMEWORK_OFF_HEAP, KEY_READ
from flinktune.advise.text import mem_value, size_text
from flinktune.errors import FlinktuneError
from flinktune.model import buffers as mb
from flinktune.model.batch import (
    KEY_TASK_OFF_HEAP,
    READ_OOM_PREFIX,
    READ_REST_BYTES,
    ReadMemoryVerdict,
    read_below_segment_message,
    sort_spill_region_bytes,
)
from flinktune.model.blocking import default_batch_shuffle_read_bytes, hash_shuffle_min_bytes
from flinktune.record import replace
from flinktune.releases import BUFFERS_FIXED, SORT_SHUFFLE_DEFAULT

NAME = "batch-shuffle"


def propose(plan: Plan) -> None:
    job = plan.job
    if job.workload != "batch":
        return
    state = plan.current
    settings = state.settings
    p = job.parallelism
    seg = state.segment_bytes
    source = plan.parallelism_source
    evidence = (f"batch job, parallelism {p} [{source}]",)
    metrics = ("network_needed_bytes", "network_available_bytes")
    # Hash shuffle's cost (one buffer and one file per subpartition) is what the docs warn about for
    # large jobs; below LARGE_BATCH_PARALLELISM a forced hash shuffle is the user's choice and is
    # sized for as it is (it needs fewer buffers than sort-merge's 512 per partition).
    hash_possible = not BUFFERS_FIXED.applies(plan.version)     # 2.x: always sort-merge
    if hash_possible and settings.sort_shuffle_min_parallelism > p >= LARGE_BATCH_PARALLELISM:
        why = (f"hash shuffle (FLIP-148) keeps one buffer per subpartition: {p} x {mem_value(seg)} = "
               f"{size_text(hash_shuffle_min_bytes(p, seg))} per result partition and {p} files per "
               "producer, "
               "random IO on read; sort-merge shuffle needs a fixed number of buffers and writes one data "
               "and "
               "one index file per partition")
        if not SORT_SHUFFLE_DEFAULT.applies(plan.version):
            plan.set_option(mb.KEY_SORT_MIN_PAR, "1", why + " (opt-in before 1.15, the default from 1.15)",
                            metrics, evidence)
        else:
            plan.delete(mb.KEY_SORT_MIN_PAR, why + " (the default, 1, uses it)", metrics, evidence)
    state = plan.current
    settings = state.settings
    sort_used = BUFFERS_FIXED.applies(plan.version) or settings.sort_shuffle_min_parallelism <= p
    _read_memory(plan, sort_used, evidence)
    if not sort_used:
        return
    if p >= LARGE_BATCH_PARALLELISM:
        _large_job(plan, evidence)
    _min_buffers_tradeoff(plan, evidence)


def _large_job(plan: Plan, evidence: tuple[str, ...]) -> None:
    """The batch shuffle guide's settings for large jobs: no exclusive buffers, a large floating
    pool, more read memory."""
    p = plan.job.parallelism
    metrics = ("network_needed_bytes", "network_available_bytes")
    state = plan.current
    settings = state.settings
    if not BUFFERS_FIXED.applies(plan.version) and (settings.buffers_per_channel > 0
                                or settings.floating_per_gate < BATCH_FLOATING):
        if settings.buffers_per_channel > 0:
            gate = mb.input_gate_buffers(settings, p, p, mb.PartitionType.BLOCKING)
            plan.set_option(mb.KEY_BPC, "0",
                            f"a blocking input gate with {p} channels requires {gate.required} buffers when "
                            "each "
                            "channel holds exclusive ones; the batch shuffle guide suggests 0 exclusive and "
                            "a "
                            "large floating pool shared by the channels being read", metrics, evidence)
        if plan.current.settings.floating_per_gate < BATCH_FLOATING:
            plan.set_option(mb.KEY_FPG, str(BATCH_FLOATING),
                            "with no exclusive buffers all reading credits come from the floating pool "
                            f"(batch shuffle guide example: {BATCH_FLOATING})", metrics, evidence)
    read_default = default_batch_shuffle_read_bytes(plan.version)
    read_want = 256 * MIB if p >= HUGE_BATCH_PARALLELISM else 128 * MIB
    read_now = state.eff.memory_bytes(KEY_READ) or read_default
    if read_now < read_want:
        plan.set_option(KEY_READ, mem_value(read_want),
                        f"{p} consumers read sort-merge data through {mem_value(read_now)} of read buffers "
                        "shared by every partition read at once; the batch shuffle guide suggests 256m-512m "
                        "for "
                        "large jobs (\"Read buffer request timeout\" otherwise)", ("task_heap_bytes",),
                        evidence)
        _read_memory(plan, True, evidence)


def _read_memory(plan: Plan, sort_used: bool, evidence: tuple[str, ...]) -> None:
    """batch-shuffle.size where Flink can allocate it (model.batch.ReadMemoryVerdict): at least one
    segment (else TaskManagers refuse to start), inside framework off-heap with Flink's default rest
    beside it (else the first sort-merge partition fails with an OutOfMemoryError)."""
    state = plan.current
    eff = state.eff
    try:
        read = eff.memory_bytes(KEY_READ) or default_batch_shuffle_read_bytes(plan.version)
        framework = eff.memory_bytes(KEY_FRAMEWORK_OFF_HEAP) or 128 * MIB
        task_off = eff.memory_bytes(KEY_TASK_OFF_HEAP) or 0
    except FlinktuneError:
        return      # a value Flink refuses: the absurd-values step and lint report it
    verdict = ReadMemoryVerdict(read, framework, task_off, state.segment_bytes)
    if verdict.below_segment:
        default = default_batch_shuffle_read_bytes(plan.version)
        plan.set_option(KEY_READ, mem_value(default),
                        f"{mem_value(read)} is below the segment size ({mem_value(state.segment_bytes)}): "
                        "TaskManagers refuse to start with "
                        f"\"{read_below_segment_message(state.segment_bytes)}\"; "
                        "Flink's default is restored", ("task_heap_bytes",), evidence)
        verdict = ReadMemoryVerdict(default, framework, task_off, state.segment_bytes)
    if not sort_used or not (verdict.exceeds_direct or verdict.squeezes_framework):
        return
    fix = verdict.framework_off_heap_fix()
    fails = (f"the job fails at its first sort-merge partition with \"OutOfMemoryError: {READ_OOM_PREFIX}\""
             if verdict.exceeds_direct else
             "it leaves less than Flink's default room for Netty and other framework direct memory")
    plan.set_option(KEY_FRAMEWORK_OFF_HEAP, mem_value(fix),
                    f"the batch-shuffle read memory ({mem_value(verdict.read_bytes)}) is cut from framework "
                    f"off-heap ({mem_value(framework)}) and allocated as direct memory, limited to framework "
                    f"+ task off-heap ({mem_value(framework + task_off)}) beside the network: {fails}; "
                    f"raised with it, keeping {mem_value(READ_REST_BYTES)} for the rest of the framework "
                    "as Flink's defaults do", ("task_heap_bytes",), evidence)


def _min_buffers_tradeoff(plan: Plan, evidence: tuple[str, ...]) -> None:
    """sort-shuffle.min-buffers is not raised by default (each slot's partition reserves it, and
    the network memory grows with it); the trade-off is stated in numbers for the job at hand."""
    state = plan.current
    settings = state.settings
    p = plan.job.parallelism
    seg = state.segment_bytes
    now = settings.sort_shuffle_min_buffers
    options = []
    for m in sorted({now, 64, 512, SORT_MIN_BUFFERS_PRODUCTION} - {0}):
        try:
            demand = state.batch_demand_for(replace(settings, sort_shuffle_min_buffers=m))
        except FlinktuneError:
            return
        if demand is None:
            return
        need = -(-int(demand.busiest.required * seg * NETWORK_HEADROOM) // MIB) * MIB
        region = sort_spill_region_bytes(m, p, seg)
        spill = ("no sorting (enough buffers for the hash-based data buffer)" if region is None else
                 f"spills of {size_text(region)}, read back in pieces of about {size_text(region / p)} per "
                 "subpartition")
        options.append(f"min-buffers {m}{' (now)' if m == now else ''}: {demand.busiest.required} buffers, "
                       f"{mem_value(need)} of network memory with headroom, {spill}")
    plan.notes.append("Sort-merge memory against spilling at parallelism "
                      f"{p} (busiest TaskManager, stage by stage): " + "; ".join(options)
                      + ". Fewer write buffers fit smaller network memory; each spill is then smaller and "
                      "the consumers read more, smaller pieces (random IO). min-buffers is not changed "
                      "without a measured reason; the network is sized for the value in force.")
