"""Netty and the wire: one sender NIC per TaskManager, one TCP connection per TaskManager pair.

The NIC serves the subpartitions that have data (and, with credit-based flow control, credit)
round robin, one buffer per turn: a message takes ``message_overhead + (bytes + header) /
bandwidth`` of the sender's egress and arrives one-way latency (RTT/2) later. A sent buffer goes
back to the sender's pool once written. All logical channels of one exchange between two
TaskManagers share one connection (Flink's ConnectionID: address plus the intermediate result's
connection index); without credits that connection is a FIFO the receiver stops reading when the
head message finds no free buffer in its gate (the pre-1.5 behaviour), and the sender keeps at
most ``tcp_window`` bytes unacknowledged on it.
"""

from __future__ import annotations

from collections import deque
from heapq import heappush
from typing import Any

from flinktune.sim.buffers import Slice
from flinktune.sim.kernel import NORMAL, URGENT, Kernel
from flinktune.sim.output import SimInvariantError, Subpartition


class Connection:
    """One TCP connection from a sender TaskManager to a receiver TaskManager."""

    __slots__ = ("bytes_sent", "dst_tm", "inflight", "kernel", "latency_s", "nic", "parked", "rx",
                 "src_tm", "stalled", "window")

    def __init__(self, kernel: Kernel, nic: Nic, src_tm: int, dst_tm: int, latency_s: float,
                 window: int) -> None:
        self.kernel = kernel
        self.nic = nic
        self.src_tm = src_tm
        self.dst_tm = dst_tm
        self.latency_s = latency_s
        self.window = window
        self.inflight = 0            # bytes sent and not yet read by the receiver (no-credit mode)
        self.parked: deque[Subpartition] = deque()
        self.rx: deque[Slice] = deque()
        self.stalled = False
        self.bytes_sent = 0

    # receiver side, no-credit mode -------------------------------------------------------
    def arrive(self, sl: Slice) -> None:
        self.rx.append(sl)
        if not self.stalled:
            self.pump()

    def pump(self, _: Any = None) -> None:
        """Read messages in order; stop at the first that finds no free buffer in its gate."""
        rx = self.rx
        self.stalled = False
        while rx:
            sl = rx[0]
            channel = sl.channel
            if sl.event is None:
                gate = channel.gate
                if gate.pool_free == 0:
                    self.stalled = True
                    gate.stalled_conns.append(self)
                    return
                gate.pool_free -= 1
            rx.popleft()
            channel.deliver(sl)
            self.kernel.schedule(self.latency_s, self._ack, sl.nbytes, URGENT)

    def _ack(self, nbytes: int) -> None:
        self.inflight -= nbytes
        if self.parked and self.inflight < self.window:
            nic = self.nic
            while self.parked:
                sub = self.parked.popleft()
                sub.parked = False
                nic.offer(sub)


class Nic:
    """Egress of one TaskManager: the Netty server threads and the link, as one FIFO server."""

    __slots__ = ("bandwidth", "busy", "busy_s", "credit_mode", "kernel", "lat_fifo", "latency_s", "messages",
                 "overhead_bytes", "overhead_s", "ready", "tm")

    def __init__(self, kernel: Kernel, tm: int, bandwidth: float, latency_s: float, overhead_s: float,
                 overhead_bytes: int, credit_mode: bool) -> None:
        self.kernel = kernel
        self.tm = tm
        self.bandwidth = bandwidth
        self.latency_s = latency_s
        self.lat_fifo = kernel.fifo(latency_s, URGENT)  # arrivals, one latency after the send ends
        self.overhead_s = overhead_s
        self.overhead_bytes = overhead_bytes
        self.credit_mode = credit_mode
        self.ready: deque[Subpartition] = deque()
        self.busy = False
        self.busy_s = 0.0
        self.messages = 0

    def offer(self, sub: Subpartition) -> None:
        """The subpartition may have something to send: queue it for a turn."""
        if sub.in_ready or sub.parked:
            return
        queue = sub.queue
        if not queue:
            return
        head = queue[0]
        if self.credit_mode and sub.credit <= 0 and head.event is None:
            if sub.need_backlog_announce and sub.sendable():
                # buffers-per-channel 0: the receiver learns the backlog without any buffer sent
                sub.need_backlog_announce = False
                # same TCP connection as the data: it cannot overtake a buffer sent before it
                kernel = self.kernel
                kernel.at(max(kernel.now + self.latency_s, sub.last_arrival_s), sub.channel.on_backlog,
                          sub.backlog(), NORMAL)
            return
        # sub.sendable(), inlined (hot)
        if not head.finished and not (sub.flush_req and head.size > head.read):
            return
        sub.in_ready = True
        self.ready.append(sub)
        if not self.busy:
            self._start()

    def _start(self) -> None:
        ready = self.ready
        credit_mode = self.credit_mode
        while ready:
            sub = ready.popleft()
            sub.in_ready = False
            if not sub.sendable():
                continue
            if credit_mode:
                if sub.credit <= 0 and not sub.head_is_event():
                    continue
            else:
                conn = sub.conn
                if conn.inflight >= conn.window:
                    sub.parked = True
                    conn.parked.append(sub)
                    continue
            sl = sub.poll()
            nbytes = sl.nbytes
            if sl.event is None and credit_mode:
                sub.credit -= 1
                if sub.credit < 0:
                    raise SimInvariantError("a sender spent a credit it did not have")
            sl.backlog = sub.backlog()
            sub.bytes_out += nbytes
            if not credit_mode:
                sub.conn.inflight += nbytes
                sub.conn.bytes_sent += nbytes
            # the subpartition goes to the back of the line if it can send again
            if sub.sendable() and (not credit_mode or sub.credit > 0 or sub.head_is_event()):
                sub.in_ready = True
                ready.append(sub)
            elif credit_mode and sub.credit <= 0 and sub.channel.announce_backlog_when_dry:
                sub.need_backlog_announce = True
            kernel = self.kernel
            now = kernel.now
            tx_s = self.overhead_s + (nbytes + self.overhead_bytes) / self.bandwidth
            sub.last_arrival_s = now + tx_s + self.latency_s
            self.busy = True
            self.busy_s += tx_s
            self.messages += 1
            # kernel.schedule(tx_s, self._sent, (sub, sl)), inlined (once per message)
            heappush(kernel.heap, (now + tx_s, NORMAL, kernel.next_seq(), self._sent, (sub, sl)))
            return

    def _sent(self, item: tuple[Subpartition, Slice]) -> None:
        sub, sl = item
        self.busy = False
        buf = sl.buf
        if buf is not None:
            # sub.release(buf), inlined (once per message)
            buf.refs -= 1
            if buf.refs == 0 and buf.popped:
                sub.part.recycle(sub)
        kernel = self.kernel
        if self.credit_mode:
            # kernel.schedule(latency, channel.arrive, sl, URGENT), without the heap (once per message)
            arrival = kernel.now + self.latency_s
            self.lat_fifo.append((arrival, URGENT, kernel.next_seq(), sl.channel.arrive, sl))
        else:
            kernel.schedule(self.latency_s, sub.conn.arrive, sl, URGENT)
        if self.ready:
            self._start()
