"""A dump's checkpoint statistics: ``checkpoints.json`` beside the metrics (docs/metrics-schema.md).

Checkpoints are the JobManager's, one per job, not a subtask's time series, so they do not fit the
long table: ``flinktune collect`` writes them beside the dump, as ``plan.json`` is. Two sources:

- the REST API's ``/jobs/:jobid/checkpoints``: the ``history`` of recent checkpoints (each with
  its id, status, trigger and last-acknowledgement times, end-to-end duration and sizes; Flink keeps
  ``web.checkpoints.history`` of them, 10 by default, so ``collect`` reads it at every poll and keeps
  every one it saw) and the ``counts``;
- the JobManager's job-scoped gauges (``lastCheckpointDuration``, ``lastCheckpointSize``,
  ``lastCheckpointFullSize``, ``lastCompletedCheckpointId``, ``numberOfCompletedCheckpoints``,
  ``numberOfFailedCheckpoints``, ...) as Prometheus keeps them: a checkpoint shows as a new
  ``lastCompletedCheckpointId`` (or a higher ``numberOfCompletedCheckpoints``) between two samples,
  with the duration and sizes the gauges held then. Checkpoints completed between two samples of the
  same scrape are not seen (the gauges hold only the last one).

Names checked in the flink-dist jars of 1.20.5 and 2.3.0 (CheckpointStatsTracker /
DefaultCheckpointStatsTracker constants) and Flink's docs/ops/metrics.md: ``lastCheckpointFullSize``
(the full size; ``lastCheckpointSize`` is then the checkpointed, possibly incremental, size) and
``lastCompletedCheckpointId`` are not in every older release; each is optional here.
Pure functions and values; no Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinktune.errors import MetricsError

CHECKPOINTS_FILE = "checkpoints.json"
FORMAT = 1

# The JobManager's job-scoped checkpoint gauges (Prometheus: flink_jobmanager_job_<name>).
JOB_GAUGES: tuple[str, ...] = (
    "lastCheckpointDuration",
    "lastCheckpointSize",
    "lastCheckpointFullSize",
    "lastCompletedCheckpointId",
    "numberOfCompletedCheckpoints",
    "numberOfFailedCheckpoints",
    "numberOfInProgressCheckpoints",
    "totalNumberOfCheckpoints",
)


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint as the JobManager reported it. Times in epoch ms, sizes in bytes; None where
    the source does not say (older Flink, or the gauges)."""

    id: int | None
    status: str  # COMPLETED | FAILED | IN_PROGRESS
    savepoint: bool
    trigger_ms: int | None
    ack_ms: int | None  # the last acknowledgement (completion); for the gauges: first seen
    duration_ms: float | None  # end to end
    full_size_bytes: float | None  # the whole state (REST state_size, lastCheckpointFullSize)
    checkpointed_size_bytes: float | None  # what this checkpoint persisted (incremental)
    unaligned: bool | None = None

    @property
    def started_ms(self) -> float | None:
        """When its barriers were injected: the trigger, else (from Prometheus, which has no trigger
        time) its completion less its duration."""
        if self.trigger_ms is not None:
            return self.trigger_ms
        if self.ack_ms is not None and self.duration_ms is not None:
            return self.ack_ms - self.duration_ms
        return None


@dataclass(frozen=True)
class CheckpointCounts:
    ts_ms: int
    completed: int | None
    failed: int | None
    in_progress: int | None


