"""The buffer timeout (flush interval) against a stated latency target (--latency-target): the only
evidence that moves it. Key: ``execution.buffer-timeout`` up to 1.17, ``.interval`` / ``.enabled``
from 1.18 (ExecutionOptions, FLINK-32023)."""

from __future__ import annotations

import math

from flinktune.advise.change import ProposedChange
from flinktune.advise.plan import Plan
from flinktune.advise.state import (
    KEY_TIMEOUT_ENABLED,
    KEY_TIMEOUT_INTERVAL,
    KEY_TIMEOUT_OLD,
    ConfigState,
)
from flinktune.advise.text import ms_text, nice_timeout_s, raw
from flinktune.releases import BUFFER_TIMEOUT_SWITCH

NAME = "buffer-timeout"


def _added(plan: Plan, state: ConfigState, timeout_s: float) -> float:
    job = plan.job
    offered = job.channel_offered_bytes_per_s
    if offered and job.record_bytes:
        from flinktune.model.timeout import added_latency_s  # numpy: only with a rate

        return float(added_latency_s(offered / job.record_bytes, job.record_bytes, state.segment_bytes,
                                     timeout_s)[1])
    return timeout_s


def propose(plan: Plan) -> None:
    job = plan.job
    if job.workload != "streaming":
        return
    state = plan.current
    target = job.latency_target_s
    if target is None or plan.evidence.latency_target is None:
        if state.timeout.kind == "every-record" and job.rate_per_subtask:
            plan.notes.append("The buffer timeout is 0 (flush after every record) and no latency target was "
                              "given: each record travels in its own buffer, which costs throughput and CPU; "
                              "give --latency-target to size it.")
        return
    evidence = (plan.evidence.latency_target,)
    hops = job.exchanges
    budget = target / hops                 # what flushing may add on each exchange at most
    proposal = nice_timeout_s(target / (2 * hops))
    mode = state.timeout
    added = _added(plan, state, mode.effective_timeout_s)
    low = mode.effective_timeout_s < proposal / 4 and proposal >= 0.004
    if added <= budget and not low and mode.kind != "when-full":
        return
    metrics = ("added_latency_s",)
    if added > budget:
        why = (f"latency target {ms_text(target)} over {hops} exchange(s): flushing may add at most "
               f"{ms_text(budget)} per exchange, the current setting adds up to "
               f"{'unbounded' if math.isinf(added) else ms_text(added)}; half the budget is left for "
               "processing and the network")
    else:
        why = (f"flushing every {ms_text(mode.effective_timeout_s)} is far below what the latency target "
               f"{ms_text(target)} needs; partly filled buffers cost throughput and CPU")
    value = ms_text(proposal) if proposal > 0 else "0 ms"
    if not BUFFER_TIMEOUT_SWITCH.applies(plan.version):
        # The key every 1.x release reads (a deprecated alias only in patch releases with FLINK-32023).
        plan.add(ProposedChange("set", KEY_TIMEOUT_OLD, value, why=why, line=plan.line(KEY_TIMEOUT_OLD),
                                evidence=evidence, current=raw(plan.values.get(KEY_TIMEOUT_OLD)),
                                default=plan.default(KEY_TIMEOUT_OLD), metrics=metrics))
        return
    if state.eff.boolean(KEY_TIMEOUT_ENABLED) is False:
        plan.set_option(KEY_TIMEOUT_ENABLED, "true", "execution.buffer-timeout.enabled=false flushes only "
                                                     "full "
                        "buffers: no latency bound at all", metrics, evidence)
    if abs(plan.current.timeout.effective_timeout_s - proposal) > 1e-9:
        if KEY_TIMEOUT_INTERVAL not in plan.values and KEY_TIMEOUT_OLD in plan.values:
            plan.add(ProposedChange(
                "rename", KEY_TIMEOUT_OLD, value, new_key=KEY_TIMEOUT_INTERVAL,
                why=why + f" (since 1.18 the option is {KEY_TIMEOUT_INTERVAL}; the old key is its "
                "deprecated alias)", line=plan.line(KEY_TIMEOUT_OLD), evidence=evidence,
                current=raw(plan.values[KEY_TIMEOUT_OLD]), default=plan.default(KEY_TIMEOUT_INTERVAL),
                metrics=metrics))
        else:
            plan.set_option(KEY_TIMEOUT_INTERVAL, value, why, metrics, evidence)
