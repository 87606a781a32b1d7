"""A fake Flink REST API on 127.0.0.1 for the collector's tests.

It serves the endpoints and reply shapes of Flink 1.20's REST API (rest_v1_dispatcher.yml @1.20,
and what a real 1.20.5 cluster answered in /work/shared/data/real-flink-1.20): metric values are
strings, unknown metric ids are silently left out of the answer, unknown jobs answer 404 with
``{"errors": [...]}``. Faults (HTTP 503/500, a job that finishes) are injected per test.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

JOB_ID = "4e4458be85a9649631c734620c5d1823"
FINISHED_JOB_ID = "0123456789abcdef0123456789abcdef"
VERTICES = (
    ("6bf01baa9d2ca23a3ef7ce311722523d", "Source: Gen", 2),
    ("d2ba83d7e0731fc44219c2ac9f4401e7", "SinkWork -> Discard: Writer", 2),
)
TMS = ("127.0.0.1:45719-b0f767", "127.0.0.1:42069-eef17e")


def subtask_metrics(vertex_index: int, subtask: int, *, legacy: bool = True) -> dict[str, str]:
    """Metric ids as a 1.20 task registers them; values chosen so each id's origin is recognisable."""
    sink = vertex_index == 1
    values = {
        "Shuffle.Netty.Output.Buffers.outPoolUsage": "0.25" if sink else "1.0",
        "Shuffle.Netty.Input.Buffers.inPoolUsage": "1.0" if sink else "0.0",
        "Shuffle.Netty.Input.Buffers.inputFloatingBuffersUsage": "0.5",
        "Shuffle.Netty.Input.Buffers.inputExclusiveBuffersUsage": "1.0",
        "backPressuredTimeMsPerSecond": "0.0" if sink else "990.0",
        "busyTimeMsPerSecond": "985.0" if sink else "NaN",
        "idleTimeMsPerSecond": "15.0" if sink else "10.0",
        "isBackPressured": "false" if sink else "true",
        "numRecordsIn": str(1000 * (subtask + 1)),
        "numRecordsOut": str(2000 * (subtask + 1)),
        "Shuffle.Netty.Input.numBytesInRemote": "8519688",
        "numBytesInRemote": "8519688",
        "Shuffle.Netty.Input.numBytesInLocal": "6324232",
        "numBytesInLocal": "6324232",
        "numBuffersOut": "500",
        "mailboxQueueSize": "3",
        "Source__Gen.numRecordsOut": "77",
        "accumulateIdleTimeMs": str(5000 * (subtask + 1)),
    }
    if vertex_index == 0:
        values["Source__Gen.pendingRecords"] = str(300 + subtask)
    if legacy:
        # <= 1.20 keeps copies under buffers.*; deliberately different so a test sees which one won.
        values["buffers.outPoolUsage"] = "0.111"
        values["buffers.inPoolUsage"] = "0.222"
    return values


