"""`flinktune collect --prometheus URL`: pull a job's history from Prometheus into the canonical dump.

Flink's PrometheusReporter exports every task metric as a gauge named ``flink_taskmanager_job_task_``
+ the REST id with ``.`` -> ``_`` (see `flinktune.analysis.readers.prometheus_range`). Steps:

1. ``POST /api/v1/series`` with the job's selector over the range: which metrics, vertices,
   subtasks and attempts exist (and which job, when none is named);
2. ``POST /api/v1/query_range`` once per metric and time chunk, a chunk holding at most
   `MAX_POINTS` points per series (Prometheus refuses more than 11,000) and about
   `MAX_SAMPLES` samples in all (its ``query.max-samples`` defaults to 50 million);
3. each answer is written as its own complete parquet part (crash-safe like REST collect), and
   the parts are merged into ``metrics.parquet`` at the end.

Standard library HTTP only; no proxies; TLS verified (``--ca-file`` for a private CA).
Credentials come from an environment variable or a file, never from the command line.

Over 500 lines: the Prometheus pull (query plan, chunking under the 11,000-point limit, retries,
stop on signal) is one protocol.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flinktune.analysis.plan import name_from_description
from flinktune.analysis.readers.prometheus_range import (
    Attempts,
    Columns,
    add_matrix,
    matrix_of,
    prometheus_name,
)
from flinktune.collect.catalog import DEFAULT_METRICS, OPERATOR_METRICS, MetricSpec
from flinktune.collect.checkpoints import job_gauge_name, prometheus_log, write_log
from flinktune.collect.collector import _no_interrupts, _stop_on_sigterm
from flinktune.collect.job import plan_with_stream_graph
from flinktune.collect.rest import FlinkRestClient, HttpStatusError, RetryPolicy, _reason
from flinktune.collect.writer import JOB_FILE, PLAN_FILE, DumpWriter, write_json_atomic
from flinktune.errors import CollectError

# Prometheus answers "exceeded maximum resolution of 11,000 points per timeseries"; keep headroom.
MAX_POINTS = 10_000
# Per request: far below Prometheus's default query.max-samples (50,000,000) and small in memory.
MAX_SAMPLES = 2_000_000
QUERY_FILE = "prometheus.json"
TOKEN_ENV = "FLINKTUNE_PROMETHEUS_TOKEN"
BASIC_AUTH_ENV = "FLINKTUNE_PROMETHEUS_BASIC_AUTH"
_TRANSIENT_HTTP = frozenset({408, 429, 500, 502, 503, 504})
_JOB_ID = re.compile(r"^[0-9a-fA-F]{32}$")


def label_filtered(text: str) -> str:
    """AbstractPrometheusReporter's default label-value filter: [^a-zA-Z0-9:_] -> '_'."""
    return re.sub(r"[^a-zA-Z0-9:_]", "_", text)


def _promql_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Credentials:
    """An ``Authorization`` header value, and where it came from (for messages, never the secret)."""

    header: str
    source: str


def read_credentials(
    token_file: Path | None = None, basic_auth_file: Path | None = None
) -> Credentials | None:
    """Bearer token or ``user:password`` from a file, else from $FLINKTUNE_PROMETHEUS_TOKEN /
    $FLINKTUNE_PROMETHEUS_BASIC_AUTH. Never from the command line (it would show in `ps`)."""
    if token_file is not None and basic_auth_file is not None:
        raise CollectError("give --token-file or --basic-auth-file, not both")

    def read(path: Path) -> str:
        try:
            text = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise CollectError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
        if not text:
            raise CollectError(f"{path} is empty")
        return text

    def basic(text: str, source: str) -> Credentials:
        if ":" not in text:
            raise CollectError(f"{source} must hold user:password")
        return Credentials("Basic " + base64.b64encode(text.encode("utf-8")).decode("ascii"), source)

    if token_file is not None:
        return Credentials("Bearer " + read(token_file), str(token_file))
    if basic_auth_file is not None:
        return basic(read(basic_auth_file), str(basic_auth_file))
    if os.environ.get(TOKEN_ENV, "").strip():
        return Credentials("Bearer " + os.environ[TOKEN_ENV].strip(), f"${TOKEN_ENV}")
    if os.environ.get(BASIC_AUTH_ENV, "").strip():
        return basic(os.environ[BASIC_AUTH_ENV].strip(), f"${BASIC_AUTH_ENV}")
    return None