@dataclass(frozen=True)
class CheckpointLog:
    job_id: str | None
    job_name: str | None
    source: str  # "rest" | "prometheus"
    checkpoints: tuple[Checkpoint, ...]
    counts: tuple[CheckpointCounts, ...] = ()

    def completed_between(
        self, start_ms: int | None, end_ms: int | None, *, started_inside: bool = False
    ) -> tuple[Checkpoint, ...]:
        """Completed checkpoints (no savepoints) that completed in [start_ms, end_ms] (while the
        metrics analysed were recorded; a checkpoint triggered just before the window still ends
        in it), in completion order. ``started_inside``: only those triggered at or after
        ``start_ms`` too (a checkpoint's duration reflects the in-flight data when its barrier
        was injected, so one triggered during a warm-up measures the warm-up)."""
        out = []
        for c in self.checkpoints:
            if c.status != "COMPLETED" or c.savepoint or c.duration_ms is None:
                continue
            done = c.ack_ms if c.ack_ms is not None else (
                int(c.trigger_ms + c.duration_ms) if c.trigger_ms is not None else None)
            if done is None:
                continue
            if (start_ms is not None and done < start_ms) or (end_ms is not None and done > end_ms):
                continue
            if started_inside and start_ms is not None:
                started = c.started_ms
                if started is not None and started < start_ms:
                    continue
            out.append((done, c))
        return tuple(c for _done, c in sorted(out, key=lambda pair: (pair[0], pair[1].id or 0)))

    def failed_between(self, start_ms: int | None, end_ms: int | None) -> int | None:
        """Checkpoints that failed in the window: from the counts at its ends when there are
        counts, else the FAILED entries of the history; None when neither says."""
        inside = [
            c
            for c in self.counts
            if c.failed is not None
            and (start_ms is None or c.ts_ms >= start_ms)
            and (end_ms is None or c.ts_ms <= end_ms)
        ]
        if len(inside) >= 2:
            return max(0, int(inside[-1].failed or 0) - int(inside[0].failed or 0))
        if self.source != "rest":
            return None
        return sum(
            1
            for c in self.checkpoints
            if c.status == "FAILED"
            and c.trigger_ms is not None
            and (start_ms is None or c.trigger_ms >= start_ms)
            and (end_ms is None or c.trigger_ms <= end_ms)
        )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if f == f and abs(f) != float("inf") and f >= 0 else None


def _int(value: Any) -> int | None:
    f = _number(value)
    return int(f) if f is not None else None


def from_rest_history(entries: Iterable[Mapping[str, Any]]) -> list[Checkpoint]:
    """Checkpoints from ``/jobs/:jobid/checkpoints`` ``history`` entries (CheckpointStatistics:
    ``id``, ``status``, ``is_savepoint``, ``trigger_timestamp``, ``latest_ack_timestamp``,
    ``end_to_end_duration``, ``state_size``, ``checkpointed_size`` (1.15+), ``unaligned`` or
    ``checkpoint_type``). Entries without an id are skipped."""
    out = []
    for e in entries:
        if not isinstance(e, Mapping) or _int(e.get("id")) is None:
            continue
        status = str(e.get("status", "")).upper()
        ack = _int(e.get("latest_ack_timestamp"))
        kind = str(e.get("checkpoint_type", "")).upper()
        unaligned = (
            e.get("unaligned")
            if isinstance(e.get("unaligned"), bool)
            else (True if "UNALIGNED" in kind else (False if kind else None))
        )
        full = _number(e.get("state_size"))
        out.append(
            Checkpoint(
                id=_int(e.get("id")),
                status=status,
                savepoint=bool(e.get("is_savepoint")) or "SAVEPOINT" in kind,
                trigger_ms=_int(e.get("trigger_timestamp")),
                ack_ms=ack if ack and ack > 0 else None,
                duration_ms=_number(e.get("end_to_end_duration")) if status == "COMPLETED" else None,
                full_size_bytes=full,
                checkpointed_size_bytes=_number(e.get("checkpointed_size"))
                if "checkpointed_size" in e
                else full,
                unaligned=unaligned,
            )
        )
    return out


def merge(known: Sequence[Checkpoint], seen: Iterable[Checkpoint]) -> list[Checkpoint]:
    """``known`` updated with ``seen`` by id (a later answer replaces an in-progress entry)."""
    by_id: dict[int | None, Checkpoint] = {c.id: c for c in known}
    for c in seen:
        old = by_id.get(c.id)
        if old is None or old.status != "COMPLETED" or c.status == "COMPLETED":
            by_id[c.id] = c
    return sorted(by_id.values(), key=lambda c: c.id or 0)


