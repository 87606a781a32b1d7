"""Buffer timeout: when buffers leave, how full they are, the latency added and what it costs.

Per channel, records of ``record_bytes`` arrive at ``record_rate`` per second into ``segment_bytes``
buffers. A buffer leaves when it is full, when the output flusher fires (every ``timeout_s``), or on
an event (checkpoint barrier). ``timeout_s = 0`` flushes after every record; ``inf`` (timeout
disabled) flushes only when full. See ``timeout_mode`` for what the options mean per version.

Assumptions: steady Poisson-free arrival (constant rate), the flusher's ticks independent of when a
buffer was started, a channel not back-pressured (a back-pressured channel accumulates data in its
buffers regardless of the timeout, so buffers leave fuller). Under those, a record waits
``min(fill_time, timeout)`` at most and half of it on average.

The throughput cost of partly filled buffers uses two explicit per-buffer constants: a fixed
handling time (``per_buffer_overhead_s``: Netty notification, syscall, credit bookkeeping) and a
header (``per_buffer_header_bytes``: Flink's Netty frame header 9 B + BufferResponse header 30 B).
The defaults are placeholders to be calibrated against the simulator; pass measured values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from flinktune.model._arrays import as_array, scalar_or_array

DEFAULT_PER_BUFFER_OVERHEAD_S = 5e-6
# NettyMessage: FRAME_HEADER_LENGTH (4 length + 4 magic + 1 id) + BufferResponse header
# (16 receiver id + 4 sequence number + 4 backlog + 1 data type + 1 compressed + 4 size).
DEFAULT_PER_BUFFER_HEADER_BYTES = 39


def fill_time_s(record_rate: ArrayLike, record_bytes: ArrayLike, segment_bytes: ArrayLike) -> Any:
    """Time to fill one buffer: ``segment / (rate * record_bytes)`` [s]."""
    rate = as_array("record_rate", record_rate)
    rec = as_array("record_bytes", record_bytes)
    seg = as_array("segment_bytes", segment_bytes)
    return scalar_or_array(seg / (rate * rec))


def chunk_bytes(record_rate: ArrayLike, record_bytes: ArrayLike, segment_bytes: ArrayLike,
                timeout_s: ArrayLike) -> Any:
    """Bytes handed to Netty per flush (the part of a buffer that leaves at once).

    ``timeout 0`` => one record; ``inf`` => a full segment; else ``rate * record * timeout``, at least
    one record (a flush with data sends it) and at most one segment.
    """
    rate = as_array("record_rate", record_rate)
    rec = as_array("record_bytes", record_bytes)
    seg = as_array("segment_bytes", segment_bytes)
    timeout = as_array("timeout_s", timeout_s, allow_zero=True, allow_inf=True)
    with np.errstate(invalid="ignore"):
        per_tick = rate * rec * timeout
    per_tick = np.where(np.isinf(timeout), np.inf, per_tick)
    chunk = np.minimum(seg, np.maximum(rec, per_tick))
    return scalar_or_array(chunk)


def fill_ratio(record_rate: ArrayLike, record_bytes: ArrayLike, segment_bytes: ArrayLike,
               timeout_s: ArrayLike) -> Any:
    """Fraction of a segment that leaves per flush: ``chunk / segment`` (1 = full buffers)."""
    chunk = np.asarray(chunk_bytes(record_rate, record_bytes, segment_bytes, timeout_s))
    return scalar_or_array(chunk / as_array("segment_bytes", segment_bytes))


def leaves_full(record_rate: ArrayLike, record_bytes: ArrayLike, segment_bytes: ArrayLike,
                timeout_s: ArrayLike) -> Any:
    """True where buffers fill before the flusher fires (``fill_time <= timeout``)."""
    fill = np.asarray(fill_time_s(record_rate, record_bytes, segment_bytes))
    timeout = as_array("timeout_s", timeout_s, allow_zero=True, allow_inf=True)
    result = fill <= timeout
    return bool(result) if result.ndim == 0 else result


def buffers_per_s(record_rate: ArrayLike, record_bytes: ArrayLike, segment_bytes: ArrayLike,
                  timeout_s: ArrayLike) -> Any:
    """Network messages per second on the channel: ``rate * record_bytes / chunk``."""
    rate = as_array("record_rate", record_rate)
    rec = as_array("record_bytes", record_bytes)
    chunk = np.asarray(chunk_bytes(rate, rec, segment_bytes, timeout_s))
    return scalar_or_array(rate * rec / chunk)


def added_latency_s(record_rate: ArrayLike, record_bytes: ArrayLike, segment_bytes: ArrayLike,
                    timeout_s: ArrayLike) -> tuple[Any, Any]:
    """(mean, max) time a record waits in its buffer: ``min(fill_time, timeout) / 2`` and ``min(...)``.

    Never more than the timeout; about half of it under low load; 0 when flushing every record;
    with the timeout disabled, as long as filling a buffer takes.
    """
    fill = np.asarray(fill_time_s(record_rate, record_bytes, segment_bytes))
    timeout = as_array("timeout_s", timeout_s, allow_zero=True, allow_inf=True)
    wait = np.minimum(fill, timeout)
    return scalar_or_array(wait / 2.0), scalar_or_array(wait)


def link_efficiency(chunk: ArrayLike, link_bytes_per_s: ArrayLike,
                    per_buffer_overhead_s: ArrayLike = DEFAULT_PER_BUFFER_OVERHEAD_S,
                    per_buffer_header_bytes: ArrayLike = DEFAULT_PER_BUFFER_HEADER_BYTES) -> Any:
    """Share of the link's time spent on payload: ``(chunk/link) / ((chunk+header)/link + overhead)``."""
    c = as_array("chunk_bytes", chunk)
    link = as_array("link_bytes_per_s", link_bytes_per_s)
    overhead = as_array("per_buffer_overhead_s", per_buffer_overhead_s, allow_zero=True)
    header = as_array("per_buffer_header_bytes", per_buffer_header_bytes, allow_zero=True)
    payload = c / link
    return scalar_or_array(payload / ((c + header) / link + overhead))


