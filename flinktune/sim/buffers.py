"""Network buffers as the simulator sees them: the sender's buffer and the slice that travels.

Records are kept as runs ``(first_seq, count, t_emit_s, t_source_s)``: ``count`` records with
consecutive ``seq`` written together (one source chunk into one buffer is one run, which is what
lets the writer move a whole chunk in one step). A record lives in the buffer holding its last
byte, so a record that spans buffers is counted once, when its last byte is deserialised; ``seq``
numbers records per channel (FIFO checks), ``t_emit_s`` is when it was written into this channel,
``t_source_s`` when the source created it.
"""

from __future__ import annotations

from typing import Any


class Buf:
    """One pooled network buffer in a result subpartition (BufferBuilder + BufferConsumer)."""

    __slots__ = ("event", "finished", "nrec", "popped", "read", "recs", "refs", "ri", "rn", "size")

    def __init__(self, event: int | None = None) -> None:
        self.size = 0          # bytes written by the RecordWriter
        self.read = 0          # bytes already handed on (Netty or a local reader)
        self.finished = event is not None
        self.recs: list[tuple[int, int, float, float]] = []  # runs, see above
        self.ri = 0            # runs already handed on
        self.nrec = 0          # records in the runs
        self.rn = 0            # records already handed on
        self.event = event     # checkpoint id for a barrier (events are not pooled)
        self.refs = 0          # slices of this buffer not yet released
        self.popped = False    # removed from the subpartition queue


class Slice:
    """What one hand-over carries: the readable bytes of a buffer (or one event) and its records."""

    __slots__ = ("backlog", "buf", "channel", "event", "floating", "n", "nbytes", "recs")

    def __init__(self, buf: Buf | None, nbytes: int, recs: list[tuple[int, int, float, float]], n: int,
                 event: int | None, channel: Any) -> None:
        self.buf = buf
        self.nbytes = nbytes
        self.recs = recs       # runs of records, see above
        self.n = n             # records in the runs
        self.event = event
        self.channel = channel
        self.floating = False  # which receiver buffer it occupies (credit mode)
        self.backlog = 0       # sender backlog announced with it


class LoggedRun:
    """The times of a run written from several logged source chunks (flinktune.sim.chunklog).

    Stands in a run ``(first_seq, count, self, self)`` for the records of subpartition ``index``
    in the chunks whose keys start at ``keys[first]``, ``n`` keys and one completion time each.
    """

    __slots__ = ("first", "index", "keys", "n", "times")

    def __init__(self, keys: bytes, first: int, n: int, times: list[float], index: int) -> None:
        self.keys = keys
        self.first = first
        self.n = n
        self.times = times
        self.index = index

    def runs(self, seq: int) -> list[tuple[int, int, float, float]]:
        """One plain run per chunk that holds records of this subpartition, from ``seq`` on."""
        out = []
        count = self.keys.count
        index = self.index
        n = self.n
        at = self.first
        for t in self.times:
            k = count(index, at, at + n)
            if k:
                out.append((seq, k, t, t))
                seq += k
            at += n
        return out


def plain_runs(recs: list[Any]) -> list[tuple[int, int, float, float]]:
    """``recs`` with every logged run expanded into plain ones (the same list when there are none)."""
    if not any(run[2].__class__ is LoggedRun for run in recs):
        return recs
    out: list[tuple[int, int, float, float]] = []
    for run in recs:
        logged = run[2]
        if logged.__class__ is LoggedRun:
            out += logged.runs(run[0])
        else:
            out.append(run)
    return out
