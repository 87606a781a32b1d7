"""The credit loop: what a remote input channel can carry with its credits, RTT and NIC share.

Mechanics (network-stack deep dive, 2019; Flink 1.5+ credit-based flow control):
- a remote channel holds ``buffers-per-channel`` exclusive buffers plus what it gets from the gate's
  floating pool; the receiver announces each free buffer as one credit and the sender may only send
  as many buffers as it has credits;
- a credit comes back one round trip after its buffer was sent, plus the time the receiving task
  needs to free the buffer (process it), so the channel carries at most
  ``credits * segment / (rtt + receiver_free)`` bytes per second (Little's law on the credit loop);
- all channels between two TaskManagers share one TCP connection, and all of a TaskManager's
  outgoing connections share its NIC: under uniform all-hot traffic a channel gets the NIC bandwidth
  divided by the remote channels leaving the TaskManager;
- local channels (same TaskManager) hand buffers over in memory: no credits, no NIC.

All functions take scalars or numpy arrays (broadcast together) and return the same shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from flinktune.errors import ModelInputError
from flinktune.model._arrays import as_array, scalar_or_array


def credit_ceiling_bytes_per_s(credits: ArrayLike, segment_bytes: ArrayLike, rtt_s: ArrayLike,
                               receiver_free_s: ArrayLike = 0.0) -> Any:
    """Per-channel throughput ceiling from credits: ``credits * segment / (rtt + receiver_free)`` [B/s]."""
    c = as_array("credits", credits, allow_zero=True)
    seg = as_array("segment_bytes", segment_bytes)
    rtt = as_array("rtt_s", rtt_s)
    free = as_array("receiver_free_s", receiver_free_s, allow_zero=True)
    return scalar_or_array(c * seg / (rtt + free))


def bandwidth_delay_product_bytes(bandwidth_bytes_per_s: ArrayLike, rtt_s: ArrayLike) -> Any:
    """Bytes that must be in flight to fill a link: ``bandwidth * rtt`` [B]."""
    bw = as_array("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    rtt = as_array("rtt_s", rtt_s)
    return scalar_or_array(bw * rtt)


def buffers_for_throughput(target_bytes_per_s: ArrayLike, segment_bytes: ArrayLike, rtt_s: ArrayLike,
                           receiver_free_s: ArrayLike = 0.0) -> Any:
    """Credits one channel needs for a target rate: ``ceil(target * (rtt + free) / segment)``.

    The docs' network-memory tuning formula (``throughput * buffer roundtrip / buffer size``, e.g.
    320 MB/s * 1 ms / 32 KB = 10).
    """
    target = as_array("target_bytes_per_s", target_bytes_per_s)
    seg = as_array("segment_bytes", segment_bytes)
    rtt = as_array("rtt_s", rtt_s)
    free = as_array("receiver_free_s", receiver_free_s, allow_zero=True)
    # round before ceil so that 10.000000000000002 from float error stays 10
    return scalar_or_array(np.ceil(np.round(target * (rtt + free) / seg, 9)))


def remote_channels_per_taskmanager(parallelism: ArrayLike, slots: ArrayLike) -> Any:
    """Outgoing remote channels of one TaskManager on one all-to-all exchange.

    Default slot sharing with full TaskManagers: ``k = min(slots, parallelism)`` producers on the
    TaskManager each send to ``parallelism - k`` consumers elsewhere: ``k * (parallelism - k)``.
    """
    p = as_array("parallelism", parallelism, integer=True)
    s = as_array("slots", slots, integer=True)
    k = np.minimum(s, p)
    return scalar_or_array(k * (p - k))


def channels_per_connection(slots: ArrayLike, parallelism: ArrayLike | None = None) -> Any:
    """Logical channels multiplexed on the TCP connection between two full TaskManagers: ``S * S``."""
    s = as_array("slots", slots, integer=True)
    if parallelism is not None:
        s = np.minimum(s, as_array("parallelism", parallelism, integer=True))
    return scalar_or_array(s * s)


def fair_share_bytes_per_s(bandwidth_bytes_per_s: ArrayLike, sharing_channels: ArrayLike) -> Any:
    """A channel's fair share of the NIC: ``bandwidth / max(1, sharing_channels)`` [B/s]."""
    bw = as_array("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    n = as_array("sharing_channels", sharing_channels, allow_zero=True)
    return scalar_or_array(bw / np.maximum(n, 1.0))


def credits_per_channel(buffers_per_channel: ArrayLike, floating_per_gate: ArrayLike,
                        hot_channels: ArrayLike) -> Any:
    """Credits of each hot channel when ``hot_channels`` channels of a gate have backlog.

    Exclusive buffers are the channel's own; the floating pool is asked for by backlog, so it ends up
    split between the hot channels: ``bpc + fpg / hot``. All channels hot => ``bpc + fpg / C``.
    """
    bpc = as_array("buffers_per_channel", buffers_per_channel, allow_zero=True)
    fpg = as_array("floating_per_gate", floating_per_gate, allow_zero=True)
    hot = as_array("hot_channels", hot_channels, integer=True)
    return scalar_or_array(bpc + fpg / hot)


def channel_throughput_bytes_per_s(credits: ArrayLike, segment_bytes: ArrayLike, rtt_s: ArrayLike,
                                   bandwidth_bytes_per_s: ArrayLike, sharing_channels: ArrayLike,
                                   receiver_free_s: ArrayLike = 0.0, local: ArrayLike = False) -> Any:
    """``min(credit ceiling, NIC fair share)`` for remote channels; local channels are not network-bound
    (``inf``: the limit is the tasks themselves)."""
    ceiling = np.asarray(credit_ceiling_bytes_per_s(credits, segment_bytes, rtt_s, receiver_free_s))
    share = np.asarray(fair_share_bytes_per_s(bandwidth_bytes_per_s, sharing_channels))
    is_local = np.asarray(local, dtype=bool)
    return scalar_or_array(np.where(is_local, np.inf, np.minimum(ceiling, share)))


def floating_skew_gain(buffers_per_channel: ArrayLike, floating_per_gate: ArrayLike, channels: ArrayLike,
                       hot_channels: ArrayLike) -> Any:
    """How much more credit a hot channel has when only ``hot_channels`` of ``channels`` are busy,
    relative to all channels busy: ``(bpc + fpg/hot) / (bpc + fpg/C)``."""
    c = as_array("channels", channels, integer=True)
    hot = as_array("hot_channels", hot_channels, integer=True)
    if np.any(hot > c):
        raise ModelInputError("hot_channels cannot exceed channels")
    skewed = np.asarray(credits_per_channel(buffers_per_channel, floating_per_gate, hot))
    uniform = np.asarray(credits_per_channel(buffers_per_channel, floating_per_gate, c))
    return scalar_or_array(skewed / uniform)