def max_throughput_bytes_per_s(chunk: ArrayLike, link_bytes_per_s: ArrayLike,
                               per_buffer_overhead_s: ArrayLike = DEFAULT_PER_BUFFER_OVERHEAD_S,
                               per_buffer_header_bytes: ArrayLike = DEFAULT_PER_BUFFER_HEADER_BYTES) -> Any:
    """Payload rate a link sustains when every message carries ``chunk`` bytes (never above the link)."""
    eff = np.asarray(link_efficiency(chunk, link_bytes_per_s, per_buffer_overhead_s, per_buffer_header_bytes))
    return scalar_or_array(eff * as_array("link_bytes_per_s", link_bytes_per_s))


def timeout_throughput_cost(record_rate: ArrayLike, record_bytes: ArrayLike, segment_bytes: ArrayLike,
                            timeout_s: ArrayLike, link_bytes_per_s: ArrayLike,
                            per_buffer_overhead_s: ArrayLike = DEFAULT_PER_BUFFER_OVERHEAD_S,
                            per_buffer_header_bytes: ArrayLike = DEFAULT_PER_BUFFER_HEADER_BYTES) -> Any:
    """Max throughput with this timeout relative to full buffers (1 = no cost, 0.5 = half)."""
    chunk = np.asarray(chunk_bytes(record_rate, record_bytes, segment_bytes, timeout_s))
    partial = np.asarray(link_efficiency(chunk, link_bytes_per_s, per_buffer_overhead_s,
                                         per_buffer_header_bytes))
    full = np.asarray(link_efficiency(segment_bytes, link_bytes_per_s, per_buffer_overhead_s,
                                      per_buffer_header_bytes))
    return scalar_or_array(partial / full)
