"""`flinktune collect` against a fake Flink REST API on 127.0.0.1 (see conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from testkit import DUMP_COLUMNS, default_sigint
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.collect import CollectOptions, RetryPolicy, collect
from flinktune.collect.catalog import DEFAULT_METRICS
from flinktune.errors import CollectError, WriteError

FAST_RETRY = RetryPolicy(attempts=3, initial_backoff_s=0.01, max_backoff_s=0.02, timeout_s=5.0)


def _options(fake, tmp_path: Path, **kw) -> CollectOptions:
    base = dict(url=fake.url, out_dir=tmp_path / "dump", interval_s=0.05, duration_s=0.1, retry=FAST_RETRY)
    base.update(kw)
    return CollectOptions(**base)


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_writes_canonical_long_dump_plan_and_placement(fake_flink, tmp_path):
    result = collect(_options(fake_flink, tmp_path, job_id=fake_flink.job_id))
    assert result.stop_reason == "duration"
    assert result.polls == 3  # t = 0, 0.05, 0.1
    table = pq.read_table(result.metrics_path)
    assert table.schema.names == DUMP_COLUMNS
    assert str(table.schema.field("ts").type) == "int64"
    assert str(table.schema.field("subtask_index").type) == "int32"
    assert str(table.schema.field("value").type) == "double"
    rows = table.to_pylist()
    assert result.rows == len(rows)
    keys = [(r["ts"], r["vertex_id"], r["subtask_index"], r["metric"]) for r in rows]
    assert len(keys) == len(set(keys)), "one row per sample"
    assert len({r["ts"] for r in rows}) == 3
    # Canonical short names only: no REST group prefixes survive.
    metrics = {r["metric"] for r in rows}
    assert {
        "outPoolUsage",
        "inPoolUsage",
        "inputFloatingBuffersUsage",
        "backPressuredTimeMsPerSecond",
        "busyTimeMsPerSecond",
        "isBackPressured",
        "numBytesInRemote",
        "numBytesInLocal",
    } <= metrics
    assert not any(m.startswith(("Shuffle.", "buffers.")) for m in metrics)
    # Nothing the user did not ask for (mailboxQueueSize and operator metrics exist on the server).
    assert "mailboxQueueSize" not in metrics and "Source__Gen.numRecordsOut" not in metrics
    sink = fake_flink.vertices[1]
    one = {r["metric"]: r for r in rows if r["vertex_id"] == sink[0] and r["subtask_index"] == 1}
    assert one["busyTimeMsPerSecond"]["value"] == 985.0
    assert one["isBackPressured"]["value"] == 0.0
    assert one["numRecordsIn"]["value"] == 2000.0
    assert one["outPoolUsage"]["value"] == 0.25  # the Shuffle.Netty value, not the legacy buffers.* copy
    assert one["inPoolUsage"]["tm_id"] == fake_flink.tms[1]
    assert one["inPoolUsage"]["host"] == "localhost"
    assert one["inPoolUsage"]["task_name"] == "SinkWork -> Discard: Writer"
    assert one["inPoolUsage"]["job_name"] == "validation-slow-sink"
    assert one["accumulateIdleTimeMs"]["value"] == 10000.0
    # An operator-scoped backlog (Source__Gen.pendingRecords) under its short name, sources only.
    backlog = sorted((r["subtask_index"], r["value"]) for r in rows
                     if r["metric"] == "pendingRecords" and r["ts"] == rows[0]["ts"])
    assert backlog == [(0, 300.0), (1, 301.0)]
    assert {r["vertex_id"] for r in rows if r["metric"] == "pendingRecords"} == {fake_flink.vertices[0][0]}
    source = [
        r
        for r in rows
        if r["vertex_id"] == fake_flink.vertices[0][0] and r["metric"] == "busyTimeMsPerSecond"
    ]
    assert source and all(r["value"] != r["value"] for r in source)  # NaN kept as NaN, as Flink reports it
    # Plan and placement beside the dump; the part files are merged away.
    assert json.loads((tmp_path / "dump" / "plan.json").read_text()) == fake_flink.plan(fake_flink.job_id)
    job = json.loads((tmp_path / "dump" / "job.json").read_text())
    assert job["job"]["flink-version"] == "1.20.5"
    assert [s["taskmanager_id"] for s in job["vertices"][0]["subtasks"]] == list(fake_flink.tms)
    # The key groups: the ceiling of a rescale.
    assert [v["maxParallelism"] for v in job["vertices"]] == [128, 128]
    assert not (tmp_path / "dump" / "metrics.parts").exists()


def test_asks_only_for_catalog_metrics_plus_extras(fake_flink, tmp_path):
    result = collect(
        _options(
            fake_flink,
            tmp_path,
            job_id=fake_flink.job_id,
            duration_s=0.01,
            extra_metrics=("mailboxQueueSize",),
        )
    )
    asked = {i for get in fake_flink.metric_gets for i in get}
    # Plus the source's backlog, found in the vertex's list of metrics under its operator's name.
    expected = {rid for spec in DEFAULT_METRICS for rid in spec.rest_ids} | {"mailboxQueueSize",
                                                                            "Source__Gen.pendingRecords"}
    assert asked == expected
    assert "mailboxQueueSize" in {r["metric"] for r in _rows(result.metrics_path)}


def test_flink_2x_without_legacy_buffers_group(fake_flink, tmp_path):
    fake_flink.legacy_metrics = False
    rows = _rows(
        collect(_options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.01)).metrics_path
    )
    out = [r["value"] for r in rows if r["metric"] == "outPoolUsage"]
    assert len(out) == 4 and set(out) == {1.0, 0.25}


def test_retries_transient_errors_with_backoff(fake_flink, tmp_path):
    fake_flink.fail_next = [503, 503]  # /config is asked twice more before it is answered
    sleeps: list[float] = []
    client_retry = RetryPolicy(attempts=4, initial_backoff_s=0.5, max_backoff_s=5.0)
    from flinktune.collect import FlinkRestClient

    client = FlinkRestClient(fake_flink.url, retry=client_retry, sleep=sleeps.append)
    result = collect(
        _options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.01),
        client=client,
        sleep=lambda s: None,
    )
    assert result.polls == 1 and result.rows > 0
    assert sleeps[:2] == [0.5, 1.0]  # exponential backoff
    assert client.retries == 2


def test_persistent_server_errors_stop_and_keep_what_was_collected(fake_flink, tmp_path):
    fake_flink.finish_after_job_reads = None
    result = collect(
        _options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.2, max_failed_polls=2)
    )
    assert result.polls >= 3
    # Now break the server for good and collect again into a new folder.
    fake_flink.fail_next = []
    fake_flink.fail_metrics_always = 500
    result = collect(
        _options(
            fake_flink,
            tmp_path,
            out_dir=tmp_path / "broken",
            job_id=fake_flink.job_id,
            duration_s=0.5,
            max_failed_polls=2,
        )
    )
    # Metric requests fail after their retries but the poll itself (job state) works: zero rows per poll.
    assert result.rows == 0 and result.metrics_path is None


def test_rest_api_failing_for_good_stops_with_the_dump_kept(fake_flink, tmp_path):
    fake_flink.fail_job_reads_after = 3  # one read at start, then two good polls
    result = collect(
        _options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=5.0, max_failed_polls=2)
    )
    assert result.stop_reason == "rest-failure"
    assert "2 polls in a row failed" in result.detail and "HTTP 500" in result.detail
    assert result.polls == 2
    assert len({r["ts"] for r in _rows(result.metrics_path)}) == 2


def test_cli_rest_failure_is_one_line_and_exit_2(fake_flink, tmp_path):
    fake_flink.fail_job_reads_after = 2
    result = _cli(
        "--url",
        fake_flink.url,
        "--job",
        fake_flink.job_id,
        "--interval",
        "10ms",
        "--duration",
        "5s",
        "-o",
        str(tmp_path / "d"),
        "--retries",
        "0",
    )
    assert result.exit_code == 2
    error = [line for line in result.output.splitlines() if line.startswith("flinktune: error: ")]
    assert len(error) == 1 and "polls in a row failed" in error[0] and "kept in" in error[0]
    assert (tmp_path / "d" / "metrics.parquet").exists()


def test_written_files_have_ordinary_permissions(fake_flink, tmp_path):
    result = collect(_options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.01))
    umask = os.umask(0)
    os.umask(umask)
    for path in (result.metrics_path, result.plan_path, result.job_path):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_job_that_finishes_mid_run_keeps_the_dump(fake_flink, tmp_path):
    fake_flink.finish_after_job_reads = 3  # one read at start, then two polls
    result = collect(_options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=5.0))
    assert result.stop_reason == "job-ended" and "FINISHED" in result.detail
    assert result.polls == 2
    assert len({r["ts"] for r in _rows(result.metrics_path)}) == 2


def test_a_rescaled_vertex_is_followed(fake_flink, tmp_path):
    sink_id = fake_flink.vertices[1][0]
    seen: list[int] = []

    def on_poll(report) -> None:
        seen.append(report.rows)
        if report.index == 2:
            fake_flink.rescaled[sink_id] = 3  # the adaptive scheduler added a subtask

    result = collect(
        _options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.15), on_poll=on_poll
    )
    rows = _rows(result.metrics_path)
    per_poll = sorted({r["ts"] for r in rows})
    sink_subtasks = [len({r["subtask_index"] for r in rows if r["ts"] == ts and r["vertex_id"] == sink_id})
                     for ts in per_poll]  # fmt: skip
    assert sink_subtasks[:2] == [2, 2] and sink_subtasks[-1] == 3
    assert seen[-1] > seen[0]


def test_job_by_name_and_the_only_running_job(fake_flink, tmp_path):
    by_name = collect(
        _options(
            fake_flink, tmp_path, out_dir=tmp_path / "a", job_name="validation-slow-sink", duration_s=0.01
        )
    )
    only = collect(_options(fake_flink, tmp_path, out_dir=tmp_path / "b", duration_s=0.01))
    assert by_name.job_id == only.job_id == fake_flink.job_id


def test_two_running_jobs_need_a_choice(fake_flink, tmp_path):
    fake_flink.add_job("ffffffffffffffffffffffffffffffff", "other")
    with pytest.raises(CollectError, match="2 jobs are running"):
        collect(_options(fake_flink, tmp_path))


def test_refuses_to_overwrite_an_existing_dump(fake_flink, tmp_path):
    collect(_options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.01))
    with pytest.raises(WriteError, match="already exists"):
        collect(_options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.01))
    again = collect(_options(fake_flink, tmp_path, job_id=fake_flink.job_id, duration_s=0.01, overwrite=True))
    assert again.metrics_path.exists()
    assert (tmp_path / "dump" / "metrics.parquet.bak").exists()


# --- the command line: one clear line and exit code 2 for each wrong input ---------------------------

runner = CliRunner()


def _cli(*args: str):
    return runner.invoke(app, ["collect", *args])


def _one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("flinktune: error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_cli_nothing_listening(tmp_path):
    line = _one_error_line(
        _cli(
            "--url",
            f"http://127.0.0.1:{_free_port()}",
            "-o",
            str(tmp_path / "d"),
            "--duration",
            "1s",
            "--retries",
            "1",
        )
    )
    assert "cannot reach Flink's REST API" in line and "connection refused" in line
    assert "gave up after 2 attempts" in line


def test_cli_not_flink(not_flink, tmp_path):
    line = _one_error_line(_cli("--url", not_flink, "-o", str(tmp_path / "d")))
    assert "does not look like Flink's REST API" in line


def test_cli_bad_url(tmp_path):
    assert "not an http(s) URL" in _one_error_line(_cli("--url", "127.0.0.1:8081", "-o", str(tmp_path / "d")))


def test_cli_finished_job(fake_flink, tmp_path):
    line = _one_error_line(
        _cli("--url", fake_flink.url, "--job", fake_flink.finished_job_id, "-o", str(tmp_path))
    )
    assert "is FINISHED" in line and "needs a running job" in line
    line = _one_error_line(_cli("--url", fake_flink.url, "--job-name", "old-job", "-o", str(tmp_path)))
    assert "no longer running" in line


def test_cli_unknown_job(fake_flink, tmp_path):
    line = _one_error_line(_cli("--url", fake_flink.url, "--job", "a" * 32, "-o", str(tmp_path)))
    assert f"no job {'a' * 32}" in line and "HTTP 404" in line
    line = _one_error_line(_cli("--url", fake_flink.url, "--job-name", "nope", "-o", str(tmp_path)))
    assert "no job named 'nope'" in line and "validation-slow-sink" in line
    assert "32 hex digits" in _one_error_line(
        _cli("--url", fake_flink.url, "--job", "xyz", "-o", str(tmp_path))
    )


def test_cli_interval_needs_a_unit(fake_flink, tmp_path):
    assert "has no unit" in _one_error_line(
        _cli("--url", fake_flink.url, "--interval", "5", "-o", str(tmp_path))
    )


def test_cli_success_summary(fake_flink, tmp_path):
    result = _cli(
        "--url",
        fake_flink.url,
        "--job",
        fake_flink.job_id,
        "--interval",
        "50ms",
        "--duration",
        "100ms",
        "-o",
        str(tmp_path / "d"),
        "--metric",
        "mailboxQueueSize",
    )
    assert result.exit_code == 0, result.output
    assert "collected 3 polls" in result.output and "Flink 1.20.5" in result.output


def test_cli_summary_as_json(fake_flink, tmp_path):
    # The same result, as a JSON document in the shared envelope (valid against collect's schema).
    jsonschema = pytest.importorskip("jsonschema")
    from flinktune.report.emit import schema_path

    out = tmp_path / "d"
    result = _cli("--url", fake_flink.url, "--job", fake_flink.job_id, "--interval", "50ms", "--duration",
                  "100ms", "-o", str(out), "-f", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, json.loads(schema_path("collect").read_text(encoding="utf-8")))
    assert doc["command"] == "collect" and doc["source"] == "rest" and doc["polls"] == 3
    assert doc["flink_version"] == "1.20.5" and doc["metrics_path"] == str(out / "metrics.parquet")


# --- stopping: Ctrl-C and SIGTERM finish the dump; SIGKILL leaves readable parts -----------------------


def _start_cli(fake, out: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flinktune",
            "collect",
            "--url",
            fake.url,
            "--job",
            fake.job_id,
            "--interval",
            "200ms",
            "--duration",
            "10min",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_sigint,
    )


def _wait_for_parts(out: Path, n: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        parts = out / "metrics.parts"
        if parts.exists() and len(list(parts.glob("part-*.parquet"))) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("collector wrote no parts")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_leaves_a_complete_dump(fake_flink, tmp_path, sig):
    out = tmp_path / "d"
    proc = _start_cli(fake_flink, out)
    try:
        _wait_for_parts(out, 3, proc)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Issue 15: an interrupted collect exits 130 / 143 with one line on stderr (was 0 and stdout).
    assert proc.returncode == 128 + sig, stderr
    assert stdout == ""
    # Besides the progress lines (stderr is not a terminal here), one line.
    lines = [line for line in stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("flinktune collect:")]
    assert len(lines) == 1 and f"interrupted by {signal.Signals(sig).name}; stopped early" in lines[0], stderr
    rows = _rows(out / "metrics.parquet")
    assert len({r["ts"] for r in rows}) >= 3
    assert not (out / "metrics.parts").exists()
    assert "Traceback" not in stderr


def test_sigkill_leaves_readable_parts(fake_flink, tmp_path):
    out = tmp_path / "d"
    proc = _start_cli(fake_flink, out)
    try:
        _wait_for_parts(out, 2, proc)
        proc.kill()
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    table = pq.read_table(out / "metrics.parts")  # a folder dataset, as analyze reads folders
    assert table.num_rows > 0 and len(set(table.column("ts").to_pylist())) >= 2
    assert (out / "plan.json").exists()
