"""When a link counts as saturated: one threshold for the analysis's diagnosis and the advisor.

Flink's ``numBytesInRemote`` counts buffer payload only; TCP/IP headers and Netty's framing ride on
top, and a back-pressured job's traffic is bursty, so a link that sets the pace shows well below 100%
of its nominal rate in these counters (on a 20 Mbit/s tbf link, tests/e2e_flink/test_network_bound.py,
about 85-90%). From this share of the bandwidth the user gave, the link is taken as the limit.
"""

from __future__ import annotations

LINK_SATURATED = 0.7


def link_share(received_bytes_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """The busiest TaskManager's received network bytes as a share of its bandwidth."""
    return received_bytes_per_s / bandwidth_bytes_per_s


def link_saturated(received_bytes_per_s: float | None, bandwidth_bytes_per_s: float | None) -> bool:
    return bool(received_bytes_per_s and bandwidth_bytes_per_s
                and link_share(received_bytes_per_s, bandwidth_bytes_per_s) >= LINK_SATURATED)
