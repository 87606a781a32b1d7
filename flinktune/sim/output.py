"""The sending side: result partition, subpartition queues with backlog, the local buffer pool.

Follows Flink 1.9+ semantics (PipelinedSubpartition, LocalBufferPool, RecordWriter):
- a buffer is added to its subpartition queue when requested and filled record by record;
  records that do not fit continue in a new buffer;
- data becomes available to the reader when a buffer is finished (full or cut by an event) or
  when a flush was requested (output flusher, or every record with buffer timeout 0);
- the backlog is the number of finished data buffers queued, plus one for flushed data;
- the pool holds ``max(Sp + 1, Sp * buffers-per-channel + floating)`` buffers; it turns
  unavailable when empty or when one subpartition holds ``max-buffers-per-channel`` buffers,
  and a producer that needs a buffer from an empty pool blocks (hard backpressure).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from flinktune.sim.buffers import Buf, Slice


class SimInvariantError(AssertionError):
    """The simulator broke one of its own invariants (a bug, never bad input)."""


class Subpartition:
    __slots__ = ("buffers_out", "bytes_out", "channel", "conn", "credit", "cur", "flush_req", "held",
                 "in_ready", "index", "last_arrival_s", "log_c", "log_cur", "log_slow", "max_credit_seen",
                 "need_backlog_announce", "next_seq", "nfinished", "nic", "parked", "part", "queue", "remote")

    def __init__(self, part: ResultPartition, index: int) -> None:
        self.part = part
        self.index = index
        self.queue: deque[Buf] = deque()
        self.cur: Buf | None = None
        self.nfinished = 0          # finished data buffers in the queue
        self.flush_req = False
        self.held = 0               # pooled buffers this subpartition holds
        self.credit = 0
        self.max_credit_seen = 0
        self.channel: Any = None    # the consumer's InputChannel
        self.remote = False
        self.nic: Any = None
        self.conn: Any = None
        self.in_ready = False
        self.parked = False
        self.need_backlog_announce = False
        self.next_seq = 0
        self.last_arrival_s = 0.0   # when the last message sent on this channel reaches the receiver
        self.bytes_out = 0
        self.buffers_out = 0
        # the source's chunk log (flinktune.sim.chunklog): chunks written here, the buffer its
        # plan saw, the key position of the first record that needs a new buffer
        self.log_c = 0
        self.log_cur: Buf | None = None
        self.log_slow = 0

    def backlog(self) -> int:
        cur = self.cur
        return self.nfinished + (1 if self.flush_req and cur is not None and cur.size > cur.read else 0)

    def sendable(self) -> bool:
        """PipelinedSubpartition.isDataAvailable: an event, a finished buffer, or flushed data."""
        queue = self.queue
        if not queue:
            return False
        head = queue[0]
        if head.finished:
            return True
        return self.flush_req and head.size > head.read

    def head_is_event(self) -> bool:
        return bool(self.queue) and self.queue[0].event is not None

    def poll(self) -> Slice:
        """Take the readable part of the head (caller checked ``sendable``)."""
        queue = self.queue
        head = queue[0]
        if len(queue) == 1:
            # PipelinedSubpartition.pollBuffer: reading the last buffer drains every flushed byte
            self.flush_req = False
        if head.event is not None:
            queue.popleft()
            head.popped = True
            return Slice(None, 0, [], 0, head.event, self.channel)
        if head is self.cur:
            logged = self.part.logged
            if logged is not None:
                logged.sync(self)  # the source's logged chunks, before anyone reads them
        start = head.read
        end = head.size
        hrecs = head.recs
        ri = head.ri
        nrec = head.nrec
        n = nrec - head.rn
        head.read = end
        head.refs += 1
        if head.finished:
            queue.popleft()
            head.popped = True
            self.nfinished -= 1
            # nothing is appended to a finished buffer: hand its runs on without a copy
            recs = hrecs[ri:] if ri else hrecs
        else:
            # a copy: the writer keeps appending to a partly read (flushed) buffer
            recs = hrecs[ri:]
            head.ri = len(hrecs)
            head.rn = nrec
        return Slice(head, end - start, recs, n, None, self.channel)

    def release(self, buf: Buf) -> None:
        """A slice of ``buf`` was consumed (local) or written to the wire (remote)."""
        buf.refs -= 1
        if buf.refs == 0 and buf.popped:
            self.part.recycle(self)


class ResultPartition:
    """One producer subtask's output: subpartitions, pool, flusher settings, counters."""

    __slots__ = ("bytes_out", "logged", "max_per_sub", "pool_size", "seg", "subs", "task", "unavail_subs",
                 "used")

    def __init__(self, n_subs: int, seg: int, pool_size: int, max_per_sub: int) -> None:
        self.seg = seg
        self.pool_size = pool_size
        self.max_per_sub = max_per_sub
        self.used = 0
        self.unavail_subs = 0
        self.subs = [Subpartition(self, i) for i in range(n_subs)]
        self.task: Any = None
        self.bytes_out = 0
        self.logged: Any = None  # the source's ChunkLog while it holds chunks not yet written here

    def available(self) -> bool:
        return self.used < self.pool_size and self.unavail_subs == 0

    def _request(self, sub: Subpartition) -> Buf | None:
        if self.used >= self.pool_size:
            return None
        self.used += 1
        sub.held += 1
        if sub.held == self.max_per_sub:
            self.unavail_subs += 1
        buf = Buf()
        sub.queue.append(buf)
        sub.cur = buf
        return buf

    def recycle(self, sub: Subpartition) -> None:
        if sub.held == self.max_per_sub:
            self.unavail_subs -= 1
        sub.held -= 1
        self.used -= 1
        if self.used < 0 or sub.held < 0:
            raise SimInvariantError("sender pool recycled more buffers than it handed out")
        task = self.task
        if task is not None and task.waiting_output:
            task.wake()

    def write(self, sub: Subpartition, remaining: int, seq: int, t_emit: float, t_src: float) -> int:
        """Serialise ``remaining`` bytes of a record; returns the bytes left when the pool is empty."""
        seg = self.seg
        cur = sub.cur
        while True:
            if cur is None:
                # _request, inlined (once per buffer)
                if self.used >= self.pool_size:
                    return remaining
                self.used += 1
                held = sub.held = sub.held + 1
                if held == self.max_per_sub:
                    self.unavail_subs += 1
                cur = sub.cur = Buf()
                sub.queue.append(cur)
            size = cur.size
            if remaining < seg - size:
                cur.size = size + remaining
                cur.recs.append((seq, 1, t_emit, t_src))
                cur.nrec += 1
                return 0
            if remaining == seg - size:
                cur.size = seg
                cur.recs.append((seq, 1, t_emit, t_src))
                cur.nrec += 1
                self._finish(sub, cur)
                return 0
            cur.size = seg
            remaining -= seg - size
            self._finish(sub, cur)
            cur = None

    def _finish(self, sub: Subpartition, cur: Buf) -> None:
        cur.finished = True
        sub.cur = None
        sub.buffers_out += 1
        if cur.size == cur.read:
            # everything was already flushed: nothing left to hand on, the buffer goes back
            if sub.queue and sub.queue[0] is cur:
                sub.queue.popleft()
            if not sub.queue:
                sub.flush_req = False
            cur.popped = True
            if cur.refs == 0:
                self.recycle(sub)
        else:
            sub.nfinished += 1
            # notify(sub), inlined (once per buffer)
            if sub.remote:
                sub.nic.offer(sub)
            else:
                channel = sub.channel
                channel.gate.notify(channel)

    def flush(self, sub: Subpartition) -> None:
        cur = sub.cur
        if cur is not None and cur.size > cur.read and not sub.flush_req:
            sub.flush_req = True
            self.notify(sub)

    def flush_all(self, _: Any = None) -> int:
        """The output flusher's tick; returns how many subpartitions it handed data from."""
        if self.logged is not None:
            self.logged.sync_all()
        flushed = 0
        for sub in self.subs:
            cur = sub.cur
            if cur is not None and cur.size > cur.read and not sub.flush_req:
                sub.flush_req = True
                flushed += 1
                self.notify(sub)
        return flushed

    def broadcast_event(self, event_id: int) -> None:
        """A checkpoint barrier: cut every current buffer and queue the event behind the data."""
        if self.logged is not None:
            self.logged.sync_all()
        for sub in self.subs:
            cur = sub.cur
            if cur is not None:
                self._finish(sub, cur)
            sub.queue.append(Buf(event=event_id))
            self.notify(sub)

    @staticmethod
    def notify(sub: Subpartition) -> None:
        if sub.remote:
            sub.nic.offer(sub)
        else:
            sub.channel.gate.notify(sub.channel)


