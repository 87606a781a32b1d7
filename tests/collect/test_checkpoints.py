"""Checkpoint statistics beside the dump (checkpoints.json): from the REST API's checkpoint history
(the fake Flink of conftest.py) and from the JobManager's gauges as Prometheus keeps them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinktune.analysis import checkpoints as ckpt
from flinktune.collect import CollectOptions, RetryPolicy, collect
from flinktune.collect.checkpoints import job_gauge_name, prometheus_log
from flinktune.errors import MetricsError

from .conftest import checkpoint_entry  # type: ignore[import-not-found]

FAST_RETRY = RetryPolicy(attempts=3, initial_backoff_s=0.01, max_backoff_s=0.02, timeout_s=5.0)


def _collect(fake, tmp_path: Path, polls: int = 6):  # type: ignore[no-untyped-def]
    options = CollectOptions(
        url=fake.url,
        out_dir=tmp_path / "dump",
        interval_s=0.05,
        duration_s=0.05 * (polls - 1),
        retry=FAST_RETRY,
        job_id=fake.job_id,
    )
    return collect(options)


def test_every_checkpoint_seen_is_kept_beyond_flinks_history(fake_flink, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fake_flink.checkpoints_completed = 0
    fake_flink.history_size = 3  # Flink keeps web.checkpoints.history entries (10 by default)
    result = _collect(fake_flink, tmp_path)
    assert result.checkpoints_path == tmp_path / "dump" / ckpt.CHECKPOINTS_FILE
    log = ckpt.read(result.checkpoints_path)
    reads = sum(1 for p in fake_flink.requests if p.endswith("/checkpoints"))
    assert reads == result.polls
    completed = [c for c in log.checkpoints if c.status == "COMPLETED"]
    assert [c.id for c in completed] == list(range(1, reads + 1))  # more than any one answer held
    first = completed[0]
    entry = checkpoint_entry(1)
    assert (
        first.duration_ms == entry["end_to_end_duration"] and first.trigger_ms == entry["trigger_timestamp"]
    )
    assert (
        first.full_size_bytes == entry["state_size"]
        and first.checkpointed_size_bytes == entry["checkpointed_size"]
    )
    assert first.unaligned is False and not first.savepoint
    # The in-progress entry of the last read stays as such; earlier ones were replaced when they completed.
    assert [c.status for c in log.checkpoints if c.id == reads + 1] == ["IN_PROGRESS"]
    assert [c.completed for c in log.counts] == list(range(1, reads + 1))
    assert log.source == "rest" and log.job_id == fake_flink.job_id


def test_a_job_without_checkpointing_gets_no_file_and_one_request(fake_flink, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = _collect(fake_flink, tmp_path)
    assert result.checkpoints_path is None
    assert not (tmp_path / "dump" / ckpt.CHECKPOINTS_FILE).exists()
    assert sum(1 for p in fake_flink.requests if p.endswith("/checkpoints")) == 1
    assert result.metrics_path is not None  # the metrics are collected as before


def test_history_entries_of_older_and_newer_flink() -> None:
    old = {
        "id": 3,
        "status": "COMPLETED",
        "is_savepoint": False,
        "trigger_timestamp": 10,
        "latest_ack_timestamp": 30,
        "end_to_end_duration": 20,
        "state_size": 100,
    }  # 1.13/1.14: no checkpointed_size
    unaligned = {**checkpoint_entry(4), "checkpoint_type": "UNALIGNED_CHECKPOINT"}
    savepoint = {**checkpoint_entry(5), "is_savepoint": True, "checkpoint_type": "SAVEPOINT"}
    failed = {**checkpoint_entry(6, "FAILED"), "latest_ack_timestamp": -1}
    a, b, c, d = ckpt.from_rest_history([old, unaligned, savepoint, failed, {"status": "COMPLETED"}])
    assert a.checkpointed_size_bytes == a.full_size_bytes == 100 and a.unaligned is None
    assert b.unaligned is True and c.savepoint and d.status == "FAILED" and d.duration_ms is None
    log = ckpt.CheckpointLog("j", "n", "rest", (a, b, c, d))
    assert [x.id for x in log.completed_between(None, None)] == [3, 4]  # no savepoint, no failure
    assert log.failed_between(None, None) == 1


def test_checkpoints_from_the_jobmanagers_gauges() -> None:
    # Scrapes every 15 s, checkpoints every 10 s: a scrape sees the last one only.
    samples = [
        (
            0,
            {
                "lastCompletedCheckpointId": 4,
                "lastCheckpointDuration": 900,
                "lastCheckpointSize": 10,
                "lastCheckpointFullSize": 50,
                "numberOfCompletedCheckpoints": 4,
                "numberOfFailedCheckpoints": 0,
            },
        ),
        (
            15_000,
            {
                "lastCompletedCheckpointId": 5,
                "lastCheckpointDuration": 1200,
                "lastCheckpointSize": 11,
                "lastCheckpointFullSize": 51,
                "numberOfCompletedCheckpoints": 5,
                "numberOfFailedCheckpoints": 1,
            },
        ),
        (
            30_000,
            {
                "lastCompletedCheckpointId": 5,
                "lastCheckpointDuration": 1200,
                "numberOfCompletedCheckpoints": 5,
            },
        ),
        (
            45_000,
            {
                "lastCompletedCheckpointId": 7,
                "lastCheckpointDuration": 800,
                "lastCheckpointSize": 12,
                "lastCheckpointFullSize": 52,
                "numberOfCompletedCheckpoints": 7,
                "numberOfFailedCheckpoints": 1,
            },
        ),
    ]
    found, counts = ckpt.from_gauge_samples(reversed(samples))
    # The first sample's checkpoint completed before the range; an id seen twice is one checkpoint.
    assert [(c.id, c.duration_ms, c.full_size_bytes, c.checkpointed_size_bytes) for c in found] == [
        (5, 1200, 51, 11),
        (7, 800, 52, 12),
    ]
    assert found[0].ack_ms == 15_000 and found[0].trigger_ms == 15_000 - 1200
    assert [c.failed for c in counts] == [0, 1, None, 1]
    # Older Flink without lastCompletedCheckpointId / lastCheckpointFullSize: the count tells, the
    # checkpointed size stands in for the full one.
    plain = [
        (t, {k: v for k, v in g.items() if k not in ("lastCompletedCheckpointId", "lastCheckpointFullSize")})
        for t, g in samples
    ]
    found, _ = ckpt.from_gauge_samples(plain)
    assert [(c.id, c.duration_ms, c.full_size_bytes) for c in found] == [(None, 1200, 11), (None, 800, 12)]


def test_prometheus_log_asks_the_jobmanager_gauges() -> None:
    asked = []

    def query(gauge: str) -> list[tuple[int, float]]:
        asked.append(job_gauge_name(gauge))
        return {
            "lastCheckpointDuration": [(0, 500.0), (10_000, 700.0)],
            "numberOfCompletedCheckpoints": [(0, 1.0), (10_000, 2.0)],
        }.get(gauge, [])

    log = prometheus_log(query, "a" * 32, "job")
    assert log is not None and [c.duration_ms for c in log.checkpoints] == [700.0]
    assert "flink_jobmanager_job_lastCheckpointDuration" in asked
    assert prometheus_log(lambda _g: [], "a" * 32, "job") is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{", "not valid JSON"),
        ('{"format": 2, "checkpoints": []}', "not a flinktune checkpoints file"),
        ('{"format": 1, "checkpoints": [1]}', "checkpoints[0]"),
        ("[]", "not a flinktune checkpoints file"),
    ],
)
def test_a_bad_checkpoints_file_is_one_line(tmp_path, text: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / ckpt.CHECKPOINTS_FILE
    path.write_text(text)
    with pytest.raises(MetricsError) as info:
        ckpt.read(path)
    assert needle in info.value.one_line() and str(path) in info.value.one_line()


def test_the_document_round_trips(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = ckpt.CheckpointLog(
        "j",
        None,
        "prometheus",
        tuple(ckpt.from_rest_history([checkpoint_entry(1)])),
        (ckpt.CheckpointCounts(5, 1, 0, None),),
    )
    path = tmp_path / "c.json"
    path.write_text(json.dumps(ckpt.to_document(log)))
    assert ckpt.read(path) == log
