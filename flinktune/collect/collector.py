"""Poll a running Flink job's per-subtask metrics over REST and write the canonical dump.

Per poll: ``/jobs/:jobid`` (state, vertices), ``/jobs/:jobid/vertices/:vid`` (placement) and, for
every subtask, ``/jobs/:jobid/vertices/:vid/subtasks/:i/metrics?get=...`` asking only for the
metrics in `catalog`. Requests within a poll run on a few threads so one poll of a wide job stays
well inside the interval. Values Flink serves refresh every ``metrics.fetcher.update-interval``.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from flinktune.collect.catalog import (
    MetricSpec,
    canonical_name,
    metric_specs,
    operator_metric_ids,
    parse_metric_value,
    pick_values,
)
from flinktune.collect.checkpoints import RestCheckpoints
from flinktune.collect.job import (
    TERMINAL_STATES,
    JobInfo,
    VertexInfo,
    check_flink,
    placement_document,
    plan_with_stream_graph,
    read_job,
    read_placement,
    resolve_job_id,
)
from flinktune.collect.rest import FlinkRestClient, RetryPolicy
from flinktune.collect.writer import JOB_FILE, PLAN_FILE, DumpWriter, Row, write_json_atomic
from flinktune.errors import CollectError

# Flink's REST server rejects request lines longer than 4096 bytes (Netty's default); stay well below.
_MAX_QUERY_CHARS = 2500


@dataclass(frozen=True)
class CollectOptions:
    url: str
    out_dir: Path
    interval_s: float = 5.0
    duration_s: float = 600.0
    job_id: str | None = None
    job_name: str | None = None
    extra_metrics: tuple[str, ...] = ()
    overwrite: bool = False
    workers: int = 8
    max_failed_polls: int = 3
    # After asking Flink to refresh its metric cache, wait this long (at most a quarter of the
    # interval) before reading the subtasks, so one poll reads one refresh (see _Poller.refresh).
    settle_s: float = 0.25
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    def __post_init__(self) -> None:
        if not self.interval_s > 0:
            raise CollectError("--interval must be more than zero")
        if not self.duration_s > 0:
            raise CollectError("--duration must be more than zero")


@dataclass(frozen=True)
class StartInfo:
    job_id: str
    job_name: str
    flink_version: str
    vertices: int
    subtasks: int
    planned_polls: int


@dataclass(frozen=True)
class PollReport:
    index: int
    ts_ms: int
    rows: int
    total_rows: int
    subtasks_answered: int
    failed_requests: int
    poll_s: float


@dataclass(frozen=True)
class CollectResult:
    job_id: str
    job_name: str
    flink_version: str
    polls: int
    rows: int
    metrics_path: Path | None
    plan_path: Path
    job_path: Path
    stop_reason: str  # "duration" | "interrupted" | "job-ended" | "rest-failure"
    detail: str = ""
    checkpoints_path: Path | None = None  # checkpoints.json, when the job checkpoints


class _Stop(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: stop polling, keep what was collected."""


@contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if callable(signal.getsignal(signal.SIGTERM)):
        # The caller (the CLI) already turns SIGTERM into a KeyboardInterrupt and records it.
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise _Stop()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _no_interrupts() -> Iterator[None]:
    """While the dump is finished, a second Ctrl-C must not leave it half-written."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = (signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_IGN))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


def _query_chunks(rest_ids: list[str]) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for rest_id in rest_ids:
        if current and length + len(rest_id) + 1 > _MAX_QUERY_CHARS:
            chunks.append(",".join(current))
            current, length = [], 0
        current.append(rest_id)
        length += len(rest_id) + 1
    if current:
        chunks.append(",".join(current))
    return chunks


class _Poller:
    def __init__(
        self,
        client: FlinkRestClient,
        job_id: str,
        specs: tuple[MetricSpec, ...],
        executor: ThreadPoolExecutor,
    ) -> None:
        self.client = client
        self.job_id = job_id
        self.specs = specs
        self.chunks = _query_chunks(sorted({rid for spec in specs for rid in spec.rest_ids}))
        self.executor = executor
        # Per vertex: operator-scoped ids found by discover() (a source's pendingRecords).
        self.operator_ids: dict[str, tuple[str, ...]] = {}

    def discover(self, job: JobInfo) -> None:
        """The operator-scoped metrics each vertex offers (the list ``.../subtasks/metrics`` gives
        without ``get``), once: their ids carry the operator's name, which the plan does not spell."""
        for vertex in job.vertices:
            try:
                path = f"/jobs/{self.job_id}/vertices/{vertex.vertex_id}/subtasks/metrics"
                reply = self.client.get_json(path)
            except CollectError:
                continue
            ids = [str(i["id"]) for i in reply if isinstance(i, dict) and "id" in i] if isinstance(
                reply, list) else []
            found = operator_metric_ids(ids)
            if found:
                self.operator_ids[vertex.vertex_id] = found

    def _subtask_metrics(self, vertex_id: str, index: int) -> dict[str, float]:
        answered: dict[str, float] = {}
        chunks = self.chunks + _query_chunks(list(self.operator_ids.get(vertex_id, ())))
        for chunk in chunks:
            reply = self.client.get_json(
                f"/jobs/{self.job_id}/vertices/{vertex_id}/subtasks/{index}/metrics",
                {"get": chunk},
            )
            for item in reply if isinstance(reply, list) else []:
                if isinstance(item, dict) and "id" in item:
                    value = parse_metric_value(item.get("value"))
                    if value is not None:
                        answered[str(item["id"])] = value
        return answered

    def placements(self, job: JobInfo) -> JobInfo:
        futures = [self.executor.submit(read_placement, self.client, self.job_id, v) for v in job.vertices]
        vertices: list[VertexInfo] = []
        for vertex, future in zip(job.vertices, futures, strict=True):
            try:
                vertices.append(future.result())
            except CollectError:
                vertices.append(vertex)
        return JobInfo(job.job_id, job.name, job.state, tuple(vertices))

    def refresh(self) -> bool:
        """Ask the REST API to refresh its metric cache now. Flink serves metric values from a cache
        that a metrics request refreshes asynchronously, TaskManager by TaskManager, when it is older
        than metrics.fetcher.update-interval (MetricFetcherImpl.update): the requests of one poll
        that race that refresh read some subtasks before it and some after, so a counter seems to
        stand still in one poll and jump in the next. One request first (the job's own metrics
        handler refreshes the whole cache), a short wait, then the subtasks. False: it failed."""
        try:
            self.client.get_json(f"/jobs/{self.job_id}/metrics", {"get": "uptime"})
        except CollectError:
            return False
        return True

    def poll(self, job: JobInfo, ts_ms: int) -> tuple[list[Row], int, int]:
        """Rows of one poll, the number of subtasks that answered, and failed requests."""
        requests: list[tuple[VertexInfo, int, Future[dict[str, float]]]] = []
        for vertex in job.vertices:
            for index in range(vertex.parallelism):
                future = self.executor.submit(self._subtask_metrics, vertex.vertex_id, index)
                requests.append((vertex, index, future))
        rows: list[Row] = []
        answered_subtasks = 0
        failed = 0
        for vertex, index, future in requests:
            try:
                answered = future.result()
            except CollectError:
                failed += 1
                continue
            if answered:
                answered_subtasks += 1
            placement = next((s for s in vertex.subtasks if s.subtask_index == index), None)
            found = pick_values(self.specs, answered)
            found += [(canonical_name(i), answered[i]) for i in self.operator_ids.get(vertex.vertex_id, ())
                      if i in answered]
            for name, value in found:
                rows.append(
                    Row(
                        ts=ts_ms,
                        job_id=job.job_id,
                        job_name=job.name,
                        vertex_id=vertex.vertex_id,
                        task_name=vertex.name,
                        subtask_index=index,
                        tm_id=placement.tm_id if placement else None,
                        host=placement.host if placement else None,
                        metric=name,
                        value=value,
                    )
                )
        return rows, answered_subtasks, failed


