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