class PrometheusClient:
    """POST form requests to a Prometheus HTTP API base URL, JSON answers, retries with backoff."""

    def __init__(
        self,
        base_url: str,
        *,
        retry: RetryPolicy | None = None,
        credentials: Credentials | None = None,
        ca_file: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url.strip())
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise CollectError(
                f"--prometheus {base_url!r} is not an http(s) URL such as http://127.0.0.1:9090"
            )
        self.base_url = base_url.strip().rstrip("/")
        self.retry = retry or RetryPolicy()
        self.credentials = credentials
        self._sleep = sleep
        handlers: list[Any] = [urllib.request.ProxyHandler({}), _NoRedirect()]
        if parsed.scheme == "https":
            try:
                context = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
            except (OSError, ssl.SSLError) as error:
                raise CollectError(f"cannot use --ca-file {ca_file}: {error}") from None
            handlers.append(urllib.request.HTTPSHandler(context=context))
        elif ca_file is not None:
            raise CollectError("--ca-file needs an https:// Prometheus URL")
        self._opener = urllib.request.build_opener(*handlers)
        self.requests = 0
        self.retries = 0

    def post(self, path: str, form: list[tuple[str, str]]) -> Any:
        url = self.base_url + path
        body = urllib.parse.urlencode(form).encode("ascii")
        failed = 0
        while True:
            self.requests += 1
            try:
                return self._once(url, body)
            except HttpStatusError as error:
                if error.status not in _TRANSIENT_HTTP:
                    raise
                last: CollectError = error
            except (urllib.error.URLError, OSError) as error:
                last = CollectError(f"cannot reach Prometheus at {url}: {_reason(error)}")
            failed += 1
            if failed >= self.retry.attempts:
                raise CollectError(f"{last.message} (gave up after {failed} attempts)")
            self.retries += 1
            self._sleep(self.retry.backoff_s(failed))

    def _once(self, url: str, body: bytes) -> Any:
        headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
        if self.credentials is not None:
            headers["Authorization"] = self.credentials.header
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with self._opener.open(request, timeout=self.retry.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            try:
                detail = _prometheus_error(error.read())
            except (TimeoutError, OSError):
                detail = ""
            if error.code in (401, 403):
                how = f"credentials from {self.credentials.source}" if self.credentials else "no credentials"
                message = (
                    f"Prometheus at {self.base_url} refused the request (HTTP {error.code}) with {how}; "
                    f"set ${TOKEN_ENV} or ${BASIC_AUTH_ENV}, or use --token-file / --basic-auth-file"
                )
            else:
                message = f"POST {url} answered HTTP {error.code}" + (f": {detail}" if detail else "")
            raise HttpStatusError(message, status=error.code, detail=detail) from None
        except ssl.SSLError as error:
            raise CollectError(f"TLS with {self.base_url} failed: {error.reason or error}") from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, ssl.SSLError):
                raise CollectError(
                    f"TLS with {self.base_url} failed: {error.reason.reason or error.reason} "
                    "(a private CA? use --ca-file)"
                ) from None
            raise
        try:
            document = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise CollectError(f"POST {url} did not answer JSON: is this Prometheus's HTTP API?") from None
        if not isinstance(document, dict) or "status" not in document:
            raise CollectError(f"POST {url} answered JSON without 'status': is this Prometheus's HTTP API?")
        if document["status"] != "success":
            raise CollectError(f"Prometheus refused {url}: {document.get('error') or document.get('status')}")
        return document


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are refused (an HTTP error naming the status): urllib would follow a 302 with the
    Authorization header to whatever host it names, and Prometheus's API never redirects."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None


def _prometheus_error(body: bytes) -> str:
    try:
        document = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        return ""
    return str(document.get("error", ""))[:300] if isinstance(document, dict) else ""


@dataclass(frozen=True)
class PrometheusOptions:
    url: str
    out_dir: Path
    start_s: float
    end_s: float
    step_s: float = 15.0
    job_id: str | None = None
    job_name: str | None = None
    flink_url: str | None = None  # JobManager REST or HistoryServer, for the plan
    plan_file: Path | None = None
    overwrite: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    credentials: Credentials | None = None
    ca_file: Path | None = None
    max_points: int = MAX_POINTS
    max_samples: int = MAX_SAMPLES

    def __post_init__(self) -> None:
        if not self.step_s > 0:
            raise CollectError("--step must be more than zero")
        if not self.end_s > self.start_s:
            raise CollectError("the time range is empty: --until must be after --since")
        if self.job_id is not None and self.job_name is not None:
            raise CollectError("give --job or --job-name, not both")
        if self.job_id is not None and not _JOB_ID.match(self.job_id):
            raise CollectError(f"--job {self.job_id!r} is not a Flink job id (32 hex digits)")


