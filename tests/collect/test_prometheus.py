"""`flinktune collect --prometheus` and the query_range reader, against answers recorded from a real
Prometheus 2.42 (Debian's package) scraping a real Flink 1.20.5 with its PrometheusReporter
(tests/e2e_flink/prometheus_run.py --capture wrote tests/data/prometheus/):

- ``skew/``: every metric collect asks for (plus the deprecated ``buffers_*`` copies) of the
  skewed-key job (4 vertices x 4 subtasks, step 2 s), its /jobs/:id/plan and a /api/v1/series answer;
- ``restart/``: a job (p=2) that lost a TaskManager and restarted: ``task_attempt_num`` 0 and 1,
  counters starting again from 0.

A small HTTP server on 127.0.0.1 replays them the way Prometheus's HTTP API answers
(``/api/v1/series``, ``/api/v1/query_range`` with its 11,000-points-per-series limit), with faults
injected per test (a token it requires, a delay, nothing listening).
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pyarrow.parquet as pq
import pytest
from testkit import default_sigint
from typer.testing import CliRunner

from flinktune.analysis.readers import prometheus_range
from flinktune.cli.app import app
from flinktune.collect.prometheus import time_chunks, wanted_names

DATA = Path(__file__).resolve().parents[1] / "data" / "prometheus"
SKEW = DATA / "skew"
RESTART = DATA / "restart"
runner = CliRunner()


def _load(folder: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for f in sorted(folder.glob("*.json.gz")):
        out[f.name[: -len(".json.gz")]] = json.loads(gzip.decompress(f.read_bytes()))
    return out


def _meta(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "meta.json").read_text())


@dataclass
class Replay:
    """Recorded answers keyed by metric name, served like Prometheus's HTTP API."""

    answers: dict[str, dict[str, Any]]
    token: str | None = None
    delay_s: float = 0.0
    requests: list[tuple[str, dict[str, list[str]]]] = field(default_factory=list)
    points_asked: list[int] = field(default_factory=list)
    url: str = ""

    def series(self, form: dict[str, list[str]]) -> dict[str, Any]:
        match = form["match[]"][0]
        name_re = re.search(r'__name__=~"((?:[^"\\]|\\.)*)"', match)
        pattern = re.compile(name_re.group(1).replace("\\\\", "\\")) if name_re else None
        label_eq = dict(re.findall(r'(job_id|job_name)="([^"]*)"', match))
        label_re = dict(re.findall(r'(job_name)=~"([^"]*)"', match))
        out = []
        for name, answer in self.answers.items():
            if pattern is not None and not pattern.fullmatch(name):
                continue
            for s in answer["data"]["result"]:
                labels = s["metric"]
                if any(labels.get(k) != v for k, v in label_eq.items()):
                    continue
                if any(
                    not re.fullmatch(v.replace("\\\\", "\\"), labels.get(k, "")) for k, v in label_re.items()
                ):
                    continue
                out.append(labels)
        return {"status": "success", "data": out}

    def query_range(self, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        query = form["query"][0]
        start, end, step = float(form["start"][0]), float(form["end"][0]), float(form["step"][0])
        points = int((end - start) / step) + 1
        self.points_asked.append(points)
        if points > 11_000:  # Prometheus's own refusal (web/api/v1/api.go)
            return 400, {
                "status": "error",
                "errorType": "bad_data",
                "error": "exceeded maximum resolution of 11,000 points per timeseries. "
                "Try decreasing the query resolution (?step=XX)",
            }
        name = query.split("{", 1)[0]
        job = re.search(r'job_id="([^"]*)"', query)
        result = []
        for s in self.answers.get(name, {"data": {"result": []}})["data"]["result"]:
            if job and s["metric"].get("job_id") != job.group(1):
                continue
            values = [v for v in s["values"] if start - 1e-6 <= float(v[0]) <= end + 1e-6]
            if values:
                result.append({"metric": s["metric"], "values": values})
        return 200, {"status": "success", "data": {"resultType": "matrix", "result": result}}


@pytest.fixture
def replay(request) -> Iterator[Replay]:
    folder = getattr(request, "param", SKEW)
    state = Replay(_load(folder))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        shared: ClassVar[Replay] = state

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, document: Any) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            # A HistoryServer (or JobManager) for --url: the archived /jobs/:id/plan, no /jobs/:id.
            plan = json.loads((SKEW / "plan.json").read_text())
            if self.path == f"/jobs/{plan['plan']['jid']}/plan":
                self._send(200, plan)
            else:
                self._send(404, {"errors": ["Not Found"]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            st = self.shared
            st.requests.append((self.path, form))
            if st.delay_s:
                time.sleep(st.delay_s)
            if st.token is not None and self.headers.get("Authorization") != f"Bearer {st.token}":
                self._send(401, {"status": "error", "error": "unauthorized"})
                return
            if self.path == "/api/v1/series":
                self._send(200, st.series(form))
            elif self.path == "/api/v1/query_range":
                self._send(*st.query_range(form))
            else:
                self._send(404, {"status": "error", "error": "not found"})

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a client that gave up (the slow-server test) is expected, not news

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _collect(replay: Replay, out: Path, *extra: str, folder: Path = SKEW):
    meta = _meta(folder)
    return runner.invoke(
        app,
        [
            "collect",
            "--prometheus",
            replay.url,
            "--since",
            f"{meta['start']:.3f}",
            "--until",
            f"{meta['end']:.3f}",
            "--step",
            meta["step"],
            "-o",
            str(out),
            *extra,
        ],
    )


def _one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("flinktune: error: "), result.output
    return lines[0]


# --- naming, straight from the recording -----------------------------------------------------------


def test_recorded_names_are_flinks():
    answers = _load(SKEW)
    # Each metric collect asks for exists under the name AbstractPrometheusReporter gives it.
    assert "flink_taskmanager_job_task_Shuffle_Netty_Input_Buffers_inPoolUsage" in answers
    assert "flink_taskmanager_job_task_buffers_inPoolUsage" in answers  # the deprecated copy (<= 1.20)
    labels = answers["flink_taskmanager_job_task_busyTimeMsPerSecond"]["data"]["result"][0]["metric"]
    assert {
        "job_id",
        "job_name",
        "task_id",
        "task_name",
        "subtask_index",
        "tm_id",
        "host",
        "task_attempt_num",
    } <= set(labels)
    names = {
        s["metric"]["task_name"]
        for s in answers["flink_taskmanager_job_task_busyTimeMsPerSecond"]["data"]["result"]
    }
    # filterLabelValueCharacters (default true): "SinkWork -> Discard: Writer" arrives filtered.
    assert "SinkWork____Discard:_Writer" in names
    assert {n for n in wanted_names() if n in answers} >= {
        "flink_taskmanager_job_task_busyTimeMsPerSecond",
        "flink_taskmanager_job_task_Shuffle_Netty_Output_Buffers_outPoolUsage",
        "flink_taskmanager_job_task_numRecordsIn",
    }


def test_time_chunks_stay_under_the_limit():
    chunks = time_chunks(0.0, 6 * 3600.0, 1.0, 10_000)
    assert len(chunks) == 3
    assert all((hi - lo) / 1.0 + 1 <= 10_000 for lo, hi in chunks)
    assert chunks[0][0] == 0.0 and chunks[-1][1] == 6 * 3600.0
    # Consecutive chunks share no evaluation point.
    assert all(b[0] == a[1] + 1.0 for a, b in itertools.pairwise(chunks))


# --- collect against the replayed real answers ------------------------------------------------------


def test_collect_writes_the_canonical_dump_with_plan_names(replay, tmp_path):
    out = tmp_path / "dump"
    result = _collect(replay, out, "--plan", str(SKEW / "plan.json"))
    assert result.exit_code == 0, result.output
    table = pq.read_table(out / "metrics.parquet").to_pylist()
    assert not (out / "metrics.parts").exists()
    tasks = {r["task_name"] for r in table}
    assert tasks == {"Source: Gen", "Parse", "KeyedAgg", "SinkWork -> Discard: Writer"}  # from the plan
    metrics = {r["metric"] for r in table}
    assert {
        "inPoolUsage",
        "outPoolUsage",
        "busyTimeMsPerSecond",
        "numRecordsIn",
        "isBackPressured",
    } <= metrics
    # One value per (metric, subtask, instant): the Shuffle_Netty names won over buffers_* copies.
    keys = [(r["metric"], r["vertex_id"], r["subtask_index"], r["ts"]) for r in table]
    assert len(keys) == len(set(keys))
    asked = {
        form["query"][0].split("{")[0] for path, form in replay.requests if path == "/api/v1/query_range"
    }
    assert "flink_taskmanager_job_task_Shuffle_Netty_Input_Buffers_inPoolUsage" in asked
    assert not any("_buffers_" in q for q in asked)
    # The values are the recorded ones, exactly.
    recorded = _load(SKEW)["flink_taskmanager_job_task_busyTimeMsPerSecond"]["data"]["result"][0]
    sub, vid = int(recorded["metric"]["subtask_index"]), recorded["metric"]["task_id"]
    want = {round(float(t) * 1000): float(v) for t, v in recorded["values"]}
    got = {
        r["ts"]: r["value"]
        for r in table
        if r["metric"] == "busyTimeMsPerSecond" and r["vertex_id"] == vid and r["subtask_index"] == sub
    }
    assert got == pytest.approx(want, nan_ok=True)
    placement = json.loads((out / "job.json").read_text())
    assert sum(len(v["subtasks"]) for v in placement["vertices"]) == 16


def test_plan_from_a_history_server(replay, tmp_path):
    out = tmp_path / "dump"
    result = _collect(replay, out, "--url", replay.url)
    assert result.exit_code == 0, result.output
    assert f"plan from {replay.url}/jobs/" in result.output
    plan = json.loads((out / "plan.json").read_text())
    assert plan == json.loads((SKEW / "plan.json").read_text())
    tasks = {r["task_name"] for r in pq.read_table(out / "metrics.parquet").to_pylist()}
    assert "SinkWork -> Discard: Writer" in tasks  # from the plan's description, not the label


def test_collect_without_plan_keeps_filtered_names_and_says_so(replay, tmp_path):
    result = _collect(replay, tmp_path / "dump")
    assert result.exit_code == 0, result.output
    assert "no job plan" in result.output
    tasks = {r["task_name"] for r in pq.read_table(tmp_path / "dump" / "metrics.parquet").to_pylist()}
    assert "SinkWork____Discard:_Writer" in tasks
    assert not (tmp_path / "dump" / "plan.json").exists()


def test_chunks_never_pass_the_points_limit(replay, tmp_path):
    """A step so fine that the range needs several requests per metric; the dump is the same."""
    meta = _meta(SKEW)
    assert 20_000 < (meta["end"] - meta["start"]) * 1000 < 30_000  # at a 1 ms step: three chunks
    out = tmp_path / "dump"
    result = runner.invoke(
        app,
        [
            "collect", "--prometheus", replay.url, "--since", f"{meta['start']:.3f}", "--until",
            f"{meta['end']:.3f}", "--step", "1ms", "-o", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert max(replay.points_asked) <= 10_000
    assert len(replay.points_asked) >= 3 * len(json.loads((out / "prometheus.json").read_text())["metrics"])
    # The replay returns the recorded samples inside each chunk: every one arrives exactly once.
    rows = pq.read_table(out / "metrics.parquet").to_pylist()
    busy = [r for r in rows if r["metric"] == "busyTimeMsPerSecond"]
    recorded = _load(SKEW)["flink_taskmanager_job_task_busyTimeMsPerSecond"]["data"]["result"]
    assert len(busy) == sum(len(s["values"]) for s in recorded)


@pytest.mark.parametrize("replay", [RESTART], indirect=True)
def test_restart_shows_as_new_attempts_and_counter_resets(replay, tmp_path):
    out = tmp_path / "dump"
    result = _collect(replay, out, "--job-id", _meta(RESTART)["job_id"], folder=RESTART)
    assert result.exit_code == 0, result.output
    assert "the job restarted" in result.output and "task_attempt_num up to 3" in result.output
    recorded = _load(RESTART)["flink_taskmanager_job_task_numRecordsIn"]["data"]["result"]
    assert {s["metric"]["task_attempt_num"] for s in recorded} == {"0", "3"}
    rows = [r for r in pq.read_table(out / "metrics.parquet").to_pylist() if r["metric"] == "numRecordsIn"]
    keys = [(r["vertex_id"], r["subtask_index"], r["ts"]) for r in rows]
    assert len(keys) == len(set(keys))  # one value per instant even where attempts overlap
    # The counter drops at the restart (a reset the analysis turns into a rate, not a negative one).
    by_series: dict[tuple[str, int], list[tuple[int, float]]] = {}
    for r in rows:
        by_series.setdefault((r["vertex_id"], r["subtask_index"]), []).append((r["ts"], r["value"]))
    drops = [
        k
        for k, pts in by_series.items()
        if any(b[1] < a[1] for a, b in zip(sorted(pts), sorted(pts)[1:], strict=False))
    ]
    assert drops
    assert json.loads((out / "prometheus.json").read_text())["restarted_subtasks"] > 0


# --- failures: one line, exit 2, nothing half-written ----------------------------------------------


def test_missing_series(replay, tmp_path):
    out = tmp_path / "dump"
    line = _one_error_line(_collect(replay, out, "--job-name", "no-such-job"))
    assert "no Flink task metrics" in line and "'no-such-job'" in line
    assert not out.exists()


def test_series_without_samples(replay, tmp_path):
    """Series listed for the range but no sample inside it (they ended before it, say)."""
    for answer in replay.answers.values():
        for s in answer["data"]["result"]:
            s["values"] = []
    out = tmp_path / "dump"
    line = _one_error_line(_collect(replay, out))
    assert "returned no samples" in line
    assert not out.exists()


def test_auth_failure_then_token_from_env(replay, tmp_path, monkeypatch):
    replay.token = "s3cret"
    out = tmp_path / "dump"
    line = _one_error_line(_collect(replay, out))
    assert "HTTP 401" in line and "no credentials" in line and "s3cret" not in line
    assert not out.exists()
    monkeypatch.setenv("FLINKTUNE_PROMETHEUS_TOKEN", "wrong")
    line = _one_error_line(_collect(replay, out))
    assert "credentials from $FLINKTUNE_PROMETHEUS_TOKEN" in line and "wrong" not in line
    assert not out.exists()
    monkeypatch.setenv("FLINKTUNE_PROMETHEUS_TOKEN", "s3cret")
    assert _collect(replay, out).exit_code == 0
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    monkeypatch.delenv("FLINKTUNE_PROMETHEUS_TOKEN")
    assert _collect(replay, tmp_path / "dump2", "--token-file", str(token_file)).exit_code == 0


def test_a_redirect_is_refused_and_the_token_stays_home(tmp_path, monkeypatch):
    """urllib follows a 302 to any host with every header; the collector must not: the token would
    reach whatever server the redirect names."""
    seen: list[str | None] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()

        do_POST = do_GET

    other = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    target = f"http://127.0.0.1:{other.server_address[1]}/api/v1/series"

    class Redirecting(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

    home = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    threads = [threading.Thread(target=srv.serve_forever, daemon=True) for srv in (other, home)]
    for t in threads:
        t.start()
    try:
        monkeypatch.setenv("FLINKTUNE_PROMETHEUS_TOKEN", "s3cret")
        out = tmp_path / "dump"
        result = runner.invoke(app, ["collect", "--prometheus", f"http://127.0.0.1:{home.server_address[1]}",
                                     "--last", "1h", "--retries", "1", "-o", str(out)])
        line = _one_error_line(result)
        assert "HTTP 302" in line and "s3cret" not in line
        assert seen == [] and not out.exists()
    finally:
        for srv in (other, home):
            srv.shutdown()
            srv.server_close()


def test_failure_mid_pull_leaves_nothing(replay, tmp_path):
    """Auth lost after discovery (a token expiring): the parts written so far are removed."""
    out = tmp_path / "dump"
    original = replay.query_range

    def expire(form):
        replay.token = "rotated"
        return original(form)

    replay.query_range = expire  # type: ignore[method-assign]
    line = _one_error_line(_collect(replay, out))
    assert "HTTP 401" in line
    assert not out.exists()


def test_unreachable_server(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    out = tmp_path / "dump"
    result = runner.invoke(
        app,
        [
            "collect",
            "--prometheus",
            f"http://127.0.0.1:{port}",
            "--last",
            "1h",
            "--retries",
            "1",
            "-o",
            str(out),
        ],
    )
    line = _one_error_line(result)
    assert "cannot reach Prometheus" in line and "connection refused" in line
    assert not out.exists()


def test_slow_server(replay, tmp_path):
    replay.delay_s = 1.5
    out = tmp_path / "dump"
    line = _one_error_line(_collect(replay, out, "--timeout", "300ms", "--retries", "1"))
    assert "timed out" in line and "gave up after 2 attempts" in line
    assert not out.exists()


def test_existing_dump_is_not_touched(replay, tmp_path):
    out = tmp_path / "dump"
    out.mkdir()
    (out / "metrics.parquet").write_bytes(b"old")
    line = _one_error_line(_collect(replay, out))
    assert "already exists" in line
    assert (out / "metrics.parquet").read_bytes() == b"old"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--since", "yesterday"], "is not a time"),
        (["--last", "2"], "unit"),
        (["--last", "2h", "--since", "0"], "not both"),
        ([], "needs a time range"),
        (["--last", "1h", "--job", "nothex"], "32 hex digits"),
    ],
)
def test_bad_arguments(args, needle, tmp_path):
    result = runner.invoke(
        app, ["collect", "--prometheus", "http://127.0.0.1:9", *args, "-o", str(tmp_path / "d")]
    )
    assert needle in _one_error_line(result)


def test_prometheus_only_flags_need_prometheus(tmp_path):
    result = runner.invoke(app, ["collect", "--last", "1h", "-o", str(tmp_path / "d")])
    assert "go with --prometheus" in _one_error_line(result)


# --- the offline reader ------------------------------------------------------------------------------


def test_reader_reads_saved_answers_gzipped_or_not(tmp_path):
    plain = tmp_path / "busy.json"
    plain.write_bytes(
        gzip.decompress((SKEW / "flink_taskmanager_job_task_busyTimeMsPerSecond.json.gz").read_bytes())
    )
    assert prometheus_range.claims(str(plain))
    assert prometheus_range.claims(str(SKEW / "flink_taskmanager_job_task_numRecordsIn.json.gz"))
    table, attempts = prometheus_range.read_files(
        [str(plain), str(SKEW / "flink_taskmanager_job_task_numRecordsIn.json.gz")]
    )
    assert set(table.column("metric").to_pylist()) == {
        "flink_taskmanager_job_task_busyTimeMsPerSecond",
        "flink_taskmanager_job_task_numRecordsIn",
    }
    assert attempts.note() is None
    lines = tmp_path / "lines.json"
    lines.write_text('{"ts": 1, "metric": "outPoolUsage", "value": 0.5}\n')
    assert not prometheus_range.claims(str(lines))


def test_reader_refuses_an_error_answer(tmp_path):
    bad = tmp_path / "err.json"
    bad.write_text('{"status":"error","errorType":"bad_data","error":"parse error"}')
    from flinktune.errors import MetricsError

    with pytest.raises(MetricsError, match="Prometheus answered an error: parse error"):
        prometheus_range.read_files([str(bad)])


# --- signals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_mid_pull_keeps_a_complete_dump(replay, tmp_path, sig):
    """Like REST collect (docs/collect.md): what was pulled is merged into a complete dump and the
    summary says 'stopped early'. (The exit code follows the CLI's shared signal policy in
    cli/app.py: 0, or 128 + the signal once that policy reports every signalled run.)"""
    replay.delay_s = 0.25  # ~33 requests: several seconds of pulling
    meta = _meta(SKEW)
    out = tmp_path / "dump"
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "flinktune", "collect", "--prometheus", replay.url, "--since",
            f"{meta['start']:.3f}", "--until", f"{meta['end']:.3f}", "--step", "2s", "-o", str(out),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list((out / "metrics.parts").glob("part-*.parquet"))) < 2:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (0, 128 + sig), stderr
    assert stdout.startswith("stopped early: "), stdout
    assert "Traceback" not in stderr
    rows = pq.read_table(out / "metrics.parquet").num_rows
    assert 0 < rows < 13_824 // 2  # a few metrics' answers, not all of them
    assert not (out / "metrics.parts").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left


def test_checkpoints_come_from_the_jobmanagers_gauges(replay, tmp_path):
    """The JobManager's job-scoped checkpoint gauges (flink_jobmanager_job_*), as the reporter names
    them, give checkpoints.json beside the dump (synthetic values on the recorded run's time grid)."""
    meta = _meta(SKEW)
    grid = [meta["start"] + 2 * i for i in range(int((meta["end"] - meta["start"]) // 2) + 1)]
    labels = {"job_id": meta["job_id"], "job_name": "skew", "host": "localhost", "job": "flink"}

    def series(name: str, value) -> None:  # type: ignore[no-untyped-def]
        values = [[t, str(value(i))] for i, t in enumerate(grid)]
        result = [{"metric": {"__name__": name, **labels}, "values": values}]
        replay.answers[f"flink_jobmanager_job_{name}"] = {
            "status": "success",
            "data": {"resultType": "matrix", "result": result},
        }

    series("lastCompletedCheckpointId", lambda i: i // 3)  # a checkpoint every 6 s
    series("lastCheckpointDuration", lambda i: 400 + 10 * (i // 3))
    series("lastCheckpointFullSize", lambda i: 1000)
    series("numberOfFailedCheckpoints", lambda i: 0)
    out = tmp_path / "dump"
    result = _collect(replay, out, "--plan", str(SKEW / "plan.json"))
    assert result.exit_code == 0, result.output
    from flinktune.analysis import checkpoints as ckpt

    log = ckpt.read(out / ckpt.CHECKPOINTS_FILE)
    assert log.source == "prometheus" and log.job_id == meta["job_id"]
    ids = [c.id for c in log.checkpoints]
    assert ids == list(range(1, (len(grid) - 1) // 3 + 1))
    assert [c.duration_ms for c in log.checkpoints] == [400.0 + 10 * i for i in ids]
    assert {c.full_size_bytes for c in log.checkpoints} == {1000.0}