@dataclass
class FakeFlink:
    """State of the fake cluster; tests change it while the server runs."""

    job_id: ClassVar[str] = JOB_ID
    finished_job_id: ClassVar[str] = FINISHED_JOB_ID
    vertices: ClassVar[tuple[tuple[str, str, int], ...]] = VERTICES
    tms: ClassVar[tuple[str, ...]] = TMS

    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    legacy_metrics: bool = True
    fail_next: list[int] = field(default_factory=list)  # HTTP statuses to answer before serving
    fail_metrics_always: int | None = None
    finish_after_job_reads: int | None = None
    fail_job_reads_after: int | None = None  # /jobs/:jid answers 500 from then on (JobManager trouble)
    rescaled: dict[str, int] = field(default_factory=dict)  # vertex id -> new parallelism
    # Checkpointing: None answers 404 as Flink does for a job without it; otherwise every read of
    # /jobs/:jid/checkpoints completes one more checkpoint and shows the last ``history_size``.
    checkpoints_completed: int | None = None
    history_size: int = 3
    requests: list[str] = field(default_factory=list)
    metric_gets: list[list[str]] = field(default_factory=list)
    job_reads: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def add_job(self, job_id: str, name: str, state: str = "RUNNING") -> None:
        self.jobs[job_id] = {"name": name, "state": state}

    def plan(self, job_id: str) -> dict[str, Any]:
        nodes = []
        for i, (vid, name, p) in enumerate(VERTICES):
            node: dict[str, Any] = {
                "id": vid,
                "parallelism": p,
                "operator": "",
                "operator_strategy": "",
                "description": name,
                "optimizer_properties": {},
            }
            if i:
                node["inputs"] = [
                    {
                        "num": 0,
                        "id": VERTICES[i - 1][0],
                        "ship_strategy": "REBALANCE",
                        "exchange": "pipelined_bounded",
                    }
                ]
            nodes.append(node)
        return {
            "plan": {"jid": job_id, "name": self.jobs[job_id]["name"], "type": "STREAMING", "nodes": nodes}
        }

    def checkpoint_stats(self) -> tuple[int, Any]:
        if self.checkpoints_completed is None:
            return 404, {"errors": ["Checkpointing has not been enabled."]}
        with self.lock:
            self.checkpoints_completed += 1
            done = self.checkpoints_completed
        history = [checkpoint_entry(done + 1, "IN_PROGRESS")]
        history += [checkpoint_entry(i) for i in range(done, max(0, done - self.history_size + 1), -1)]
        return 200, {
            "counts": {"restored": 0, "total": done + 1, "in_progress": 1, "completed": done, "failed": 0},
            "summary": {},
            "latest": {},
            "history": history[: self.history_size],
        }

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        with self.lock:
            self.requests.append(path)
            if self.fail_next:
                return self.fail_next.pop(0), {"errors": ["Service temporarily unavailable"]}
        parts = [p for p in path.split("/") if p]
        if parts == ["config"]:
            return 200, {
                "refresh-interval": 3000,
                "timezone-name": "UTC",
                "flink-version": "1.20.5",
                "flink-revision": "fake",
                "features": {},
            }
        if parts == ["jobs", "overview"]:
            return 200, {
                "jobs": [{"jid": j, "name": d["name"], "state": d["state"]} for j, d in self.jobs.items()]
            }
        if len(parts) >= 2 and parts[0] == "jobs":
            job_id = parts[1]
            if job_id not in self.jobs:
                if len(job_id) != 32:
                    return 400, {"errors": [f"Invalid JobID string '{job_id}'"]}
                return 404, {
                    "errors": ["org.apache.flink.runtime.rest.NotFoundException: Job not found.\n\tat ..."]
                }
            job = self.jobs[job_id]
            if len(parts) == 2:
                with self.lock:
                    self.job_reads += 1
                    if self.fail_job_reads_after is not None and self.job_reads > self.fail_job_reads_after:
                        return 500, {
                            "errors": ["Internal server error.", "java.lang.RuntimeException\n\tat x"]
                        }
                    if (
                        self.finish_after_job_reads is not None
                        and self.job_reads > self.finish_after_job_reads
                    ):
                        job["state"] = "FINISHED"
                return 200, {
                    "jid": job_id,
                    "name": job["name"],
                    "state": job["state"],
                    "vertices": [
                        {"id": v, "name": n, "parallelism": self.rescaled.get(v, p), "maxParallelism": 128,
                         "status": "RUNNING"}
                        for v, n, p in VERTICES
                    ],
                }
            if parts[2:] == ["plan"]:
                return 200, self.plan(job_id)
            if parts[2:] == ["checkpoints"]:
                return self.checkpoint_stats()
            vertex_ids = [v for v, _, _ in VERTICES]
            if len(parts) >= 4 and parts[2] == "vertices" and parts[3] in vertex_ids:
                vindex = vertex_ids.index(parts[3])
                _, name, p = VERTICES[vindex]
                p = self.rescaled.get(parts[3], p)
                if len(parts) == 4:
                    return 200, {
                        "id": parts[3],
                        "name": name,
                        "parallelism": p,
                        "subtasks": [
                            {
                                "subtask": i,
                                "status": "RUNNING",
                                "attempt": 0,
                                "endpoint": "localhost:4014" + str(i),
                                "taskmanager-id": TMS[i % 2],
                            }
                            for i in range(p)
                        ],
                    }
                if len(parts) == 6 and parts[4:] == ["subtasks", "metrics"] and not query.get("get"):
                    # The aggregated endpoint without ?get lists the ids the vertex offers.
                    return 200, [{"id": i} for i in subtask_metrics(vindex, 0, legacy=self.legacy_metrics)]
                if len(parts) == 7 and parts[4] == "subtasks" and parts[6] == "metrics":
                    if self.fail_metrics_always is not None:
                        return self.fail_metrics_always, {"errors": ["Internal server error."]}
                    index = int(parts[5])
                    if index >= p:
                        return 404, {"errors": ["subtask not found"]}
                    ids = query.get("get", [""])[0].split(",")
                    with self.lock:
                        self.metric_gets.append(ids)
                    values = subtask_metrics(vindex, index, legacy=self.legacy_metrics)
                    return 200, [{"id": i, "value": values[i]} for i in ids if i in values]
        return 404, {"errors": ["Not found: " + path]}


def checkpoint_entry(cid: int, status: str = "COMPLETED") -> dict[str, Any]:
    """One ``history`` entry as Flink 1.20 answers it (CheckpointStatistics, "completed" class)."""
    trigger = 1_795_253_000_000 + 3000 * cid
    done = status == "COMPLETED"
    return {
        "className": "completed" if done else "in_progress",
        "id": cid,
        "status": status,
        "is_savepoint": False,
        "savepointFormat": None,
        "trigger_timestamp": trigger,
        "latest_ack_timestamp": trigger + 1000 + 10 * cid if done else -1,
        "checkpointed_size": 4096 + cid,
        "state_size": 8192 + cid,
        "end_to_end_duration": 1000 + 10 * cid if done else 0,
        "alignment_buffered": 0,
        "processed_data": 0,
        "persisted_data": 0,
        "num_subtasks": 4,
        "num_acknowledged_subtasks": 4 if done else 1,
        "checkpoint_type": "CHECKPOINT",
        "tasks": {},
        "external_path": "<checkpoint-not-externally-addressable>",
        "discarded": False,
    }


def _handler(fake: FakeFlink) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            split = urllib.parse.urlsplit(self.path)
            status, body = fake.answer(split.path, urllib.parse.parse_qs(split.query))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def fake_flink() -> Iterator[FakeFlink]:
    fake = FakeFlink()
    fake.add_job(JOB_ID, "validation-slow-sink")
    fake.add_job(FINISHED_JOB_ID, "old-job", state="FINISHED")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def not_flink() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that is not Flink: 404 for everything."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>nope</html>")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