@dataclass(frozen=True)
class PrometheusResult:
    job_id: str
    job_name: str
    series: int
    metrics: int
    chunks: int
    requests: int
    rows: int
    metrics_path: Path | None
    plan_path: Path | None
    plan_source: str
    notes: tuple[str, ...]
    stop_reason: str  # "complete" | "interrupted"
    checkpoints_path: Path | None = None


def time_chunks(start_s: float, end_s: float, step_s: float, points: int) -> list[tuple[float, float]]:
    """Split [start, end] on the step grid into ranges of at most ``points`` evaluation points
    each; consecutive ranges do not share a point."""
    points = max(1, points)
    chunks: list[tuple[float, float]] = []
    t = start_s
    while t <= end_s + 1e-9:
        last = min(end_s, t + (points - 1) * step_s)
        chunks.append((t, last))
        t = last + step_s
    return chunks


def _job_selector(job_id: str | None, job_name: str | None) -> str:
    if job_id is not None:
        return f"job_id={_promql_string(job_id.lower())}"
    if job_name is not None:
        names = sorted({job_name, label_filtered(job_name)})
        if len(names) == 1:
            return f"job_name={_promql_string(names[0])}"
        return "job_name=~" + _promql_string("|".join(re.escape(n) for n in names))
    return ""


def wanted_names(specs: tuple[MetricSpec, ...] = DEFAULT_METRICS) -> dict[str, tuple[str, int]]:
    """Prometheus name -> (canonical metric, preference: 0 best) for every metric the analysis reads."""
    out: dict[str, tuple[str, int]] = {}
    for spec in specs:
        for rank, rid in enumerate(spec.rest_ids):
            out[prometheus_name(rid)] = (spec.name, rank)
    for name in OPERATOR_METRICS:
        # Operator-scoped (a source reader's backlog): flink_taskmanager_job_task_operator_pendingRecords.
        out[prometheus_name("operator." + name)] = (name, 0)
    return out


def discover(
    client: PrometheusClient, options: PrometheusOptions
) -> tuple[str, str, dict[str, str], list[dict[str, str]]]:
    """(job id, job name label, chosen Prometheus name -> canonical metric, series label sets)."""
    wanted = wanted_names()
    regex = (
        "flink_taskmanager_job_task_("
        + "|".join(re.escape(n[len("flink_taskmanager_job_task_") :]) for n in sorted(wanted))
        + ")"
    )
    selector = ", ".join(
        s
        for s in (f"__name__=~{_promql_string(regex)}", _job_selector(options.job_id, options.job_name))
        if s
    )
    document = client.post(
        "/api/v1/series",
        [
            ("match[]", "{" + selector + "}"),
            ("start", f"{options.start_s:.3f}"),
            ("end", f"{options.end_s:.3f}"),
        ],
    )
    series = [s for s in document.get("data") or [] if isinstance(s, dict)]
    which = (
        f"job {options.job_id}"
        if options.job_id
        else f"job {options.job_name!r}"
        if options.job_name
        else "any job"
    )
    if not series:
        raise CollectError(
            f"Prometheus at {client.base_url} has no Flink task metrics (flink_taskmanager_job_task_*) for "
            f"{which} between {_iso(options.start_s)} and {_iso(options.end_s)}: "
            "is Flink's PrometheusReporter scraped, and is the range right?"
        )
    jobs: dict[str, str] = {}
    for s in series:
        jobs.setdefault(str(s.get("job_id", "")), str(s.get("job_name", "")))
    if len(jobs) > 1:
        listed = ", ".join(f"{name} ({jid})" for jid, name in sorted(jobs.items())[:10])
        raise CollectError(
            f"{len(jobs)} jobs match {which} in this range: {listed}; choose one with --job ID"
        )
    job_id, job_label = next(iter(jobs.items()))
    present = {str(s.get("__name__")) for s in series}
    chosen: dict[str, str] = {}
    best: dict[str, tuple[int, str]] = {}
    for name in present:
        if name in wanted:
            metric, rank = wanted[name]
            if metric not in best or rank < best[metric][0]:
                best[metric] = (rank, name)
    for metric, (_rank, name) in best.items():
        chosen[name] = metric
    return job_id, job_label, chosen, series