def from_gauge_samples(
    samples: Iterable[tuple[int, Mapping[str, float]]],
) -> tuple[list[Checkpoint], list[CheckpointCounts]]:
    """Checkpoints and counts from the JobManager's gauges sampled over time: (ts_ms, {gauge: value})
    in any order. A checkpoint is a new ``lastCompletedCheckpointId`` or, without it, a higher
    ``numberOfCompletedCheckpoints`` than the previous sample's (the first sample's last checkpoint
    completed before the range: it is kept only when it completed inside it, which the gauges cannot
    tell, so it is not)."""
    ordered = sorted(samples, key=lambda s: s[0])
    checkpoints: list[Checkpoint] = []
    counts: list[CheckpointCounts] = []
    previous: tuple[float | None, float | None] | None = None
    for ts, g in ordered:
        cid = _number(g.get("lastCompletedCheckpointId"))
        done = _number(g.get("numberOfCompletedCheckpoints"))
        counts.append(
            CheckpointCounts(
                int(ts),
                _int(done),
                _int(g.get("numberOfFailedCheckpoints")),
                _int(g.get("numberOfInProgressCheckpoints")),
            )
        )
        marker = (cid, done if cid is None else None)
        if previous is not None and marker != previous and any(m is not None for m in marker):
            newer = (cid is not None and (previous[0] is None or cid > previous[0])) or (
                cid is None and done is not None and (previous[1] is None or done > previous[1])
            )
            duration = _number(g.get("lastCheckpointDuration"))
            if newer and duration is not None:
                full = _number(g.get("lastCheckpointFullSize"))
                size = _number(g.get("lastCheckpointSize"))
                checkpoints.append(
                    Checkpoint(
                        id=int(cid) if cid is not None else None,
                        status="COMPLETED",
                        savepoint=False,
                        trigger_ms=int(ts - duration),
                        ack_ms=int(ts),
                        duration_ms=duration,
                        full_size_bytes=full if full is not None else size,
                        checkpointed_size_bytes=size,
                        unaligned=None,
                    )
                )
        if any(m is not None for m in marker):
            previous = marker
    return checkpoints, counts


def to_document(log: CheckpointLog) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "job_id": log.job_id,
        "job_name": log.job_name,
        "source": log.source,
        "checkpoints": [
            {
                "id": c.id,
                "status": c.status,
                "savepoint": c.savepoint,
                "trigger_ms": c.trigger_ms,
                "ack_ms": c.ack_ms,
                "duration_ms": c.duration_ms,
                "full_size_bytes": c.full_size_bytes,
                "checkpointed_size_bytes": c.checkpointed_size_bytes,
                "unaligned": c.unaligned,
            }
            for c in log.checkpoints
        ],
        "counts": [
            {"ts_ms": c.ts_ms, "completed": c.completed, "failed": c.failed, "in_progress": c.in_progress}
            for c in log.counts
        ],
    }


def from_document(doc: Any, file: str) -> CheckpointLog:
    """The document ``to_document`` writes; anything else is one MetricsError naming the file."""
    ours = isinstance(doc, Mapping) and doc.get("format") == FORMAT
    if not ours or not isinstance(doc.get("checkpoints"), list):
        raise MetricsError(
            f'not a flinktune checkpoints file (expected "format": {FORMAT} and a "checkpoints" list)',
            file=file,
        )
    checkpoints = []
    for i, e in enumerate(doc["checkpoints"]):
        if not isinstance(e, Mapping) or not isinstance(e.get("status"), str):
            raise MetricsError(f'checkpoints[{i}] is not a checkpoint (needs a "status")', file=file)
        unaligned = e.get("unaligned")
        checkpoints.append(
            Checkpoint(
                id=_int(e.get("id")),
                status=e["status"].upper(),
                savepoint=e.get("savepoint") is True,
                trigger_ms=_int(e.get("trigger_ms")),
                ack_ms=_int(e.get("ack_ms")),
                duration_ms=_number(e.get("duration_ms")),
                full_size_bytes=_number(e.get("full_size_bytes")),
                checkpointed_size_bytes=_number(e.get("checkpointed_size_bytes")),
                unaligned=unaligned if isinstance(unaligned, bool) else None,
            )
        )
    counts = [
        CheckpointCounts(
            int(c["ts_ms"]), _int(c.get("completed")), _int(c.get("failed")), _int(c.get("in_progress"))
        )
        for c in doc.get("counts") or []
        if isinstance(c, Mapping) and _int(c.get("ts_ms")) is not None
    ]
    job_id, job_name = doc.get("job_id"), doc.get("job_name")
    return CheckpointLog(
        job_id if isinstance(job_id, str) else None,
        job_name if isinstance(job_name, str) else None,
        str(doc.get("source", "rest")),
        tuple(checkpoints),
        tuple(counts),
    )


def read(path: str | Path) -> CheckpointLog:
    from flinktune.config.safe_load import load_json

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise MetricsError(
            f"cannot read checkpoints file: {getattr(error, 'strerror', None) or error}", file=str(p)
        ) from None
    return from_document(
        load_json(text, file=str(p), prefix="checkpoints file is not valid JSON", error=MetricsError), str(p)
    )


def find_beside(inputs: Sequence[str]) -> Path | None:
    """A ``checkpoints.json`` in the dump's folder (or the folder itself when a folder is given)."""
    for item in inputs:
        p = Path(item)
        folder = p if p.is_dir() else p.parent
        candidate = folder / CHECKPOINTS_FILE
        if candidate.is_file():
            return candidate
    return None
