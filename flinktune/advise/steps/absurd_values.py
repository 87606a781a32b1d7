"""Values Flink refuses at start-up, and values far outside anything Flink's docs or the model
justify: reset to Flink's default with the reason, never accommodated by inflating memory.

Refusals: NettyShuffleEnvironmentConfiguration (1.17+: buffers-per-channel >= 0, floating >= 1,
read-buffer.required-per-gate.max >= 1), ConfigurationParserUtils.getPageSize (segment a power of two,
>= 4096 bytes). Thresholds for "absurd": flinktune.advise.limits (docs/recommend.md).
"""

from __future__ import annotations

from flinktune.advise.limits import ABSURD_BPC, ABSURD_FPG, ABSURD_SEGMENT, MAX_BPC
from flinktune.advise.plan import Plan
from flinktune.advise.state import KEY_SEGMENT
from flinktune.advise.text import mem_value, next_pow2, size_text
from flinktune.model import buffers as mb
from flinktune.releases import BUFFERS_FIXED, GATE_REQUIRED_MAX

NAME = "absurd-values"


def propose(plan: Plan) -> None:
    state = plan.current
    seg = state.eff.memory_bytes(KEY_SEGMENT) if state.is_set(KEY_SEGMENT) else None
    if seg is not None and (seg < 4096 or seg & (seg - 1)):
        fixed = min(next_pow2(max(seg, 4096)), 32 * 1024 if seg > ABSURD_SEGMENT else 1 << 62)
        plan.set_option(KEY_SEGMENT, mem_value(fixed),
                        f"Flink refuses {mem_value(seg)}: the segment size must be a power of two of at "
                        "least "
                        "4096 bytes", ("network_available_bytes",))
    elif seg is not None and seg > ABSURD_SEGMENT:
        plan.set_option(KEY_SEGMENT, "32kb",
                        f"a {size_text(seg)} buffer is far above anything Flink's docs discuss (32 KiB "
                        "default; "
                        f"the advisor stops at 256 KiB): every channel holds several of them, so the network "
                        "memory would have to grow by the same factor. Reset to the default",
                        ("network_needed_bytes", "gate_inflight_bytes"))
    if BUFFERS_FIXED.applies(plan.version):
        return
    bpc = state.integer(mb.KEY_BPC) if state.is_set(mb.KEY_BPC) else None
    if bpc is not None and bpc < 0:
        plan.set_option(mb.KEY_BPC, "2", f"{mb.KEY_BPC}: Must be non-negative (Flink's check); 2 is the "
                        "default", ("channel_ceiling_bytes_per_s",))
    elif bpc is not None and bpc > ABSURD_BPC:
        plan.set_option(mb.KEY_BPC, "2",
                        f"{bpc} exclusive buffers per channel is far outside anything Flink's docs or the "
                        "model "
                        f"justify (default 2; the advisor never proposes more than {MAX_BPC}, bigger "
                        "segments "
                        "carry more per credit): every channel of every gate would pin that many buffers, so "
                        "accommodating it would take "
                        f"{size_text(bpc * state.job.parallelism * state.segment_bytes)} per input gate. "
                        "Reset to Flink's default; the throughput steps raise it again only on evidence",
                        ("network_needed_bytes", "gate_inflight_bytes", "drain_time_s"))
    fpg = state.integer(mb.KEY_FPG) if state.is_set(mb.KEY_FPG) else None
    if fpg is not None and fpg < 1:
        plan.set_option(mb.KEY_FPG, "8", "The configured floating buffer should be at least 1 (Flink's "
                        "check from 1.17; a gate without floating buffers stalls before); 8 is the default",
                        ("channel_ceiling_bytes_per_s",))
    elif fpg is not None and fpg > ABSURD_FPG:
        plan.set_option(mb.KEY_FPG, "8",
                        f"{fpg} floating buffers per gate is far outside anything Flink's docs justify "
                        f"(default 8; the batch shuffle guide's example is 4096): "
                        f"{size_text(fpg * state.segment_bytes)} per input gate. Reset to Flink's default",
                        ("network_needed_bytes", "gate_inflight_bytes", "drain_time_s"))
    required = (state.integer(mb.KEY_REQUIRED_MAX)
                if GATE_REQUIRED_MAX.applies(plan.version) and state.is_set(mb.KEY_REQUIRED_MAX) else None)
    if required is not None and required < 1:
        plan.delete(mb.KEY_REQUIRED_MAX, "At least one buffer is required for each gate (Flink's check); "
                    "the docs advise leaving it unset")