def _iso(epoch_s: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


def fetch_plan(
    options: PrometheusOptions, job_id: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str]:
    """The job graph: ``--plan FILE``, else ``/jobs/:id/plan`` and ``/jobs/:id`` from ``--url`` (a
    JobManager or a HistoryServer: JobPlanHandler and JobDetailsHandler are JsonArchivists @1.20,
    archived under the same paths the HistoryServer serves). (plan, job, where)."""
    if options.plan_file is not None:
        try:
            plan = json.loads(options.plan_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise CollectError(f"cannot read --plan {options.plan_file}: {error}") from None
        return plan, None, str(options.plan_file)
    if options.flink_url is None:
        return None, None, ""
    client = FlinkRestClient(
        options.flink_url, retry=RetryPolicy(attempts=2, timeout_s=options.retry.timeout_s)
    )
    try:
        plan = client.get_json(f"/jobs/{job_id}/plan")
    except CollectError as error:
        raise CollectError(f"cannot read the job's plan from --url: {error.message}") from None
    try:
        job = client.get_json(f"/jobs/{job_id}")
    except CollectError:
        job = None
    return (plan_with_stream_graph(plan, job), job if isinstance(job, dict) else None,
            client.url_for(f"/jobs/{job_id}/plan"))


def vertex_names(plan: dict[str, Any] | None, job: dict[str, Any] | None) -> dict[str, str]:
    """Vertex id -> task name: /jobs/:id's vertex names, else the plan's descriptions."""
    names: dict[str, str] = {}
    if isinstance(plan, dict):
        inner = plan.get("plan", plan)
        for node in inner.get("nodes", []) if isinstance(inner, dict) else []:
            if isinstance(node, dict) and "id" in node:
                name = name_from_description(str(node.get("description", "")))
                if name:
                    names[str(node["id"])] = name
    if isinstance(job, dict):
        for v in job.get("vertices", []) or []:
            if isinstance(v, dict) and "id" in v and "name" in v:
                names[str(v["id"])] = str(v["name"])
    return names


def _placement(
    series: list[dict[str, str]], names: dict[str, str], job_id: str, job_name: str
) -> dict[str, Any]:
    """job.json from the labels: each subtask's TaskManager in its latest attempt."""
    latest: dict[tuple[str, int], tuple[int, str | None, str | None]] = {}
    for s in series:
        try:
            key = (str(s["task_id"]), int(s["subtask_index"]))
            attempt = int(s.get("task_attempt_num", 0))
        except (KeyError, ValueError):
            continue
        if key not in latest or attempt >= latest[key][0]:
            latest[key] = (attempt, s.get("tm_id"), s.get("host"))
    vertices: dict[str, dict[str, Any]] = {}
    label_names = {str(s.get("task_id")): str(s.get("task_name")) for s in series}
    for (vid, index), (_a, tm, host) in sorted(latest.items()):
        v = vertices.setdefault(
            vid,
            {"id": vid, "name": names.get(vid, label_names.get(vid, vid)), "parallelism": 0, "subtasks": []},
        )
        v["subtasks"].append({"subtask": index, "host": host, "taskmanager_id": tm, "status": None})
        v["parallelism"] = max(v["parallelism"], index + 1)
    return {
        "job": {"jid": job_id, "name": job_name, "state": None, "source": "prometheus labels"},
        "vertices": list(vertices.values()),
    }


def _job_gauge(
    client: PrometheusClient, options: PrometheusOptions, job_id: str, gauge: str
) -> list[tuple[int, float]]:
    """(ts_ms, value) of the JobManager's job-scoped ``gauge`` for the job over the range, in
    chunks of at most ``max_points`` steps; several series (a JobManager failover) are merged."""
    out: dict[int, float] = {}
    source = f"{client.base_url}/api/v1/query_range"
    for lo, hi in time_chunks(options.start_s, options.end_s, options.step_s, options.max_points):
        document = client.post(
            "/api/v1/query_range",
            [
                ("query", f"{job_gauge_name(gauge)}{{job_id={_promql_string(job_id)}}}"),
                ("start", f"{lo:.3f}"),
                ("end", f"{hi:.3f}"),
                ("step", f"{options.step_s:g}"),
            ],
        )
        for series in matrix_of(document, source):
            for point in series.get("values") or []:
                try:
                    ts, value = round(float(point[0]) * 1000), float(point[1])
                except (TypeError, ValueError, IndexError):
                    continue
                if value == value:
                    out[ts] = value
    return sorted(out.items())


def collect_prometheus(
    options: PrometheusOptions,
    *,
    client: PrometheusClient | None = None,
    on_chunk: Callable[[int, int, int], None] | None = None,
) -> PrometheusResult:
    """Pull the job's series, write the dump; on an error nothing is left half-written."""
    client = client or PrometheusClient(
        options.url, retry=options.retry, credentials=options.credentials, ca_file=options.ca_file
    )
    job_id, job_label, chosen, series = discover(client, options)
    plan, job_doc, plan_source = fetch_plan(options, job_id)
    names = vertex_names(plan, job_doc)
    job_name = str(job_doc.get("name")) if job_doc and job_doc.get("name") else job_label
    per_metric = {name: sum(1 for s in series if s.get("__name__") == name) for name in chosen}
    used_series = sum(per_metric.values())
    widest = max(per_metric.values(), default=1)
    points = max(1, min(options.max_points, options.max_samples // max(1, widest)))
    chunks = time_chunks(options.start_s, options.end_s, options.step_s, points)

    out_dir = options.out_dir
    created = not out_dir.exists()
    writer = DumpWriter(out_dir)
    writer.start(overwrite=options.overwrite)
    attempts = Attempts()
    stop_reason = "complete"
    done_chunks = 0
    try:
        with _stop_on_sigterm():
            for index, (lo, hi) in enumerate(chunks):
                for name, metric in sorted(chosen.items()):
                    document = client.post(
                        "/api/v1/query_range",
                        [
                            ("query", f"{name}{{job_id={_promql_string(job_id)}}}"),
                            ("start", f"{lo:.3f}"),
                            ("end", f"{hi:.3f}"),
                            ("step", f"{options.step_s:g}"),
                        ],
                    )
                    columns = Columns()
                    add_matrix(
                        columns,
                        matrix_of(document, f"{client.base_url}/api/v1/query_range"),
                        f"{client.base_url}/api/v1/query_range",
                        attempts=attempts,
                        metric_name=lambda _n, m=metric: m,
                        names_by_vertex=names,
                        job_name=job_name,
                    )
                    writer.append_table(columns.table())
                done_chunks = index + 1
                if on_chunk:
                    on_chunk(done_chunks, len(chunks), writer.rows_written)
    except KeyboardInterrupt:
        stop_reason = "interrupted"
    except BaseException:
        # History stays in Prometheus: a failed pull leaves nothing behind, so a rerun starts clean.
        shutil.rmtree(writer.parts_dir, ignore_errors=True)
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    if stop_reason == "complete" and not writer.rows_written:
        shutil.rmtree(writer.parts_dir, ignore_errors=True)
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise CollectError(
            f"Prometheus at {client.base_url} lists series of job {job_id} but returned no samples between "
            f"{_iso(options.start_s)} and {_iso(options.end_s)} at step {options.step_s:g}s"
        )
    with _no_interrupts():
        metrics_path = writer.finish()
        plan_path = None
        if plan is not None:
            plan_path = out_dir / PLAN_FILE
            write_json_atomic(plan_path, plan)
        write_json_atomic(out_dir / JOB_FILE, _placement(series, names, job_id, job_name))
        notes = [n for n in (attempts.note(),) if n]
        checkpoints_path = None
        if stop_reason == "complete":
            log = prometheus_log(lambda g: _job_gauge(client, options, job_id, g), job_id, job_name)
            if log is not None:
                checkpoints_path = write_log(out_dir, log)
            else:
                notes.append("no checkpoint statistics: Prometheus has no flink_jobmanager_job_"
                             "lastCheckpointDuration for this job (checkpointing off, or the JobManager "
                             "not scraped)")
        if plan is None:
            notes.append(
                "no job plan (give --url of the JobManager or HistoryServer, or --plan FILE): task names "
                "are the filtered label values and the analysis cannot tell the edges"
            )
        write_json_atomic(
            out_dir / QUERY_FILE,
            {
                "prometheus": client.base_url,
                "job_id": job_id,
                "start": _iso(options.start_s),
                "end": _iso(options.end_s),
                "step_s": options.step_s,
                "chunks_done": done_chunks,
                "chunks": len(chunks),
                "metrics": dict(sorted(chosen.items())),
                "series": used_series,
                "restarted_subtasks": attempts.restarted(),
                "notes": notes,
            },
        )
    return PrometheusResult(
        job_id,
        job_name,
        used_series,
        len(chosen),
        len(chunks),
        client.requests,
        writer.rows_written,
        metrics_path,
        plan_path,
        plan_source,
        tuple(notes),
        stop_reason,
        checkpoints_path,
    )
