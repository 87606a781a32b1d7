"""Credits for a rate: buffers-per-channel (1.x) or the segment size (the lever left in 2.x).

Moves a setting only on evidence: the per-channel rate (measured, or --rate with a record size) and
the round trip (--rtt). Flink's defaults are its own recommendation for throughput, so without that
evidence nothing changes and the report says what it would check. Docs (network_mem_tuning): buffers
needed = throughput x buffer round trip / buffer size. buffers-per-channel and
floating-buffers-per-gate are deprecated in 1.20 and fixed (2 / 8) in 2.0
(NettyShuffleEnvironmentOptions @1.20, NettyShuffleEnvironmentConfiguration @2.0).
"""

from __future__ import annotations

from flinktune.advise.limits import MAX_BPC, MAX_SEGMENT, THROUGHPUT_HEADROOM
from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_SEGMENT
from flinktune.advise.text import mem_value, next_pow2, rate_text
from flinktune.model import buffers as mb
from flinktune.releases import BUFFER_OPTIONS_DEPRECATED, BUFFERS_FIXED

NAME = "credits"
METRICS = ("channel_ceiling_bytes_per_s", "channel_throughput_bytes_per_s", "gate_inflight_bytes",
           "drain_time_s", "network_needed_bytes")


def credits_for(plan: Plan, bytes_per_s: float, seg: int) -> int:
    from flinktune.model.credit import buffers_for_throughput  # numpy: only with a rate

    return int(buffers_for_throughput(bytes_per_s, seg, plan.job.rtt_s))


def propose(plan: Plan) -> None:
    job = plan.job
    if job.workload != "streaming" or (plan.measured is not None and plan.measured.not_network):
        return
    if plan.link_saturated or (plan.measured is not None and plan.measured.cause == "network_bottleneck"):
        return                     # the link is full: more credits carry no more (said in the notes)
    remote = job.remote_channels_per_taskmanager
    if remote == 0:
        plan.notes.append("All subtasks share one TaskManager: every channel is local and needs no credits; "
                          "buffer counts do not limit throughput.")
        return
    evidence = plan.evidence.throughput
    if evidence is None:
        missing = [name for name, have in (("--rate", plan.evidence.rate),
                                           ("--record-size", plan.evidence.record),
                                           ("--rtt", plan.evidence.rtt)) if not have]
        plan.withhold("credits per channel (buffers-per-channel / segment size): Flink's defaults are its "
                      "own "
                      "recommendation for throughput; to check whether they cap this job give "
                      f"{', '.join(missing)} (a dump via --metrics measures rate and record size)")
        return
    state = plan.current
    settings = state.settings
    seg = state.segment_bytes
    share = job.bandwidth_bytes_per_s / remote
    offered = job.channel_offered_bytes_per_s
    assert offered is not None
    want = offered * THROUGHPUT_HEADROOM
    if plan.evidence.bandwidth:
        want = min(want, share)
    basis = (f"{rate_text(offered)} offered per channel (x{THROUGHPUT_HEADROOM} headroom"
             + (f", at most the NIC share {rate_text(share)})" if plan.evidence.bandwidth else ")"))
    floor_note = ""
    m = plan.measured
    if (m is not None and m.cause in ("too_few_credits", "network_or_credits")
            and m.rate_per_subtask == job.rate_per_subtask):
        floor_note = ("; the rate was measured while credit-bound, so it is a floor: give --rate for the "
                      "rate "
                      "the job must sustain")
    need = credits_for(plan, want, seg)
    rtt_ms = f"{job.rtt_s * 1000:g} ms"
    fixed_credits = settings.buffers_per_channel + settings.floating_per_gate / job.parallelism
    if need <= max(settings.buffers_per_channel, fixed_credits if BUFFERS_FIXED.applies(plan.version) else 0):
        return
    if not BUFFERS_FIXED.applies(plan.version):
        if need > MAX_BPC:
            new_seg = min(MAX_SEGMENT, next_pow2(want * job.rtt_s / MAX_BPC))
            if new_seg > seg:
                plan.set_option(KEY_SEGMENT, mem_value(new_seg),
                                f"{basis} x rtt {rtt_ms} needs {need} buffers of {mem_value(seg)} per "
                                "channel; "
                                "larger buffers carry the bandwidth-delay product with fewer of them",
                                METRICS,
                                evidence)
                seg = new_seg
                need = credits_for(plan, want, seg)
        value = min(max(need, 2), MAX_BPC)
        if need > MAX_BPC:
            plan.notes.append(
                f"The channels would need {need} credits of {mem_value(seg)}; buffers per channel stop at "
                f"{MAX_BPC} and segments at {mem_value(MAX_SEGMENT)} here, so the credit ceiling stays below "
                "the link: fewer remote channels (more slots per TaskManager) or a shorter round trip help "
                "more than buffers.")
        if value > settings.buffers_per_channel:
            deprecated = (" (the option is deprecated in Flink 1.20 and fixed at 2 in 2.0: prefer the "
                          "segment size when upgrading)" if BUFFER_OPTIONS_DEPRECATED.applies(plan.version)
                          else "")
            plan.set_option(mb.KEY_BPC, str(value),
                            f"{basis} x rtt {rtt_ms} / {mem_value(seg)} segments = {need} credits per "
                            "channel "
                            "(docs: throughput x buffer round trip / buffer size); "
                            f"{settings.buffers_per_channel} cap each channel below "
                            f"that{floor_note}{deprecated}",
                            METRICS, evidence)
        _floating(plan, want, seg)
        return
    new_seg = min(MAX_SEGMENT, next_pow2(want * job.rtt_s / settings.buffers_per_channel))
    if new_seg > seg:
        plan.set_option(KEY_SEGMENT, mem_value(new_seg),
                        f"{basis} x rtt {rtt_ms} needs {need} credits of {mem_value(seg)}; Flink "
                        f"{plan.version} "
                        f"fixes buffers-per-channel at {settings.buffers_per_channel} and floating buffers "
                        "at "
                        f"{settings.floating_per_gate} (removed options), so the buffer size is the lever "
                        "that "
                        "remains", METRICS, evidence)


def _floating(plan: Plan, want: float, seg: int) -> None:
    """Floating buffers for hot channels: only on measured or stated skew, or a dump showing floating
    buffers full while exclusive ones are not."""
    job = plan.job
    skew = job.skew
    measured_some = plan.measured is not None and plan.measured.channels == "some"
    if (skew is None or skew <= 1.2) and not measured_some:
        return
    settings = plan.current.settings
    factor = skew if skew and skew > 1 else 2.0
    hot = min(want * factor, job.bandwidth_bytes_per_s / max(job.per_taskmanager, 1))
    hot_credits = credits_for(plan, hot, seg)
    need = hot_credits - settings.buffers_per_channel
    if need > settings.floating_per_gate:
        where = (f"skew {skew:.3g}x" if skew else "measured: floating buffers full, exclusive ones not "
                 "(some channels hot)")
        evidence = tuple(e for e in (plan.evidence.skew, *(plan.evidence.throughput or ())) if e)
        plan.set_option(mb.KEY_FPG, str(need),
                        f"{where}: a hot channel carries about {rate_text(hot)} and needs {hot_credits} "
                        "credits; "
                        "floating buffers go to the channels with backlog, so the gate needs "
                        f"{need} on top of the exclusive {settings.buffers_per_channel}", METRICS, evidence)
