"""The advisor's margins and ceilings, in one place (docs/recommend.md, "Margins and ceilings").

Tolerance bands keep ``recommend`` a fixed point: a current value inside the accept band is left
alone, a proposed value sits well inside it, so a rerun on the output proposes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024**2
GIB = 1024**3

NETWORK_ACCEPT = 1.10          # current network buffers >= 1.10 x required: fine
NETWORK_HEADROOM = 1.25        # default: a fix gives >= 1.25 x Flink's exact requirement (never 100%)
THROUGHPUT_HEADROOM = 1.5      # credits for 1.5 x the measured/stated per-channel rate
MAX_BPC = 16                   # beyond this, bigger segments are the better lever
MAX_SEGMENT = 256 * 1024

# Memory ceiling: no TaskManager size above what one container/machine plausibly gives (a 64 GiB
# container; a bigger need is a different cluster shape - fewer slots per TaskManager, a lower
# parallelism - which the report says instead). Absolute, not relative to the file's size, so that
# recommend stays a fixed point: a rerun on its own output has the same ceiling.
MEMORY_CEILING_BYTES = 64 * GIB

# Absurd values: far outside anything Flink's docs or the model justify. The advisor never proposes
# more than MAX_BPC exclusive buffers per channel; Flink's defaults are 2 / 8 (1.x). A value above
# these is reset to Flink's default with the reason rather than accommodated with memory.
ABSURD_BPC = 100
ABSURD_FPG = 10_000            # batch guides use up to 4096 floating buffers per gate
ABSURD_SEGMENT = 16 * MIB      # the segment is one buffer; Flink's docs discuss 32 KiB .. 1 MiB

LARGE_BATCH_PARALLELISM = 100
HUGE_BATCH_PARALLELISM = 1000
SORT_MIN_BUFFERS_PRODUCTION = 2048   # NettyShuffleEnvironmentOptions description: >= 2048 in production
BATCH_FLOATING = 4096                # batch_shuffle docs' example with buffers-per-channel 0
DEBLOAT_HIGH_PARALLELISM = 200
MIN_SEGMENT_DEFAULT = 256            # taskmanager.memory.min-segment-size, 1.15+ (1 kb in 1.14)
IN_POOL_HELD = 0.5                   # receivers' inPoolUsage at/above this: data is held in input gates
# A vertex's parallelism is raised at most this many times in one recommendation: the true processing
# rate is measured at today's parallelism, and its errors (shared cores, 5 s timer granularity: docs/
# recommend.md, "Parallelism") grow with the step; beyond it, rescale part of the way and measure again.
MAX_RESCALE_FACTOR = 8


@dataclass(frozen=True)
class Margins:
    """User-tunable margins (``--headroom``): the network fix is sized at ``network_headroom`` x
    Flink's exact requirement."""

    network_headroom: float = NETWORK_HEADROOM

    def __post_init__(self) -> None:
        if not self.network_headroom > NETWORK_ACCEPT:
            from flinktune.errors import UsageError

            raise UsageError(f"--headroom must leave a margin above {NETWORK_ACCEPT:g} x the requirement "
                             f"(the accept band), not {self.network_headroom:g}")


def memory_ceiling(configured_bytes: int | None) -> int:
    """The largest TaskManager size the advisor proposes (never below what the file already sets)."""
    return max(MEMORY_CEILING_BYTES, configured_bytes or 0)
