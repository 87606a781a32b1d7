"""Sizes, rates and durations in the advisor's sentences (config values use Flink's own syntax)."""

from __future__ import annotations

import math

from flinktune.config.types import ConfigValue
from flinktune.units import format_duration, format_memory, readable

MIB = 1024**2
NICE_TIMEOUTS_MS = (1, 2, 5, 10, 20, 50, 100)


def mem_value(num_bytes: int) -> str:
    """A memory size as a config value (Flink syntax)."""
    return format_memory(num_bytes)


def round_up_mib(num_bytes: float) -> int:
    return math.ceil(num_bytes / MIB) * MIB


def next_pow2(n: float) -> int:
    return 1 << max(12, math.ceil(math.log2(max(n, 1))))


def size_text(num_bytes: float) -> str:
    return readable(num_bytes, "B")


def ms_text(seconds: float) -> str:
    return format_duration(round(seconds * 1e9))


def nice_timeout_s(limit_s: float) -> float:
    """The largest 'round' flush interval not above ``limit_s`` (0 = flush every record)."""
    best = 0.0
    for ms in NICE_TIMEOUTS_MS:
        if ms / 1000 <= limit_s + 1e-12:
            best = ms / 1000
    return best


def raw(value: ConfigValue) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def rate_text(bytes_per_s: float) -> str:
    return readable(bytes_per_s, "B/s")
