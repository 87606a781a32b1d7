"""A small discrete-event kernel: a heap of (time, priority, sequence, callback, argument).

SimPy-shaped but callback based: no generators and no event objects, because the simulator
schedules millions of tiny steps and every allocation shows in the benchmark
(benchmarks/bench_sim.py compares it with an equivalent SimPy model).
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from itertools import count
from typing import Any

# Lower runs first among events at the same instant. Deliveries before reactions to them, and
# the metric sampler last, so a sample sees the state after everything due at that instant.
URGENT = 0
NORMAL = 1
LATE = 2
SAMPLE = 3


class Kernel:
    """Event loop over simulated time in seconds."""

    # ``heap`` and ``next_seq`` are public for the simulator's hottest call sites (flinktune.sim.task),
    # which push ``(now + delay, priority, next_seq(), callback, arg)`` exactly as ``schedule`` does
    # but without a method call per event.
    __slots__ = ("events_processed", "heap", "next_seq", "now")

    def __init__(self) -> None:
        self.now = 0.0
        self.heap: list[tuple[float, int, int, Callable[[Any], None], Any]] = []
        self.next_seq = count(1).__next__  # tie-break: insertion order among equal (time, priority)
        self.events_processed = 0

    def schedule(self, delay: float, callback: Callable[[Any], None], arg: Any = None,
                 priority: int = NORMAL) -> None:
        """Run ``callback(arg)`` ``delay`` seconds from now (``delay`` >= 0)."""
        heappush(self.heap, (self.now + delay, priority, self.next_seq(), callback, arg))

    def at(self, time_s: float, callback: Callable[[Any], None], arg: Any = None,
           priority: int = NORMAL) -> None:
        """Run ``callback(arg)`` at absolute time ``time_s`` (never earlier than now)."""
        heappush(self.heap, (max(time_s, self.now), priority, self.next_seq(), callback, arg))

    def run(self, until_s: float) -> None:
        """Process every event due at or before ``until_s``; leave the clock at ``until_s``."""
        heap = self.heap
        count = 0
        while heap and heap[0][0] <= until_s:
            time_s, _, _, callback, arg = heappop(heap)
            self.now = time_s
            callback(arg)
            count += 1
        self.events_processed += count
        self.now = until_s

    def pending(self) -> int:
        return len(self.heap)
