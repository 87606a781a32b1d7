"""The job's checkpoint statistics beside the dump (``checkpoints.json``, analysis/checkpoints.py).

REST: ``GET /jobs/:jobid/checkpoints`` at every poll. Flink keeps only the last
``web.checkpoints.history`` checkpoints (10 by default) in that answer, so every entry seen is kept
and the file is rewritten when something new arrived: a collection killed outright still leaves the
checkpoints seen so far. A job without checkpointing answers with an error (Flink: "Checkpointing
has not been enabled"); then no file is written and the metrics are collected as before.

Prometheus: the JobManager's job-scoped gauges (``flink_jobmanager_job_lastCheckpointDuration``,
...) over the same range, one ``query_range`` each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flinktune.analysis.checkpoints import (
    CHECKPOINTS_FILE,
    JOB_GAUGES,
    Checkpoint,
    CheckpointCounts,
    CheckpointLog,
    from_gauge_samples,
    from_rest_history,
    merge,
    to_document,
)
from flinktune.collect.writer import write_json_atomic
from flinktune.errors import CollectError


class RestCheckpoints:
    """Reads ``/jobs/:jobid/checkpoints`` once per poll and keeps ``checkpoints.json`` current."""

    def __init__(self, get_json: Callable[[str], Any], job_id: str, job_name: str, out_dir: Path) -> None:
        self._get = get_json
        self.job_id = job_id
        self.job_name = job_name
        self.path = out_dir / CHECKPOINTS_FILE
        self.checkpoints: list[Checkpoint] = []
        self.counts: list[CheckpointCounts] = []
        self.enabled = True
        self._failures = 0
        self._written = False
        self._dirty = False

    def poll(self, ts_ms: int) -> None:
        """One read; a failure stops further reads (checkpointing off) but never the collection."""
        if not self.enabled:
            return
        try:
            answer = self._get(f"/jobs/{self.job_id}/checkpoints")
        except CollectError as error:
            # 404: Flink's "Checkpointing has not been enabled"; otherwise give up after a few
            # failures in a row if nothing was ever read.
            self._failures += 1
            if getattr(error, "status", None) == 404 or (self._failures >= 3 and not self._written):
                self.enabled = False
            return
        self._failures = 0
        if not isinstance(answer, Mapping):
            return
        before = self.checkpoints
        self.checkpoints = merge(before, from_rest_history(answer.get("history") or []))
        counts = answer.get("counts") if isinstance(answer.get("counts"), Mapping) else {}

        def count(name: str) -> int | None:
            value = counts.get(name)
            return int(value) if isinstance(value, int) and not isinstance(value, bool) else None

        self.counts.append(CheckpointCounts(ts_ms, count("completed"), count("failed"), count("in_progress")))
        self._dirty = True
        if self.checkpoints != before or not self._written:
            self.write()

    def log(self) -> CheckpointLog:
        return CheckpointLog(self.job_id, self.job_name, "rest", tuple(self.checkpoints), tuple(self.counts))

    def write(self) -> None:
        """checkpoints.json now (atomic); the first write of a collection keeps an older file as .bak."""
        write_json_atomic(self.path, to_document(self.log()), backup=not self._written)
        self._written = True
        self._dirty = False

    def finish(self) -> Path | None:
        if self._dirty:
            self.write()
        return self.path if self._written else None


def prometheus_log(
    query: Callable[[str], list[tuple[int, float]]], job_id: str, job_name: str
) -> CheckpointLog | None:
    """The checkpoints of one job from the JobManager's gauges: ``query(gauge)`` returns the
    (ts_ms, value) samples of ``flink_jobmanager_job_<gauge>`` for the job. None when Prometheus
    has none of them (checkpointing off, or the JobManager not scraped)."""
    samples: dict[int, dict[str, float]] = {}
    for gauge in JOB_GAUGES:
        for ts, value in query(gauge):
            samples.setdefault(int(ts), {})[gauge] = value
    if not samples:
        return None
    checkpoints, counts = from_gauge_samples(samples.items())
    return CheckpointLog(job_id, job_name, "prometheus", tuple(checkpoints), tuple(counts))


def write_log(out_dir: Path, log: CheckpointLog) -> Path:
    path = out_dir / CHECKPOINTS_FILE
    write_json_atomic(path, to_document(log))
    return path


def job_gauge_name(gauge: str) -> str:
    """The Prometheus name of a JobManager job-scoped gauge (AbstractPrometheusReporter: ``flink_``
    + the logical scope ``jobmanager_job`` + the name)."""
    return f"flink_jobmanager_job_{gauge}"
