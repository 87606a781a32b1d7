"""In-flight data: what sits in a gate's and a partition's buffers, and how long it takes to drain.

An aligned checkpoint barrier never overtakes records: it waits behind everything buffered in
front of it on its channel. The receiving gate can hold at most its pool (``C*bpc + fpg`` buffers,
the docs' bound); the sending partition at most ``min(Sp*bpc + fpg, Sp*max-buffers-per-channel)``.
Draining that at the rate the receiving task consumes gives the barrier's extra wait. With buffer
debloating (1.14+) Flink sizes buffers so that in-flight data is about ``throughput * target``
(``taskmanager.network.memory.buffer-debloat.target``, 1 s).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from flinktune.model._arrays import as_array, scalar_or_array


def gate_inflight_bytes(channels: ArrayLike, buffers_per_channel: ArrayLike, floating_per_gate: ArrayLike,
                        segment_bytes: ArrayLike, fill: ArrayLike = 1.0) -> Any:
    """Most data a gate can hold: ``(C*bpc + fpg) * segment * fill`` [B] (fill = buffer fill ratio)."""
    c = as_array("channels", channels, integer=True)
    bpc = as_array("buffers_per_channel", buffers_per_channel, allow_zero=True)
    fpg = as_array("floating_per_gate", floating_per_gate, allow_zero=True)
    seg = as_array("segment_bytes", segment_bytes)
    f = as_array("fill", fill)
    return scalar_or_array((c * bpc + fpg) * seg * np.minimum(f, 1.0))


def partition_inflight_bytes(subpartitions: ArrayLike, buffers_per_channel: ArrayLike,
                             floating_per_gate: ArrayLike, max_buffers_per_channel: ArrayLike,
                             segment_bytes: ArrayLike, fill: ArrayLike = 1.0) -> Any:
    """Most data a pipelined-bounded partition queues: ``min(Sp*bpc+fpg, Sp*maxPerChannel) * seg * fill``."""
    sp = as_array("subpartitions", subpartitions, integer=True)
    bpc = as_array("buffers_per_channel", buffers_per_channel, allow_zero=True)
    fpg = as_array("floating_per_gate", floating_per_gate, allow_zero=True)
    cap = as_array("max_buffers_per_channel", max_buffers_per_channel)
    seg = as_array("segment_bytes", segment_bytes)
    f = as_array("fill", fill)
    pool = np.maximum(sp + 1, sp * bpc + fpg)
    return scalar_or_array(np.minimum(pool, sp * cap) * seg * np.minimum(f, 1.0))


def drain_time_s(inflight_bytes: ArrayLike, consume_bytes_per_s: ArrayLike) -> Any:
    """Time to process what is buffered: ``inflight / consume rate`` [s]."""
    data = as_array("inflight_bytes", inflight_bytes, allow_zero=True)
    rate = as_array("consume_bytes_per_s", consume_bytes_per_s)
    return scalar_or_array(data / rate)


def debloated_inflight_bytes(throughput_bytes_per_s: ArrayLike, target_s: ArrayLike = 1.0) -> Any:
    """Buffer debloating's aim: ``throughput * target`` in flight per gate [B]."""
    rate = as_array("throughput_bytes_per_s", throughput_bytes_per_s, allow_zero=True)
    target = as_array("target_s", target_s)
    return scalar_or_array(rate * target)
