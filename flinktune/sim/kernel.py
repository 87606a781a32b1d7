"""A small discrete-event kernel: a heap of (time, priority, sequence, callback, argument).

SimPy-shaped but callback based: no generators and no event objects, because the simulator
schedules millions of tiny steps and every allocation shows in the benchmark
(benchmarks/bench_sim.py compares it with an equivalent SimPy model).

Events with one constant delay and priority (a message's one-way latency, a zero-delay wake-up)
are due in the order they were scheduled, so they wait in a FIFO of their own instead of the
heap: appending and popping a deque is cheaper than sifting a heap, and the heap stays small.
The run loop merges the heap and the FIFOs by the same (time, priority, sequence) key, so the
order of events is exactly the one a single heap would give.
"""

from __future__ import annotations

from collections import deque
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

Event = tuple[float, int, int, Callable[[Any], None], Any]
# at most this many FIFOs: the run loop merges them without a loop of its own
MAX_FIFOS = 2


class Kernel:
    """Event loop over simulated time in seconds."""

    # ``heap``, ``next_seq`` and the FIFOs are public for the simulator's hottest call sites
    # (flinktune.sim.task and friends), which push ``(now + delay, priority, next_seq(), callback,
    # arg)`` exactly as ``schedule`` does but without a method call per event.
    __slots__ = ("_fifo_keys", "events_processed", "fifos", "heap", "next_seq", "now")

    def __init__(self) -> None:
        self.now = 0.0
        self.heap: list[Event] = []
        self.fifos: list[deque[Event]] = []
        self._fifo_keys: list[tuple[float, int]] = []
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

    def fifo(self, delay_s: float, priority: int) -> deque[Event]:
        """The FIFO for events scheduled ``delay_s`` from now at ``priority``.

        Append ``(now + delay_s, priority, next_seq(), callback, arg)`` to it, with exactly this
        delay and priority: that is what keeps it sorted (``now`` never goes back).
        """
        key = (delay_s, priority)
        if key in self._fifo_keys:
            return self.fifos[self._fifo_keys.index(key)]
        if len(self.fifos) == MAX_FIFOS:
            raise ValueError(f"at most {MAX_FIFOS} event FIFOs")
        self._fifo_keys.append(key)
        self.fifos.append(deque())
        return self.fifos[-1]

    def run(self, until_s: float) -> None:
        """Process every event due at or before ``until_s``; leave the clock at ``until_s``."""
        heap = self.heap
        done = 0
        if not self.fifos:
            while heap and heap[0][0] <= until_s:
                time_s, _, _, callback, arg = heappop(heap)
                self.now = time_s
                callback(arg)
                done += 1
            self.events_processed += done
            self.now = until_s
            return
        # unused FIFO slots stay empty
        first, second = (*self.fifos, deque(), deque())[:MAX_FIFOS]
        while True:
            event = heap[0] if heap else None
            source: Any = heap
            if first:
                head = first[0]
                if event is None or head < event:
                    event = head
                    source = first
            if second:
                head = second[0]
                if event is None or head < event:
                    event = head
                    source = second
            if event is None or event[0] > until_s:
                break
            if source is heap:
                heappop(heap)
            else:
                source.popleft()
            self.now = event[0]
            event[3](event[4])
            done += 1
        self.events_processed += done
        self.now = until_s

    def pending(self) -> int:
        return len(self.heap) + sum(len(f) for f in self.fifos)
