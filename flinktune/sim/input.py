"""The receiving side: input channels (remote and local) and the input gate with its pools.

Credit-based mode follows RemoteInputChannel / BufferManager (Flink 1.9+): every remote channel
owns ``buffers-per-channel`` exclusive buffers announced as initial credit; on every buffer the
sender announces its backlog and the channel asks the gate's floating pool for buffers until it
holds ``backlog + buffers-per-channel`` free ones (or the pool is empty, then it waits in line);
a buffer is recycled only after its last record was deserialised: an exclusive one returns to
its channel (one new credit, or a spare floating buffer goes back to the pool), a floating one to
the pool, which hands it to the first waiting channel. Local channels read the producer's
subpartition directly and use no input buffers.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from flinktune.sim.buffers import Slice
from flinktune.sim.kernel import URGENT, Kernel
from flinktune.sim.output import SimInvariantError, Subpartition


class InputChannel:
    __slots__ = ("announce_backlog_when_dry", "blocked", "buffers_in", "bytes_in", "excl_total",
                 "expected_seq", "fifo_violations", "free_excl", "free_float", "gate", "in_avail",
                 "index", "kernel", "lat_channel", "lat_fifo", "latency_s", "received", "records_in",
                 "remote", "required", "sub", "waiting_float")

    def __init__(self, kernel: Kernel, gate: InputGate, index: int, sub: Subpartition, remote: bool,
                 exclusive: int, latency_s: float) -> None:
        self.kernel = kernel
        self.gate = gate
        self.index = index
        self.sub = sub
        self.remote = remote
        self.latency_s = latency_s
        self.lat_fifo = kernel.fifo(latency_s, URGENT)  # AddCredit messages, one latency from now
        self.received: deque[Slice] = deque()
        self.in_avail = False
        self.blocked = False           # saw a barrier, waiting for alignment
        self.excl_total = exclusive if remote else 0
        self.free_excl = self.excl_total
        self.free_float = 0
        self.required = self.excl_total
        self.waiting_float = False
        self.announce_backlog_when_dry = remote and exclusive == 0
        self.expected_seq = 0
        self.fifo_violations = 0
        self.bytes_in = 0
        self.buffers_in = 0
        self.records_in = 0
        self.lat_channel: list[float] = []

    # --- arrival ------------------------------------------------------------------------------
    def arrive(self, sl: Slice) -> None:
        """Credit mode: Netty hands a buffer over; it takes a buffer the channel announced."""
        if sl.event is None:
            if self.free_float > 0:
                self.free_float -= 1
                sl.floating = True
            elif self.free_excl > 0:
                self.free_excl -= 1
            else:
                raise SimInvariantError("a buffer arrived without a credit for it")
        self.received.append(sl)
        self.gate.notify(self)
        self.on_backlog(sl.backlog)

    def deliver(self, sl: Slice) -> None:
        """No-credit mode: the connection found a gate buffer for this message."""
        self.received.append(sl)
        self.gate.notify(self)

    def on_backlog(self, backlog: int) -> None:
        if not self.remote or not self.gate.credit_mode:
            return
        self.required = backlog + self.excl_total
        gate = self.gate
        added = 0
        while self.free_excl + self.free_float < self.required and gate.float_free > 0:
            gate.float_free -= 1
            self.free_float += 1
            added += 1
        if self.free_excl + self.free_float < self.required and not self.waiting_float:
            self.waiting_float = True
            gate.float_waiters.append(self)
        if added:
            kernel = self.kernel  # kernel.schedule(latency, sub_credit, added, URGENT), without the heap
            arrival = kernel.now + self.latency_s
            self.lat_fifo.append((arrival, URGENT, kernel.next_seq(), self.sub_credit, added))

    def sub_credit(self, amount: int) -> None:
        """An AddCredit message reaches the sender."""
        sub = self.sub
        sub.credit += amount
        if sub.credit > sub.max_credit_seen:
            sub.max_credit_seen = sub.credit
        sub.need_backlog_announce = False
        sub.nic.offer(sub)

    # --- consumption --------------------------------------------------------------------------
    def take(self) -> Slice | None:
        if self.remote:
            return self.received.popleft() if self.received else None
        sub = self.sub
        return sub.poll() if sub.sendable() else None

    def has_data(self) -> bool:
        return bool(self.received) if self.remote else self.sub.sendable()

    def recycle(self, sl: Slice) -> None:
        """The last record of this buffer was deserialised: free the buffer."""
        if not self.remote:
            buf = sl.buf
            if buf is not None:
                # Subpartition.release, inlined (once per local buffer)
                buf.refs -= 1
                if buf.refs == 0 and buf.popped:
                    sub = self.sub
                    sub.part.recycle(sub)
            return
        if sl.event is not None:
            return
        gate = self.gate
        if not gate.credit_mode:
            gate.pool_free += 1
            if gate.stalled_conns:
                for conn in gate.stalled_conns:
                    self.kernel.schedule(0.0, conn.pump, None, URGENT)
                gate.stalled_conns.clear()
            return
        if sl.floating:
            gate.return_floating()
            return
        self.free_excl += 1
        if self.free_excl + self.free_float > self.required and self.free_float > 0:
            self.free_float -= 1
            gate.return_floating()
        else:
            kernel = self.kernel  # kernel.schedule(latency, sub_credit, 1, URGENT), without the heap (hot)
            self.lat_fifo.append((kernel.now + self.latency_s, URGENT, kernel.next_seq(), self.sub_credit, 1))


class InputGate:
    __slots__ = ("avail", "barrier_count", "barrier_id", "channels", "credit_mode", "float_free",
                 "float_total", "float_waiters", "kernel", "pool_free", "pool_total", "stalled_conns",
                 "task")

    def __init__(self, kernel: Kernel, credit_mode: bool, floating: int, pool_total: int) -> None:
        self.kernel = kernel
        self.credit_mode = credit_mode
        self.channels: list[InputChannel] = []
        self.avail: deque[InputChannel] = deque()
        self.float_total = floating if credit_mode else 0
        self.float_free = self.float_total
        self.float_waiters: deque[InputChannel] = deque()
        self.pool_total = pool_total if not credit_mode else 0
        self.pool_free = self.pool_total
        self.stalled_conns: list[Any] = []
        self.task: Any = None
        self.barrier_id = -1
        self.barrier_count = 0

    def notify(self, channel: InputChannel) -> None:
        if not channel.in_avail and not channel.blocked:
            channel.in_avail = True
            self.avail.append(channel)
            task = self.task
            if task.waiting_input:
                task.wake()

    def next_slice(self) -> Slice | None:
        """Round robin over channels with data (SingleInputGate.inputChannelsWithData)."""
        avail = self.avail
        while avail:
            channel = avail.popleft()
            channel.in_avail = False
            # take() and has_data(), inlined (once per buffer read)
            if channel.remote:
                received = channel.received
                if not received:
                    continue
                sl = received.popleft()
                more = bool(received)
            else:
                sub = channel.sub
                queue = sub.queue
                if not queue:
                    continue
                head = queue[0]
                if not head.finished and not (sub.flush_req and head.size > head.read):
                    continue
                sl = sub.poll()
                more = sub.sendable()
            if sl.event is not None:
                channel.blocked = True
            elif more:
                channel.in_avail = True
                avail.append(channel)
            return sl
        return None

    def unblock_all(self) -> None:
        for channel in self.channels:
            channel.blocked = False
            if channel.has_data():
                self.notify(channel)

    def return_floating(self) -> None:
        waiters = self.float_waiters
        while waiters:
            channel = waiters[0]
            if channel.free_excl + channel.free_float >= channel.required:
                waiters.popleft()
                channel.waiting_float = False
                continue
            channel.free_float += 1
            if channel.free_excl + channel.free_float >= channel.required:
                waiters.popleft()
                channel.waiting_float = False
            kernel = self.kernel  # kernel.schedule(latency, sub_credit, 1, URGENT), without the heap
            arrival = kernel.now + channel.latency_s
            channel.lat_fifo.append((arrival, URGENT, kernel.next_seq(), channel.sub_credit, 1))
            return
        self.float_free += 1
        if self.float_free > self.float_total:
            raise SimInvariantError("the floating pool got back more buffers than it has")

    # --- metrics (Flink's gauges, 1.9+ semantics) -----------------------------------------------
    def usage(self) -> tuple[float, float, float]:
        """(inPoolUsage, inputExclusiveBuffersUsage, inputFloatingBuffersUsage), remote channels only."""
        if not self.credit_mode:
            total = self.pool_total
            used = total - self.pool_free
            usage = used / total if total else 0.0
            return usage, float("nan"), float("nan")
        excl_total = 0
        excl_used = 0
        free_float_held = 0
        for channel in self.channels:
            if channel.remote:
                excl_total += channel.excl_total
                excl_used += channel.excl_total - channel.free_excl
                free_float_held += channel.free_float
        float_used = max(0, self.float_total - self.float_free - free_float_held)
        total = excl_total + self.float_total
        in_pool = (excl_used + float_used) / total if total else 0.0
        excl = excl_used / excl_total if excl_total else 0.0
        flt = float_used / self.float_total if self.float_total else 0.0
        return in_pool, excl, flt
