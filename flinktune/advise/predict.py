"""Predicted checkpoint-barrier wait under back pressure, over the whole path.

An aligned barrier waits behind every buffer ahead of it: in each back-pressured exchange the
senders' output queues (for one receiver: about as many buffers as its input gate's pool, spread
over the senders' subpartitions) and the receiver's input gate (``C * bpc + fpg`` buffers). Buffers
flushed by the timeout travel part-full: the dump's measured fill (bytes per received buffer /
segment size) scales them. With debloating a gate keeps about ``throughput x target`` (and the
senders fill buffers of the announced, smaller size: FLINK-23553). The data drains at the receiver's
consume rate and the exchanges of a back-pressured chain drain one after the other, so the waits add
up. docs/recommend.md states how close this came to real Flink.
"""

from __future__ import annotations

from flinktune.advise.state import ConfigState


def exchange_bytes(state: ConfigState, fill: float = 1.0) -> float | None:
    """In-flight bytes ahead of a barrier in one back-pressured exchange (input gate + output queues)."""
    from flinktune.model import inflight  # numpy: imported only when a prediction is made

    job = state.job
    try:
        settings = state.settings
    except Exception:  # a value Flink refuses: no prediction
        return None
    full = float(inflight.gate_inflight_bytes(job.parallelism, settings.buffers_per_channel,
                                              settings.floating_per_gate, state.segment_bytes))
    gate = full * min(max(fill, 0.0), 1.0)
    consume = job.consume_bytes_per_s
    if state.debloat and consume:
        gate = min(gate, float(inflight.debloated_inflight_bytes(consume, state.debloat_target_s)))
    return 2 * gate


def barrier_wait_s(state: ConfigState, exchanges: int, fill: float = 1.0) -> float | None:
    """Seconds an aligned barrier waits over ``exchanges`` back-pressured exchanges (None: no rate)."""
    consume = state.job.consume_bytes_per_s
    per_exchange = exchange_bytes(state, fill)
    if not consume or per_exchange is None or exchanges <= 0:
        return None
    return exchanges * per_exchange / consume
