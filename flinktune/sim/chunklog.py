"""A source's chunks that only append to buffers, logged instead of written one by one.

A source writes a chunk of records (flinktune.sim.task) every few hundred microseconds. Most
chunks only append records to the subpartitions' current buffers: no buffer is requested or
finished, nothing is notified and no pool changes. Nothing decides anything on such a chunk
until someone looks at a buffer, so the chunk's event only logs its completion time (its keys
are already drawn, in the router's block) and the records reach the buffers when they are
looked at: a read of the buffer (``Subpartition.poll``), the flusher, a barrier, or the next
chunk that does need a buffer. Each reader then gets exactly the records, sequence numbers and
times the chunk-by-chunk writes would have produced; only the runs are coarser (one per
subpartition and look, expanded per chunk when a latency sample or a downstream operator needs
the times, see ``LoggedRun``).

Which chunks only append is known in advance: records have one size, so a subpartition's current
buffer takes ``(segment - 1 - size_written) // record_size`` more records before one needs a new
buffer (or fills it exactly, which finishes it), and the router's block says at which key
position that record comes. A chunk whose keys all come before the earliest such position (and
inside the drawn block: a refill draws from the shared random generator, in event order) is
logged; any other chunk is written as before, after the log.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

import numpy as np

from flinktune.sim.buffers import LoggedRun


class ChunkLog:
    """The logged chunks of one source subtask and where its next chunk must be written in full."""

    __slots__ = ("base", "key0", "keys", "n", "n_subs", "part", "pos_keys", "positions", "router", "size",
                 "slow", "stale", "times")

    def __init__(self, part: Any, router: Any, size: int) -> None:
        self.part = part
        self.n_subs = len(part.subs)
        self.router = router
        self.size = size              # every record's bytes
        self.times: list[float] = []  # completion time of each logged chunk, in order
        self.base = 0                 # chunks logged before ``times[0]`` (subpartitions count in these)
        self.keys: bytes = b""        # the router's key block holding the logged chunks' keys
        self.key0 = 0                 # position in ``keys`` of the first logged chunk's first key
        self.n = 0                    # records per logged chunk
        self.slow = -1                # key position of the first record that needs a new buffer
        self.stale = True             # buffers changed: ``slow`` must be planned again
        self.pos_keys: bytes | None = None       # the key block ``positions`` index
        self.positions: list[list[int]] = []     # per subpartition: its key positions in the block

    def plan(self) -> None:
        """Find the first key position whose record needs a new buffer (nothing may be logged)."""
        self.stale = False
        part = self.part
        router = self.router
        keys = router._buf
        start = router._i
        positions = self.positions
        every = keys is not self.pos_keys
        if every:
            # per subpartition, the positions of its keys in the block (sorted): one numpy pass
            drawn = np.frombuffer(keys, dtype=np.uint8)
            order = np.argsort(drawn, kind="stable").tolist()
            bounds = np.cumsum(np.bincount(drawn, minlength=len(part.subs))).tolist()
            positions = self.positions = []
            low = 0
            for high in bounds:
                positions.append(order[low:high])
                low = high
            self.pos_keys = keys
        limit = part.seg - 1
        size = self.size
        end = len(keys)
        slow = end
        for sub in part.subs:
            cur = sub.cur
            if every or cur is not sub.log_cur:
                # records that still fit without filling the buffer; the next one is slow. The
                # position stays right while the buffer is the same (its records come in key order)
                sub.log_cur = cur
                fits = (limit - cur.size) // size if cur is not None else 0
                mine = positions[sub.index]
                k = bisect_left(mine, start) + fits
                sub.log_slow = mine[k] if k < len(mine) else end
            if sub.log_slow < slow:
                slow = sub.log_slow
        self.slow = slow

    def add(self, start: int, n: int, t: float) -> None:
        """Log a chunk of ``n`` records whose keys start at ``start``, completed at ``t``."""
        times = self.times
        if not times:
            self.keys = self.router._buf
            self.key0 = start
            self.n = n
            self.part.logged = self
        times.append(t)

    def write_slow(self, start: int, end: int, t: float) -> bool:
        """Log a chunk in which some records need a buffer, writing those subpartitions' records now.

        Only the subpartitions that need a buffer are written, their buffers requested and
        finished in key order, exactly as a record-by-record write does; the others' records are
        only appends and stay logged. False (nothing done) when the pool might run dry on the
        way: the chunk then blocks part-way and is written record by record.
        """
        part = self.part
        count = self.router._buf.count
        slow = [sub for sub in part.subs if sub.log_slow < end]
        # each record from the first slow one on requests at most one buffer (size <= segment / 4)
        needed = 0
        for sub in slow:
            needed += count(sub.index, sub.log_slow, end)
        if part.used + needed > part.pool_size:
            return False
        for sub in slow:
            self.sync(sub)
        if len(slow) == 1:
            sub = slow[0]
            at = start
            while sub.log_slow < end:
                at = self._write_through(sub, at, t)
            written = [at]
        else:
            # the records that need a buffer in key order across subpartitions
            written = [start] * len(slow)
            while True:
                i = min(range(len(slow)), key=lambda i: slow[i].log_slow)
                if slow[i].log_slow >= end:
                    break
                written[i] = self._write_through(slow[i], written[i], t)
        # the chunk is logged for the others (after the writes: a read they trigger syncs only
        # earlier chunks), and its rest written for these
        self.add(start, end - start, t)
        done = self.base + len(self.times)
        size = self.size
        for sub, at in zip(slow, written, strict=True):
            k = count(sub.index, at, end)
            if k:
                cur = sub.cur
                seq = sub.next_seq
                sub.next_seq = seq + k
                cur.size += k * size
                cur.nrec += k
                cur.recs.append((seq, k, t, t))
            sub.log_c = done
        self.slow = min(sub.log_slow for sub in part.subs)
        return True

    def _write_through(self, sub: Any, at: int, t: float) -> int:
        """Write ``sub``'s records from key position ``at`` to its next slow one; the position after."""
        slow = sub.log_slow
        index = sub.index
        keys = self.router._buf
        size = self.size
        cur = sub.cur
        k = keys.count(index, at, slow)
        seq = sub.next_seq
        if k:
            cur.size += k * size
            cur.nrec += k
            cur.recs.append((seq, k, t, t))
            seq += k
        sub.next_seq = seq + 1
        self.part.write(sub, size, seq, t, t)
        # plan the new buffer
        cur = sub.log_cur = sub.cur
        fits = (self.part.seg - 1 - cur.size) // size if cur is not None else 0
        mine = self.positions[index]
        k = bisect_left(mine, slow + 1) + fits
        sub.log_slow = mine[k] if k < len(mine) else len(keys)
        return slow + 1

    def sync(self, sub: Any) -> None:
        """Write ``sub``'s share of the logged chunks into its current buffer."""
        times = self.times
        c1 = len(times)
        c0 = sub.log_c - self.base
        if c0 >= c1:
            return
        if c0 < 0:
            c0 = 0  # not looked at since an earlier log
        sub.log_c = self.base + c1
        n = self.n
        first = self.key0 + c0 * n
        index = sub.index
        k = self.keys.count(index, first, self.key0 + c1 * n)
        if not k:
            return
        cur = sub.cur
        seq = sub.next_seq
        sub.next_seq = seq + k
        cur.size += k * self.size
        cur.nrec += k
        if c1 - c0 == 1:
            t = times[c0]
            cur.recs.append((seq, k, t, t))
        else:
            run = LoggedRun(self.keys, first, n, times[c0:c1], index)
            cur.recs.append((seq, k, run, run))

    def sync_all(self) -> None:
        """Write every logged chunk (before the source writes one itself, or anyone reads all buffers)."""
        times = self.times
        if times:
            subs = self.part.subs
            keys = self.keys
            # only the subpartitions that got records: the others' counters fall behind ``base``
            for index in set(keys[self.key0:self.key0 + len(times) * self.n]):
                self.sync(subs[index])
            self.base += len(times)
            self.times = []
        self.part.logged = None

