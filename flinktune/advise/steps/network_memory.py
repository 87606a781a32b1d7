"""Network memory for the buffers the job needs, sized with headroom above Flink's exact requirement
(``Margins.network_headroom``, never 100%) for the job graph: the plan (exact), or the bound (every
slot hosts a subtask of every vertex, ``exchanges`` all-to-all exchanges, every channel remote;
flinktune.situation's DEFAULT_EXCHANGES unless --exchanges / a profile / the project says). Without
a plan the file's value stands while it covers the bound's start-up demand; below it the fix is
sized for the bound (more memory cannot break a job) and the report says how to size it exactly
(--plan or --exchanges). The loop raises the TaskManager size if this squeezes the task heap, up to the
memory ceiling; past it the change is rolled back with the reason. A one-exchange guess sized at
100% broke real jobs (issue 13, cases 1 and 2)."""

from __future__ import annotations

import math

from flinktune.advise.limits import NETWORK_ACCEPT
from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_NET_MAX, KEY_NET_MIN
from flinktune.advise.text import mem_value, round_up_mib, size_text

NAME = "network-memory"
METRICS = ("network_needed_bytes", "network_available_bytes", "task_heap_bytes")


def propose(plan: Plan) -> None:
    state = plan.sized      # the job as it will run: rescaled when steps/parallelism.py rescaled it
    seg = state.segment_bytes
    demand = state.demand
    memory, error = state.memory_or_error()
    if memory is None:
        plan.notes.append(f"TaskManager memory cannot be derived ({error}); network memory is not sized. The "
                          f"job needs {demand.required} buffers ({mem_value(demand.required * seg)}) per "
                          "TaskManager.")
        return
    streaming = plan.job.workload == "streaming"
    available = memory.network_buffers
    exact = plan.sized_job.graph is not None
    # A plan gives the exact demand: keep a margin above it (and room for the pools to grow). A bound
    # is pessimistic already: the file's value stands while it covers the bound's start-up demand,
    # unless an earlier step changed what the buffers need.
    demand_changed = plan.rescaled is not None or any(
        c.proposed_by != "memory-fit" and "network_needed_bytes" in c.metrics for c in plan.changes)
    if exact or demand_changed:
        accept = available >= math.ceil(demand.required * NETWORK_ACCEPT) and (
            not streaming or available >= demand.target)
    else:
        accept = available >= demand.required
    if accept:
        return
    if not exact and plan.job.exchanges_source == "default" and not demand_changed:
        one = plan.current_with_exchanges(1).demand
        if available >= one.required:
            # Only the default bound says it does not fit: sized for the bound (a safe change, more
            # memory), and the report says how to size it exactly.
            plan.withhold(f"network memory: {available} buffers cover one all-to-all exchange "
                          f"({one.required} needed) but not the pessimistic bound of {plan.job.exchanges} "
                          f"({demand.required}), so the fix below is sized for the bound; give --plan (or "
                          "--exchanges N) to size it for this job")
    headroom = plan.margins.network_headroom
    want_buffers = math.ceil(demand.required * headroom)
    if streaming:
        want_buffers = max(want_buffers, demand.target)
    want_bytes = round_up_mib(want_buffers * seg)
    basis = ("the pools' target" if streaming and want_buffers == demand.target
             else f"{headroom:g} x required, the headroom")
    shape = ("one blocking stage at a time" if state.batch_demand is not None
             else "every slot hosting a subtask of every vertex")
    source = ("the plan" if exact else f"the bound of {plan.job.exchanges} all-to-all exchange(s) "
              f"[{plan.job.exchanges_source}], {shape}")
    why = (f"the busiest TaskManager needs {demand.required} buffers at start-up and its pools grow to "
           f"{demand.target} ({demand.assumption}); {available} are available. Sized for {want_buffers} "
           "buffers "
           f"({basis}): {size_text(want_bytes)}")
    evidence = (f"buffer demand from {source}",)
    max_now = state.eff.memory_bytes(KEY_NET_MAX)
    if max_now is not None and max_now < want_bytes:
        plan.set_option(KEY_NET_MAX, mem_value(want_bytes),
                        f"network.max ({mem_value(max_now)}) caps the network memory below what the job "
                        "needs",
                        METRICS, evidence)
    plan.set_option(KEY_NET_MIN, mem_value(want_bytes), why, METRICS, evidence)