def collect(
    options: CollectOptions,
    *,
    client: FlinkRestClient | None = None,
    on_start: Callable[[StartInfo], None] | None = None,
    on_poll: Callable[[PollReport], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> CollectResult:
    """Collect until the duration ends, the job ends, or the user stops it; the dump is always finished."""
    client = client or FlinkRestClient(options.url, retry=options.retry, sleep=sleep)
    flink_version = check_flink(client)
    job_id = resolve_job_id(client, options.job_id, options.job_name)
    job = read_job(client, job_id)
    if job.state in TERMINAL_STATES:
        raise CollectError(f"job {job_id} ({job.name!r}) is {job.state}; collect needs a running job")

    # Flink 2.x builds a batch job's graph as it runs: the stream graph completes the plan.
    plan = plan_with_stream_graph(client.get_json(f"/jobs/{job_id}/plan"), job)
    out_dir = options.out_dir
    plan_path, job_path = out_dir / PLAN_FILE, out_dir / JOB_FILE
    writer = DumpWriter(out_dir)
    writer.start(overwrite=options.overwrite)
    executor = ThreadPoolExecutor(max_workers=max(1, options.workers), thread_name_prefix="flinktune-collect")
    poller = _Poller(client, job_id, metric_specs(options.extra_metrics), executor)
    checkpoints = RestCheckpoints(client.get_json, job_id, job.name, out_dir)
    try:
        write_json_atomic(plan_path, plan)
        job = poller.placements(job)
        poller.discover(job)
        write_json_atomic(job_path, placement_document(job, flink_version))
    except BaseException:
        # Nothing collected yet: leave no half-started dump behind.
        executor.shutdown(wait=False, cancel_futures=True)
        writer.finish()
        raise

    planned = int(options.duration_s // options.interval_s) + 1
    if on_start:
        on_start(
            StartInfo(
                job_id,
                job.name,
                flink_version,
                len(job.vertices),
                sum(v.parallelism for v in job.vertices),
                planned,
            )
        )

    polls = 0
    attempts = 0
    failed_in_a_row = 0
    stop_reason = "duration"
    detail = ""
    start = clock()
    try:
        with _stop_on_sigterm():
            while start + attempts * options.interval_s <= start + options.duration_s + 1e-9:
                wait = start + attempts * options.interval_s - clock()
                if wait > 0:
                    sleep(wait)
                attempts += 1
                began = clock()
                # The values read below are the cache's as refreshed now (see _Poller.refresh).
                refreshed = poller.refresh()
                ts_ms = int(time.time() * 1000)
                if refreshed and options.settle_s > 0:
                    sleep(min(options.settle_s, options.interval_s / 4))
                try:
                    current = read_job(client, job_id)
                    if current.state in TERMINAL_STATES:
                        stop_reason, detail = "job-ended", f"job {job_id} became {current.state}"
                        break
                    # Placement changes only on (re)deployment; refresh it now and then, not every poll.
                    # (The adaptive scheduler may rescale a vertex: parallelism counts as a change too.)
                    changed = [(v.vertex_id, v.parallelism) for v in current.vertices] != [
                        (v.vertex_id, v.parallelism) for v in job.vertices
                    ]
                    if changed or polls % 5 == 0 or any(not v.subtasks for v in job.vertices):
                        job = poller.placements(current)
                    rows, answered, failed = poller.poll(job, ts_ms)
                except CollectError as error:
                    failed_in_a_row += 1
                    if failed_in_a_row >= options.max_failed_polls:
                        stop_reason = "rest-failure"
                        detail = f"{failed_in_a_row} polls in a row failed, last: {error.message}"
                        break
                    continue
                failed_in_a_row = 0
                writer.append(rows)
                checkpoints.poll(ts_ms)
                polls += 1
                if on_poll:
                    on_poll(
                        PollReport(
                            polls, ts_ms, len(rows), writer.rows_written, answered, failed, clock() - began
                        )
                    )
    except KeyboardInterrupt:
        stop_reason = "interrupted"
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        with _no_interrupts():
            metrics_path = writer.finish()
            checkpoints_path = checkpoints.finish()
    return CollectResult(
        job_id=job_id,
        job_name=job.name,
        flink_version=flink_version,
        polls=polls,
        rows=writer.rows_written,
        metrics_path=metrics_path,
        plan_path=plan_path,
        job_path=job_path,
        stop_reason=stop_reason,
        detail=detail,
        checkpoints_path=checkpoints_path,
    )
