"""A subtask's thread: read a buffer, deserialise and process its records, emit the results.

Time is split like Flink's task metrics: busy (processing), idle (no input, or a throttled source
waiting for its next records) and backpressured (output not available, soft; or no buffer for
the record being written, hard). Sources produce in short chunks; other tasks work per input
buffer, which is what makes the simulator fast enough for Python.

Over 500 lines: one simulated subtask's hot loop (read, deserialise, process, emit) kept together
for speed.
"""

from __future__ import annotations

from heapq import heappush
from typing import Any

from flinktune.sim.buffers import plain_runs
from flinktune.sim.chunklog import ChunkLog
from flinktune.sim.kernel import LATE, NORMAL, Kernel

IDLE = 0
BUSY = 1
BACKPRESSURED = 2

# A source emits records in chunks of at most this much of its own time (latency granularity).
SOURCE_CHUNK_S = 0.00025
# Records of one size are written in bulk when at least this many fit into a buffer; with fewer,
# nearly every record needs a new buffer and the plain per-record loop is cheaper.
BULK_RECORDS_PER_BUFFER = 4
# ... and when the pending records are several per subpartition (a few records are cheaper one by one).
BULK_RECORDS_PER_SUB = 3


class Task:
    __slots__ = (
        "acc",
        "align_start",
        "alignment_s",
        "buffer_overhead_s",
        "capacity",
        "checkpoints_done",
        "chunk_busy_s",
        "chunk_due_s",
        "chunk_log",
        "chunk_speed",
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
        "wake_fifo",
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
        self.wake_fifo = kernel.fifo(0.0, NORMAL)
        self.due_pending = False
        # records waiting to be written: parallel lists (target subpartition, bytes, source time)
        self.p_targets: list[int] = []
        self.p_sizes: list[int] = []
        self.p_tsrc: list[float] | None = []
        # the pending records' common source time (None: they differ, see p_tsrc)
        self.tsrc_one: float | None = None
        # every record this many bytes: the writer can move a whole chunk in one step
        self.fixed_size: int | None = sizes.fixed_bytes if sizes is not None else None
        # sources of one record size over HASH with enough records per buffer log the chunks that
        # only append (flinktune.sim.chunklog); with fewer, nearly every chunk needs a buffer
        self.chunk_log: ChunkLog | None = None
        # the last chunk's timing, for the next one when nothing changed (speed, busy, next due);
        # speed 0 when the next chunk cannot simply follow (a rate below the speed, flush costs)
        self.chunk_speed = 0.0
        self.chunk_busy_s = 0.0
        self.chunk_due_s = 0.0
        size = self.fixed_size
        if (is_source and part is not None and size is not None and not flush_always
                and router.strategy == "HASH" and 1 < len(part.subs) <= 256
                and part.seg >= BULK_RECORDS_PER_BUFFER * size):
            self.chunk_log = ChunkLog(part, router, size)
        self.strict_fifo = False
        self.pi = 0
        self.partial: tuple[Any, int, int, float, float] | None = None
        self.next_due = 0.0
        self.stopped = False
        self.deferred_barriers: list[int] = []
        self.align_start = 0.0
        self.alignment_s = 0.0
        self.checkpoints_done = 0
        self.records_out = 0
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

    # The input counters are the sums of the gate's channel counters (a slice reaches a task only
    # through its gate), summed when sampled instead of kept twice per buffer.
    @property
    def records_in(self) -> int:
        gate = self.gate
        return sum(c.records_in for c in gate.channels) if gate is not None else 0

    def input_counts(self) -> tuple[int, int, int, int]:
        """(bytes in local, bytes in remote, buffers in local, buffers in remote)."""
        bytes_local = bytes_remote = buffers_local = buffers_remote = 0
        gate = self.gate
        if gate is not None:
            for channel in gate.channels:
                if channel.remote:
                    bytes_remote += channel.bytes_in
                    buffers_remote += channel.buffers_in
                else:
                    bytes_local += channel.bytes_in
                    buffers_local += channel.buffers_in
        return bytes_local, bytes_remote, buffers_local, buffers_remote

    def wake(self) -> None:
        if not self.wake_pending:
            self.wake_pending = True
            kernel = self.kernel  # kernel.schedule(0.0, self._wake, None, NORMAL), without the heap (hot)
            self.wake_fifo.append((kernel.now, NORMAL, kernel.next_seq(), self._wake, None))

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
        if (self.pi < len(self.p_targets) or self.partial is not None) and not self._emit():
            self.waiting_output = True
            if self.state != BACKPRESSURED:
                self._enter(BACKPRESSURED)
            return
        self.waiting_output = False
        if self.is_source:
            self._next_chunk()
        else:
            self._next_buffer()

    def _next_chunk(self) -> None:
        """Sources: start producing the next chunk of records, or idle until it is due."""
        if self.stopped:
            if self.state != IDLE:
                self._enter(IDLE)
            return
        kernel = self.kernel
        speed = self.capacity * self.factor
        if speed <= 0.0:
            # paused: look again when the schedule may have changed
            self._idle_until(kernel.now + 0.01)
            return
        now = kernel.now
        if now < self.next_due - 1e-12:
            self._idle_until(self.next_due)
            return
        rate = self.rate
        pace = rate if rate is not None and rate < speed else speed
        n = int(speed * SOURCE_CHUNK_S)
        if n < 1:
            n = 1
        elif n > 4096:
            n = 4096
        busy_s = n / speed
        due_s = n / pace
        if self.flush_always:
            busy_s += n * self.flush_overhead_s
            self.chunk_speed = 0.0
        else:
            self.chunk_speed = speed if pace == speed else 0.0
            self.chunk_busy_s = busy_s
            self.chunk_due_s = due_s
        debt = self.flush_debt_s
        if debt:
            busy_s += debt
            self.flush_debt_s = 0.0
        self.next_due = now + due_s
        self.acc[self.state] += now - self.since  # _enter(BUSY), inlined on the hottest path
        self.state = BUSY
        self.since = now
        # kernel.schedule(busy_s, self._source_done, n), inlined (hot)
        heappush(kernel.heap, (now + busy_s, NORMAL, kernel.next_seq(), self._source_done, n))

    def _next_buffer(self) -> None:
        """Operators: start processing the next input buffer, or wait for input or output."""
        part = self.part
        gate = self.gate
        while True:
            if part is not None and (part.used >= part.pool_size or part.unavail_subs):  # not available()
                self.waiting_output = True
                if self.state != BACKPRESSURED:
                    self._enter(BACKPRESSURED)
                return
            sl = gate.next_slice() if gate.avail else None
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
            debt = self.flush_debt_s
            if debt:
                busy_s += debt
                self.flush_debt_s = 0.0
            kernel = self.kernel
            now = kernel.now
            self.acc[self.state] += now - self.since  # _enter(BUSY), inlined (once per buffer)
            self.state = BUSY
            self.since = now
            # kernel.schedule(busy_s, self._slice_done, sl), inlined (hot)
            heappush(kernel.heap, (now + busy_s, NORMAL, kernel.next_seq(), self._slice_done, sl))
            return

    def _idle_until(self, when: float) -> None:
        if self.state != IDLE:
            self._enter(IDLE)
        if not self.due_pending:
            self.due_pending = True
            self.kernel.at(when, self._due, None, NORMAL)

    def _source_done(self, n: int) -> None:
        log = self.chunk_log
        # worth it with several records per subpartition and chunk (as for the bulk write): with
        # fewer, nearly every chunk needs a buffer somewhere and logging costs more than it saves
        if log is not None and not self.stopped and n >= BULK_RECORDS_PER_SUB * log.n_subs:
            if log.stale:
                log.plan()
            router = self.router
            start = router._i
            end = start + n
            now = self.kernel.now
            logged = False
            if end <= len(router._buf) and (n == log.n or not log.times):
                if end <= log.slow:
                    if log.times:
                        log.times.append(now)  # log.add(), the common case
                    else:
                        log.add(start, n, now)
                    logged = True
                else:
                    logged = log.write_slow(start, end, now)
            if logged:
                # same counters and states as writing it record by record (below)
                router._i = end
                self.records_out += n
                self.part.bytes_out += n * log.size
                self.tsrc_one = now
                self.waiting_output = False
                speed = self.chunk_speed
                if speed and speed == self.capacity * self.factor and not self.flush_debt_s:
                    # the next chunk as _next_chunk() would start it: same speed, no debt, the
                    # source keeps busy (_enter(IDLE) and back to BUSY at the same instant)
                    self.acc[BUSY] += now - self.since
                    self.since = now
                    self.next_due = now + self.chunk_due_s
                    kernel = self.kernel
                    done = now + self.chunk_busy_s
                    heappush(kernel.heap, (done, NORMAL, kernel.next_seq(), self._source_done, n))
                    return
                self.acc[self.state] += now - self.since  # _enter(IDLE), then step() -> BUSY again
                self.state = IDLE
                self.since = now
                self._next_chunk()
                return
            # written in full, after the log; the buffers it changes need a new plan
            if self.part.logged is not None:
                log.sync_all()
            log.stale = True
        else:
            if log is not None:
                if self.part.logged is not None:
                    log.sync_all()
                log.stale = True
            now = self.kernel.now
        self.acc[self.state] += now - self.since  # _enter(IDLE), inlined on the hottest path
        self.state = IDLE
        self.since = now
        self.pi = 0
        part = self.part
        if part is None:
            self.records_out += n
        else:
            self.p_targets = self.router.draw(n)
            self.p_tsrc = None
            self.tsrc_one = now
            size = self.fixed_size
            if size is None or self.flush_always:
                self.p_sizes = self.sizes.draw(n)
            else:
                # what step() -> _emit() would do first, without the two calls
                self.p_sizes = None
                if not self._emit_fixed(part, now, False, 0, n, size, now):
                    self.waiting_output = True
                    self._enter(BACKPRESSURED)
                    return
        self.step()

    def _slice_done(self, sl: Any) -> None:
        now = self.kernel.now
        channel = sl.channel
        recs = sl.recs
        n = sl.n
        channel.bytes_in += sl.nbytes
        channel.buffers_in += 1
        channel.records_in += n
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
                for seq0, count, t_emit, t_src in plain_runs(recs):
                    for _ in range((-seq0) % every, count, every):
                        lat_c.append(now - t_emit)
                        lat_v.append(now - t_src)
        channel.recycle(sl)
        if self.part is not None and n:
            self.p_targets = self.router.draw(n)
            self.p_sizes = self.sizes.draw(n) if self.fixed_size is None else None
            recs = plain_runs(recs)
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
        self.acc[self.state] += now - self.since  # _enter(IDLE), inlined (once per buffer)
        self.state = IDLE
        self.since = now
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
        if size is not None and tsrc_one is not None and not self.flush_always:
            return self._emit_fixed(part, now, soft, pi, end, size, tsrc_one)
        sizes = self.p_sizes
        if sizes is None:
            sizes = self.p_sizes = [self.fixed_size] * end
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

    def _emit_fixed(self, part: Any, now: float, soft: bool, pi: int, end: int, size: int,
                    t_src: float) -> bool:
        """``_emit`` for records of one size and one source time (sources, most operators).

        Between two records that need a buffer requested or finished ("slow" ones), writing a
        record only appends it to its subpartition's current buffer: nothing is notified, no pool
        state changes, so the order among those records does not matter and each subpartition's
        share can be appended as one run (same sequence numbers, sizes and times as one by one).
        Slow records go through ``ResultPartition.write`` one at a time, in order. With few
        records per subpartition, or few per buffer, the plain loop is cheaper.
        """
        targets = self.p_targets
        subs = part.subs
        seg = part.seg
        start = pi
        try:
            n_subs = len(subs)
            if end - pi < BULK_RECORDS_PER_SUB * n_subs or seg < BULK_RECORDS_PER_BUFFER * size:
                while pi < end:
                    if soft and (part.used >= part.pool_size or part.unavail_subs):
                        return False
                    sub = subs[targets[pi]]
                    seq = sub.next_seq
                    sub.next_seq = seq + 1
                    cur = sub.cur
                    if cur is not None and cur.size + size < seg:
                        cur.size += size
                        cur.nrec += 1
                        cur.recs.append((seq, 1, now, t_src))
                    else:
                        remaining = part.write(sub, size, seq, now, t_src)
                        if remaining:
                            self.partial = (sub, remaining, seq, now, t_src)
                            part.bytes_out += size
                            return False
                    pi += 1
                return True
            limit = seg - 1  # a record is fast while cur.size + size <= seg - 1
            while pi < end:
                if soft and (part.used >= part.pool_size or part.unavail_subs):
                    return False
                chunk = targets[pi:end] if pi else targets
                n = end - pi
                first_slow = n
                slow: list[int] | None = None
                count = chunk.count
                # optimistic: write each subpartition's whole share as one run ... (at least three
                # records per subpartition here: counting each is cheaper than a set of the keys)
                for j in range(n_subs):
                    k = count(j)
                    if not k:
                        continue
                    sub = subs[j]
                    cur = sub.cur
                    if cur is not None and cur.size + k * size < seg:
                        seq = sub.next_seq
                        sub.next_seq = seq + k
                        cur.size += k * size
                        cur.nrec += k
                        cur.recs.append((seq, k, now, t_src))
                        continue
                    # the (fast + 1)-th record for this subpartition needs a new buffer
                    fast = (limit - cur.size) // size if cur is not None else 0
                    pos = chunk.index(j)
                    for _ in range(fast):
                        pos = chunk.index(j, pos + 1)
                    if pos < first_slow:
                        first_slow = pos
                    if slow is None:
                        slow = [j]
                    else:
                        slow.append(j)
                if slow is not None:
                    # ... unless a record needs a buffer: then only the records before the first
                    # such one are written now (take back the rest, add the slow ones' share)
                    suffix = chunk[first_slow:]
                    for j in set(suffix):
                        if j in slow:
                            continue
                        back = suffix.count(j)
                        sub = subs[j]
                        cur = sub.cur
                        recs = cur.recs
                        seq, k, _, _ = recs[-1]
                        sub.next_seq -= back
                        cur.size -= back * size
                        cur.nrec -= back
                        if back == k:
                            recs.pop()
                        else:
                            recs[-1] = (seq, k - back, now, t_src)
                    prefix = chunk[:first_slow]
                    for j in slow:
                        k = prefix.count(j)
                        if k:
                            sub = subs[j]
                            cur = sub.cur
                            seq = sub.next_seq
                            sub.next_seq = seq + k
                            cur.size += k * size
                            cur.nrec += k
                            cur.recs.append((seq, k, now, t_src))
                pi += first_slow
                if pi == end:
                    break
                sub = subs[targets[pi]]
                seq = sub.next_seq
                sub.next_seq = seq + 1
                remaining = part.write(sub, size, seq, now, t_src)
                if remaining:
                    self.partial = (sub, remaining, seq, now, t_src)
                    part.bytes_out += size
                    return False
                pi += 1
            return True
        finally:
            # pi: the first record not written (end when all were)
            done = pi - start
            self.records_out += done
            part.bytes_out += done * size
            if pi == end:
                self.p_targets = []
                self.pi = 0
            else:
                self.pi = pi

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
            if self.chunk_log is not None:
                self.chunk_log.stale = True  # every buffer was cut

    def stop(self, _: Any = None) -> None:
        self.stopped = True
        self.kernel.schedule(0.0, self._wake, None, LATE)