_BLOCK = 4096


class Router:
    """Picks the target subpartition per record: HASH (weighted), REBALANCE, FORWARD."""

    __slots__ = ("_buf", "_i", "_n", "_rng", "_weights", "strategy")

    def __init__(self, strategy: str, n_subs: int, weights: np.ndarray | None, rng: np.random.Generator,
                 own_index: int) -> None:
        self.strategy = strategy
        self._n = n_subs
        self._rng = rng
        self._weights = weights
        self._buf: Sequence[int] = b"" if n_subs <= 256 else []
        self._i = 0  # HASH: position in the drawn block; REBALANCE: last channel used
        if strategy == "REBALANCE":
            self._i = int(rng.integers(n_subs))  # Flink's RebalancePartitioner starts at random
        elif strategy == "FORWARD":
            self._i = own_index if n_subs > 1 else 0

    def draw(self, count: int) -> Sequence[int]:
        n = self._n
        if self.strategy == "HASH":
            if n == 1:
                return [0] * count
            # keys are drawn in blocks: one numpy call per block, not per chunk of records; kept
            # as bytes when they fit (bytes.count/index are what the bulk writer calls per chunk)
            buf = self._buf
            start = self._i
            if start + count > len(buf):
                block = max(_BLOCK, count)
                if self._weights is None:
                    drawn = self._rng.integers(0, n, size=block)
                else:
                    drawn = self._rng.choice(n, size=block, p=self._weights)
                fresh = drawn.astype(np.uint8).tobytes() if n <= 256 else drawn.tolist()
                buf = self._buf = buf[start:] + fresh
                start = 0
            self._i = start + count
            return buf[start:start + count]
        if self.strategy == "REBALANCE":
            start = self._i
            self._i = (start + count) % n
            return [(start + 1 + k) % n for k in range(count)]
        return [self._i] * count


