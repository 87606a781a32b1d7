"""Buffer debloating (1.14+): proposed only when a dump shows in-flight data held in the receivers'
input gates (their inPoolUsage high) and the predicted barrier wait over the back-pressured chain is
long. When the data waits in the senders' queues or on the wire, debloating changes nothing (the
20 Mbit/s case of issue 13). Known weak spot: tasks with several inputs or unions of different rates;
above parallelism ~200 the docs ask for floating buffers >= parallelism (network_mem_tuning @1.15+)."""

from __future__ import annotations

from flinktune.advise.limits import DEBLOAT_HIGH_PARALLELISM, IN_POOL_HELD, MIN_SEGMENT_DEFAULT
from flinktune.advise.plan import Plan
from flinktune.advise.predict import barrier_wait_s
from flinktune.advise.state import (
    DEBLOAT_DEFAULT_TARGET_S,
    KEY_DEBLOAT,
    KEY_DEBLOAT_TARGET,
    KEY_MIN_SEGMENT,
)
from flinktune.advise.text import ms_text, rate_text, size_text
from flinktune.model import buffers as mb
from flinktune.releases import BUFFERS_FIXED, DEBLOATING

NAME = "debloat"
METRICS = ("gate_inflight_bytes", "drain_time_s")


def propose(plan: Plan) -> None:
    job = plan.job
    if job.workload != "streaming" or not DEBLOATING.applies(plan.version):
        return
    state = plan.current
    m = plan.measured
    if job.multi_input_vertices:
        names = ", ".join(job.multi_input_vertices[:3])
        poorly = (f"buffer debloating is known to work poorly for tasks with several inputs or unions of "
                  f"different rates ({names}): it sizes every channel's buffers from the task's total "
                  "throughput (Flink docs, network memory tuning)")
        if state.debloat:
            plan.set_option(KEY_DEBLOAT, "false", poorly, METRICS, (f"plan: {names} read several inputs",))
        else:
            plan.notes.append(poorly[0].upper() + poorly[1:] + "; it is not proposed.")
        return
    target = DEBLOAT_DEFAULT_TARGET_S
    if job.latency_target_s is not None and plan.evidence.latency_target and job.latency_target_s < target:
        target = max(job.latency_target_s, 0.1)
    if state.debloat:
        current = state.debloat_target_s
        if plan.evidence.latency_target and not (target / 2 <= current <= target * 2):
            plan.set_option(KEY_DEBLOAT_TARGET, ms_text(target),
                            f"in-flight data should drain within the latency target "
                            f"{ms_text(job.latency_target_s or 0)} under back pressure", METRICS,
                            (plan.evidence.latency_target or "",))
        return
    if m is not None and (plan.link_saturated or m.cause == "network_bottleneck"):
        return      # the link sets the pace: buffer tuning will not help (said in the cause notes)
    if m is None or m.backpressured_exchanges == 0:
        plan.withhold("buffer debloating: whether in-flight data slows checkpoints depends on where it sits; "
                      "give a dump of the back-pressured job (--metrics) to check the receivers' input pool "
                      "usage")
        return
    if m.in_pool_usage is None or m.in_pool_usage < IN_POOL_HELD:
        held = "unknown" if m.in_pool_usage is None else f"{m.in_pool_usage:.0%} full"
        out = "" if m.out_pool_usage is None else f", senders' output pools {m.out_pool_usage:.0%} full"
        plan.notes.append(f"Buffer debloating is not proposed: the receivers' input pools are {held}{out}, "
                          "so "
                          "the in-flight data waits in the senders' queues or on the wire, which debloating "
                          "does not shrink.")
        return
    consume = job.consume_bytes_per_s
    if consume is None:
        return
    chain = max(m.backpressured_exchanges, 1)
    wait = barrier_wait_s(state, chain, m.buffer_fill or 1.0)
    if wait is None or wait <= DEBLOAT_DEFAULT_TARGET_S:
        return
    min_seg = state.eff.memory_bytes(KEY_MIN_SEGMENT) or MIN_SEGMENT_DEFAULT
    settings = state.settings
    pool = job.parallelism * settings.buffers_per_channel + settings.floating_per_gate
    debloated_size = consume * target / max(pool, 1)
    if debloated_size < min_seg:
        plan.notes.append(f"Buffer debloating would want buffers of {debloated_size:.0f} B, below "
                          f"min-segment-size ({min_seg} B): at this low rate it cannot shrink in-flight data "
                          "further and is not proposed.")
        return
    evidence = (f"measured: receivers' input pools {m.in_pool_usage:.0%} full over {chain} back-pressured "
                "exchange(s) [--metrics]", *(e for e in (plan.evidence.rate, plan.evidence.record) if e))
    gate = pool * state.segment_bytes
    plan.set_option(KEY_DEBLOAT, "true",
                    f"the data is held in the input gates (input pools {m.in_pool_usage:.0%} full): a full "
                    "gate "
                    f"holds {size_text(gate)} ({pool} buffers) and as much waits in the senders' queues; "
                    "over "
                    f"{chain} back-pressured exchange(s) at {rate_text(consume)} an aligned barrier waits "
                    "about "
                    f"{wait:.3g} s; debloating keeps about {target:g} s in flight per gate", METRICS,
                    evidence)
    if target != DEBLOAT_DEFAULT_TARGET_S:
        plan.set_option(KEY_DEBLOAT_TARGET, ms_text(target),
                        "bring in-flight data toward the latency target "
                        f"{ms_text(job.latency_target_s or 0)} "
                        "(not below 100 ms: smaller targets shrink buffers until they cost throughput)",
                        METRICS,
                        (plan.evidence.latency_target or "",))
    p = job.parallelism
    tunable = not BUFFERS_FIXED.applies(plan.version)
    if tunable and p > DEBLOAT_HIGH_PARALLELISM and settings.floating_per_gate < p:
        plan.set_option(mb.KEY_FPG, str(p),
                        f"with debloating at parallelism {p} (> {DEBLOAT_HIGH_PARALLELISM}) the docs ask for "
                        "at "
                        "least as many floating buffers as the parallelism", METRICS, evidence)
