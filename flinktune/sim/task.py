"""A subtask's thread: read a buffer, deserialise and process its records, emit the results.

Time is split like Flink's task metrics: busy (processing), idle (no input, or a throttled source
waiting for its next records) and backpressured (output not available, soft; or no buffer for
the record being written, hard). Sources produce in short chunks; other tasks work per input
buffer, which is what makes the simulator fast enough for Python.
"""

from __future__ import annotations

from typing import Any

from flinktune.sim.kernel import LATE, NORMAL, Kernel

IDLE = 0
BUSY = 1
BACKPRESSURED = 2

# A source emits records in chunks of at most this much of its own time (latency granularity).
SOURCE_CHUNK_S = 0.00025
# Records of one size are written in bulk when at least this many fit into a buffer; with fewer,
# nearly every record needs a new buffer and the plain per-record loop is cheaper.
BULK_RECORDS_PER_BUFFER = 4


class Task:
    __slots__ = (
        "acc",
        "align_start",
        "alignment_s",
        "buffer_overhead_s",
        "buffers_in_local",
        "buffers_in_remote",
        "bytes_in_local",
        "bytes_in_remote",
        "capacity",
        "checkpoints_done",
        "deferred_barriers",
        "due_pending",
        "factor",
        "fixed_size",
        "flush_always",
        "flush_debt_s",
        "flush_overhead_s",
        "gate",
        "is_source",
        "kernel",
        "lat_every",
        "lat_vertex",
        "next_due",
        "p_sizes",
        "p_targets",
        "p_tsrc",
        "part",
        "partial",
        "pi",
        "rate",
        "records_in",
        "records_out",
        "router",
        "since",
        "sizes",
        "state",
        "stopped",
        "strict_fifo",
        "subtask",
        "tm",
        "tsrc_one",
        "vertex",
        "waiting_input",
        "waiting_output",
        "wake_pending",
        "warmup_s",
    )

    def __init__(self, kernel: Kernel, vertex: int, subtask: int, tm: int, *, is_source: bool,
                 capacity: float, rate: float | None, gate: Any, part: Any, router: Any, sizes: Any,
                 flush_always: bool, flush_overhead_s: float, buffer_overhead_s: float,
                 lat_every: int, warmup_s: float) -> None:
        self.kernel = kernel
        self.vertex = vertex
        self.subtask = subtask
        self.tm = tm
        self.is_source = is_source
        self.capacity = capacity
        self.rate = rate
        self.factor = 1.0
        self.gate = gate
        self.part = part
        self.router = router
        self.sizes = sizes
        self.flush_always = flush_always
        self.flush_debt_s = 0.0
        self.flush_overhead_s = flush_overhead_s
        self.buffer_overhead_s = buffer_overhead_s
        self.lat_every = lat_every
        self.warmup_s = warmup_s
        self.state = IDLE
        self.since = 0.0
        self.acc = [0.0, 0.0, 0.0]
        self.waiting_input = not is_source  # an operator starts waiting for input
        self.waiting_output = False
        self.wake_pending = False
        self.due_pending = False
        # records waiting to be written: parallel lists (target subpartition, bytes, source time)
        self.p_targets: list[int] = []
        self.p_sizes: list[int] = []
        self.p_tsrc: list[float] | None = []
        # the pending records' common source time (None: they differ, see p_tsrc)
        self.tsrc_one: float | None = None
        # every record this many bytes: the writer can move a whole chunk in one step
        self.fixed_size: int | None = sizes.fixed_bytes if sizes is not None else None
        self.strict_fifo = False
        self.pi = 0
        self.partial: tuple[Any, int, int, float, float] | None = None
        self.next_due = 0.0
        self.stopped = False
        self.deferred_barriers: list[int] = []
        self.align_start = 0.0
        self.alignment_s = 0.0
        self.checkpoints_done = 0
        self.records_in = 0
        self.records_out = 0
        self.bytes_in_local = 0
        self.bytes_in_remote = 0
        self.buffers_in_local = 0
        self.buffers_in_remote = 0
        self.lat_vertex: list[float] = []

    # --- bookkeeping ---------------------------------------------------------------------------
    def _enter(self, state: int) -> None:
        now = self.kernel.now
        self.acc[self.state] += now - self.since
        self.state = state
        self.since = now

    def times(self) -> tuple[float, float, float]:
        """Cumulative (idle, busy, backpressured) seconds up to now."""
        extra = self.kernel.now - self.since
        acc = list(self.acc)
        acc[self.state] += extra
        return acc[0], acc[1], acc[2]

    def wake(self) -> None:
        if not self.wake_pending:
            self.wake_pending = True
            self.kernel.schedule(0.0, self._wake, None, NORMAL)

    def _wake(self, _: Any) -> None:
        self.wake_pending = False
        self.step()

    def _due(self, _: Any) -> None:
        self.due_pending = False
        self.step()

    def speed(self) -> float:
        return self.capacity * self.factor

    # --- the loop ------------------------------------------------------------------------------
    def step(self) -> None:
        if self.state == BUSY:
            return
        kernel = self.kernel
        while True:
            if (self.pi < len(self.p_targets) or self.partial is not None) and not self._emit():
                self.waiting_output = True
                if self.state != BACKPRESSURED:
                    self._enter(BACKPRESSURED)
                return
            self.waiting_output = False
            part = self.part
            if self.is_source:
                if self.stopped:
                    if self.state != IDLE:
                        self._enter(IDLE)
                    return
                speed = self.capacity * self.factor
                if speed <= 0.0:
                    # paused: look again when the schedule may have changed
                    self._idle_until(kernel.now + 0.01)
                    return
                if kernel.now < self.next_due - 1e-12:
                    self._idle_until(self.next_due)
                    return
                pace = min(self.rate, speed) if self.rate is not None else speed
                n = max(1, min(4096, int(speed * SOURCE_CHUNK_S)))
                busy_s = n / speed
                if self.flush_always:
                    busy_s += n * self.flush_overhead_s
                busy_s += self.flush_debt_s
                self.flush_debt_s = 0.0
                self.next_due = kernel.now + n / pace
                self._enter(BUSY)
                kernel.schedule(busy_s, self._source_done, n)
                return
            if part is not None and not part.available():
                self.waiting_output = True
                if self.state != BACKPRESSURED:
                    self._enter(BACKPRESSURED)
                return
            sl = self.gate.next_slice()
            if sl is None:
                self.waiting_input = True
                if self.state != IDLE:
                    self._enter(IDLE)
                return
            self.waiting_input = False
            if sl.event is not None:
                self._on_barrier(sl)
                continue
            speed = self.capacity * self.factor
            n = sl.n
            busy_s = self.buffer_overhead_s
            if n:
                busy_s += n / speed if speed > 0 else 3600.0
                if self.flush_always and part is not None:
                    busy_s += n * self.flush_overhead_s
            busy_s += self.flush_debt_s
            self.flush_debt_s = 0.0
            self._enter(BUSY)
            kernel.schedule(busy_s, self._slice_done, sl)
            return

    def _idle_until(self, when: float) -> None:
        if self.state != IDLE:
            self._enter(IDLE)
        if not self.due_pending:
            self.due_pending = True
            self.kernel.at(when, self._due, None, NORMAL)

    def _source_done(self, n: int) -> None:
        now = self.kernel.now
        if self.part is not None:
            self.p_targets = self.router.draw(n)
            self.p_sizes = self.sizes.draw(n)
            self.p_tsrc = None
            self.tsrc_one = now
        else:
            self.records_out += n
        self.pi = 0
        self._enter(IDLE)
        self.step()

    def _slice_done(self, sl: Any) -> None:
        now = self.kernel.now
        channel = sl.channel
        recs = sl.recs
        n = sl.n
        channel.bytes_in += sl.nbytes
        channel.buffers_in += 1
        channel.records_in += n
        self.records_in += n
        if channel.remote:
            self.bytes_in_remote += sl.nbytes
            self.buffers_in_remote += 1
        else:
            self.bytes_in_local += sl.nbytes
            self.buffers_in_local += 1
        if n:
            expected = channel.expected_seq
            first = recs[0][0]
            if self.strict_fifo:
                violations = 0
                counted = 0
                for run in recs:
                    if run[0] != expected:
                        violations += 1
                    expected = run[0] + run[1]
                    counted += run[1]
                if counted != n:
                    violations += 1
                channel.fifo_violations += violations
            else:
                # a slice holds one buffer's runs in append order: checking its ends is enough
                last = recs[-1]
                expected_end = last[0] + last[1]
                if first != expected or expected_end != expected + n:
                    channel.fifo_violations += 1
                expected = expected_end
            channel.expected_seq = expected
            every = self.lat_every
            # records with seq % every == 0 are sampled; skip the runs when the slice holds none
            if now >= self.warmup_s and (-first) % every < n:
                lat_c = channel.lat_channel
                lat_v = self.lat_vertex
                for seq0, count, t_emit, t_src in recs:
                    for _ in range((-seq0) % every, count, every):
                        lat_c.append(now - t_emit)
                        lat_v.append(now - t_src)
        channel.recycle(sl)
        if self.part is not None and n:
            self.p_targets = self.router.draw(n)
            self.p_sizes = self.sizes.draw(n)
            t_one = recs[0][3]
            if all(run[3] == t_one for run in recs):
                self.p_tsrc = None
                self.tsrc_one = t_one
            else:
                tsrc: list[float] = []
                for run in recs:
                    tsrc += [run[3]] * run[1]
                self.p_tsrc = tsrc
                self.tsrc_one = None
            self.pi = 0
        self._enter(IDLE)
        self.step()

    def _emit(self) -> bool:
        """Write pending records; False when the output blocks (soft or hard)."""
        part = self.part
        now = self.kernel.now
        partial = self.partial
        if partial is not None:
            sub, remaining, seq, t_emit, t_src = partial
            remaining = part.write(sub, remaining, seq, t_emit, t_src)
            if remaining:
                self.partial = (sub, remaining, seq, t_emit, t_src)
                return False
            self.partial = None
            self.pi += 1
            self.records_out += 1
            if self.flush_always:
                part.flush(sub)
            if self.deferred_barriers:
                for barrier in self.deferred_barriers:
                    part.broadcast_event(barrier)
                self.deferred_barriers = []
        targets = self.p_targets
        # Operators stop before a record when the output pool is unavailable (mailbox); sources
        # (legacy SourceFunction, as in the seed's experiment) block only when a buffer is needed.
        soft = not self.is_source
        pi = start = self.pi
        end = len(targets)
        tsrc_one = self.tsrc_one
        size = self.fixed_size
        seg = part.seg
        if (size is not None and tsrc_one is not None and not self.flush_always
                and seg >= BULK_RECORDS_PER_BUFFER * size):
            return self._emit_bulk(part, now, soft, pi, end, size, tsrc_one)
        sizes = self.p_sizes
        tsrcs = self.p_tsrc
        if tsrcs is None:
            tsrcs = self.p_tsrc = [tsrc_one] * end
            self.tsrc_one = None
        subs = part.subs
        flush_always = self.flush_always
        written = 0
        try:
            while pi < end:
                if soft and (part.used >= part.pool_size or part.unavail_subs):
                    return False
                sub = subs[targets[pi]]
                size = sizes[pi]
                t_src = tsrcs[pi]
                seq = sub.next_seq
                sub.next_seq = seq + 1
                written += size
                cur = sub.cur
                if cur is not None and cur.size + size < seg:
                    # fast path: the record fits and does not fill the buffer
                    cur.size += size
                    cur.recs.append((seq, 1, now, t_src))
                    cur.nrec += 1
                else:
                    remaining = part.write(sub, size, seq, now, t_src)
                    if remaining:
                        self.partial = (sub, remaining, seq, now, t_src)
                        return False
                pi += 1
                if flush_always:
                    part.flush(sub)
        finally:
            self.pi = pi
            self.records_out += pi - start
            part.bytes_out += written
        self.p_targets = []
        self.pi = 0
        return True

    def _emit_bulk(self, part: Any, now: float, soft: bool, pi: int, end: int, size: int,
                   t_src: float) -> bool:
        """``_emit`` for records of one size and one source time, without a per-record loop.

        Between two records that need a buffer requested or finished ("slow" ones), writing a
        record only appends it to its subpartition's current buffer: nothing is notified, no pool
        state changes, so the order among those records does not matter and each subpartition's
        share is appended as one run (same sequence numbers, sizes and times as one by one).
        Slow records go through ``ResultPartition.write`` one at a time, in order.
        """
        targets = self.p_targets
        subs = part.subs
        seg = part.seg
        limit = seg - 1  # a record is fast while cur.size + size <= seg - 1
        start = pi
        written = 0
        try:
            while pi < end:
                if soft and (part.used >= part.pool_size or part.unavail_subs):
                    return False
                chunk = targets[pi:end] if pi else targets
                n = end - pi
                first_slow = n
                counts = []
                for j in set(chunk):
                    sub = subs[j]
                    cur = sub.cur
                    k = chunk.count(j)
                    counts.append((sub, k))
                    fast = (limit - cur.size) // size if cur is not None else 0
                    if k > fast:
                        # the (fast + 1)-th record for this subpartition needs a new buffer
                        pos = chunk.index(j)
                        for _ in range(fast):
                            pos = chunk.index(j, pos + 1)
                        if pos < first_slow:
                            first_slow = pos
                if first_slow:
                    if first_slow < n:
                        prefix = chunk[:first_slow]
                        counts = [(subs[j], prefix.count(j)) for j in set(prefix)]
                    for sub, k in counts:
                        cur = sub.cur
                        seq = sub.next_seq
                        sub.next_seq = seq + k
                        cur.size += k * size
                        cur.nrec += k
                        cur.recs.append((seq, k, now, t_src))
                    pi += first_slow
                    written += first_slow * size
                    if pi == end:
                        break
                sub = subs[targets[pi]]
                seq = sub.next_seq
                sub.next_seq = seq + 1
                written += size
                remaining = part.write(sub, size, seq, now, t_src)
                if remaining:
                    self.partial = (sub, remaining, seq, now, t_src)
                    return False
                pi += 1
        finally:
            self.pi = pi
            self.records_out += pi - start
            part.bytes_out += written
        self.p_targets = []
        self.pi = 0
        return True

    def _on_barrier(self, sl: Any) -> None:
        gate = self.gate
        now = self.kernel.now
        if sl.event != gate.barrier_id:
            gate.barrier_id = sl.event
            gate.barrier_count = 0
            self.align_start = now
        gate.barrier_count += 1
        if gate.barrier_count == len(gate.channels):
            self.alignment_s = now - self.align_start
            gate.unblock_all()
            if self.part is not None:
                self.part.broadcast_event(sl.event)
            else:
                self.checkpoints_done += 1

    def trigger_checkpoint(self, checkpoint_id: int) -> None:
        """Sources: inject a barrier between records (never inside a half-written record)."""
        if self.part is None:
            return
        if self.partial is not None:
            self.deferred_barriers.append(checkpoint_id)
        else:
            self.part.broadcast_event(checkpoint_id)

    def stop(self, _: Any = None) -> None:
        self.stopped = True
        self.kernel.schedule(0.0, self._wake, None, LATE)