class SizeGen:
    """Serialised record sizes drawn in blocks from the scenario's distribution."""

    __slots__ = ("_buf", "_fixed", "_i", "_kind", "_params", "_rng", "fixed_bytes")

    def __init__(self, spec: Any, rng: np.random.Generator) -> None:
        self._rng = rng
        self._fixed = spec.fixed
        self.fixed_bytes: int | None = spec.fixed  # every record this size (lets writers move chunks)
        self._buf: list[int] = []
        self._i = 0
        if spec.fixed is not None:
            self._kind = "fixed"
            self._params: tuple[float, ...] = (spec.fixed,)
        elif spec.uniform is not None:
            self._kind = "uniform"
            self._params = (spec.uniform[0], spec.uniform[1])
        else:
            self._kind = "lognormal"
            sigma = spec.lognormal_sigma
            self._params = (float(np.log(spec.lognormal_mean) - sigma * sigma / 2), sigma)

    def draw(self, count: int) -> list[int]:
        if self._kind == "fixed":
            return [self._fixed] * count
        buf = self._buf
        start = self._i
        if start + count > len(buf):
            buf = self._buf = buf[start:] + self._block(max(_BLOCK, count))
            start = 0
        self._i = start + count
        return buf[start:start + count]

    def _block(self, count: int) -> list[int]:
        if self._kind == "uniform":
            low, high = self._params
            return self._rng.integers(int(low), int(high) + 1, size=count).tolist()
        mu, sigma = self._params
        sizes = np.maximum(1, np.rint(self._rng.lognormal(mu, sigma, size=count))).astype(np.int64)
        return sizes.tolist()
