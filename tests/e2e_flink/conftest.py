"""A real standalone Flink 1.20 cluster on 127.0.0.1 for the end-to-end tests (pytest marker ``flink``).

The Flink distribution comes from the ``apache-flink`` package that ``.ci/run`` installs into
``.flink-venv/`` (or from ``$FLINK_HOME``). One JobManager and two TaskManagers are started with the
distribution's own ``bin/jobmanager.sh`` / ``bin/taskmanager.sh start-foreground`` (which exec the
JVM, so the PID we hold is the JVM's), each with its own configuration folder, logs and PID folder
under a temporary directory; the package's own ``conf/`` is never touched. Every process started
here is stopped by PID in the fixture finalizers (also when a test fails) and again at exit.

Jobs are our own Java sources in ``jobs/``, compiled with ``javac`` against ``flink-dist`` and
submitted through the REST API (``/jars/upload``, ``/jars/:id/run``) so no extra client JVM starts.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
JOB_SOURCES = Path(__file__).resolve().parent / "jobs"
JOB_CLASS = "flinktune.e2e.NetworkJob"
LOOPBACK = "127.0.0.1"  # never any other address
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_STARTED: list[subprocess.Popen[bytes]] = []


def find_flink_home(series: str = "1.20", venv: str = ".flink-venv") -> tuple[Path | None, str]:
    """The Flink distribution of `series` ("1.20", or "2." for any 2.x) to use, or None and why not.

    1.20 comes from ``.flink-venv`` or ``$FLINK_HOME``; 2.x from ``.flink2-venv`` or ``$FLINK2_HOME``.
    """
    label = f"{series}x" if series.endswith(".") else series
    candidates = []
    env_var = "FLINK_HOME" if series.startswith("1.") else "FLINK2_HOME"
    if os.environ.get(env_var):
        candidates.append(Path(os.environ[env_var]))
    candidates.extend(sorted((REPO / venv / "lib").glob("python3*/site-packages/pyflink")))
    for home in candidates:
        has_dist = bool(list((home / "lib").glob(f"flink-dist-{series}*.jar")))
        if has_dist and (home / "bin" / "jobmanager.sh").exists():
            return home, ""
    if not candidates:
        return (
            None,
            f"no Flink {label} distribution: {venv} (see .ci/run) and {env_var} are absent",
        )
    return (
        None,
        f"no Flink {label} distribution (lib/flink-dist-{series}*.jar, bin/) in "
        f"{', '.join(map(str, candidates))}",
    )


def flink_dist_version(home: Path) -> str:
    """``2.3.0`` from ``lib/flink-dist-2.3.0.jar``."""
    return next((home / "lib").glob("flink-dist-*.jar")).name.removeprefix("flink-dist-").removesuffix(".jar")


def _java_missing() -> str:
    for tool in ("java", "javac", "jar"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH (the real-Flink tests need a JDK 17)"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def yaml_lines(config: dict[str, Any]) -> str:
    """Flat keys with plain values, as a user writes them (valid in both of Flink's config formats)."""

    def plain(value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return "".join(f"{key}: {plain(value)}\n" for key, value in config.items())


def run_driver(
    command: Callable[[Path], list[str]], prefix: str, flink_home: Path, what: str
) -> dict[str, Any]:
    """Run an end-to-end driver (``command(work folder)``) in its own session and return the JSON
    summary it prints last; its work folder goes afterwards (kept with FLINKTUNE_E2E_KEEP). A summary
    with "skip" skips the test, naming ``what``. The driver stops its own processes by PID on SIGTERM."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    proc = subprocess.Popen(
        command(work),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "FLINK_HOME": str(flink_home)},
    )
    try:
        stdout, stderr = proc.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if not os.environ.get("FLINKTUNE_E2E_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
    assert proc.returncode == 0, stderr[-4000:]
    summary: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    if "skip" in summary:
        pytest.skip(f"{what} skipped: {summary['skip']}")
    return summary


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


@atexit.register
def _stop_everything() -> None:
    for proc in list(_STARTED):
        _stop(proc, grace_s=5.0)


class FlinkCluster:
    """One JobManager and a set of TaskManagers (replaceable with another TaskManager config)."""

    def __init__(self, home: Path, work: Path) -> None:
        self.home = home
        self.work = work
        self.rest_port = free_port()
        self.url = f"http://{LOOPBACK}:{self.rest_port}"
        self.base_config: dict[str, Any] = {
            "jobmanager.rpc.address": LOOPBACK,
            "jobmanager.bind-host": LOOPBACK,
            "jobmanager.rpc.port": free_port(),
            "jobmanager.memory.process.size": "1g",
            "jobmanager.execution.failover-strategy": "region",
            "rest.address": LOOPBACK,
            "rest.bind-address": LOOPBACK,
            "rest.port": self.rest_port,
            "taskmanager.host": LOOPBACK,
            "taskmanager.bind-host": LOOPBACK,
            "taskmanager.numberOfTaskSlots": 2,
            "taskmanager.memory.process.size": "1g",
            "taskmanager.memory.managed.fraction": 0.1,
            "cluster.evenly-spread-out-slots": True,
            "parallelism.default": 4,
            # REST metric values refresh this often (default 10 s): real-flink-notes.md.
            "metrics.fetcher.update-interval": 1000,
            "restart-strategy.type": "none",
            "heartbeat.timeout": 20000,
            "slot.request.timeout": 60000,
            "io.tmp.dirs": str(work / "tmp"),
            # The distribution's JVM options for Java 17, unchanged.
            "env.java.opts.all": self._dist_java_opts(),
        }
        self.jobmanager: subprocess.Popen[bytes] | None = None
        self.taskmanagers: list[subprocess.Popen[bytes]] = []
        self.tm_config_text: str | None = None
        self.console_logs: dict[int, Path] = {}
        self.tm_config_file: Path | None = None  # the config.yaml the running TaskManagers read
        (work / "tmp").mkdir(parents=True, exist_ok=True)

    def _dist_java_opts(self) -> str:
        text = (self.home / "conf" / "config.yaml").read_text(encoding="utf-8")
        for line in text.splitlines():
            if line.strip().startswith("all: --add-exports"):
                return line.strip()[len("all: ") :]
        return ""

    # --- processes -------------------------------------------------------------------------------
    def _conf_dir(self, name: str, config_text: str) -> Path:
        conf = self.work / "conf" / name
        conf.mkdir(parents=True, exist_ok=True)
        for extra in ("log4j-console.properties", "logback-console.xml"):
            shutil.copy(self.home / "conf" / extra, conf / extra)
        (conf / "config.yaml").write_text(config_text, encoding="utf-8")
        return conf

    def _start(self, script: str, name: str, config_text: str,
               prefix: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
        """``prefix``: a command that execs the script elsewhere (``ip netns exec NS``); the PID held
        stays the JVM's because every step execs the next."""
        conf = self._conf_dir(name, config_text)
        logs = self.work / "logs" / name
        logs.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLINK_", "_FLINK"))}
        env.update(FLINK_CONF_DIR=str(conf), FLINK_LOG_DIR=str(logs), FLINK_PID_DIR=str(logs))
        out = open(logs / "console.out", "wb")  # noqa: SIM115 - the child keeps its own descriptor
        proc = subprocess.Popen(
            [*prefix, "bash", str(self.home / "bin" / script), "start-foreground"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=self.work,
            start_new_session=True,
        )
        out.close()
        _STARTED.append(proc)
        self.console_logs[proc.pid] = logs / "console.out"
        return proc

    def start_jobmanager(self, timeout_s: float = 180) -> None:
        self.jobmanager = self._start("jobmanager.sh", "jobmanager", yaml_lines(self.base_config))
        self._wait(
            lambda: self.get("/overview") is not None,
            timeout_s,
            "the JobManager's REST API",
            [self.jobmanager],
        )

    def use_taskmanagers(self, count: int = 2, **overrides: Any) -> None:
        """Run `count` TaskManagers with the base config plus `overrides` (restarting them if it differs)."""
        config = {**self.base_config, **overrides}
        self._restart_taskmanagers(count, yaml_lines(config), int(config["taskmanager.numberOfTaskSlots"]))

    def use_taskmanagers_with_file(self, config_file: Path, slots: int, count: int = 2) -> None:
        """Run `count` TaskManagers that read `config_file` as it is, byte for byte."""
        self._restart_taskmanagers(count, config_file.read_text(encoding="utf-8"), slots)

    def _restart_taskmanagers(self, count: int, config_text: str, slots: int) -> None:
        if (
            config_text == self.tm_config_text
            and len(self.taskmanagers) == count
            and all(p.poll() is None for p in self.taskmanagers)
        ):
            return
        self.cancel_all_jobs()
        for proc in self.taskmanagers:
            _stop(proc)
        self._wait(lambda: not self.get("/taskmanagers")["taskmanagers"], 60, "old TaskManagers to leave", [])
        tag = uuid.uuid4().hex[:6]
        names = [f"taskmanager-{tag}-{i}" for i in range(count)]
        self.taskmanagers = [self._start("taskmanager.sh", name, config_text) for name in names]
        self.tm_config_text = config_text
        self.tm_config_file = self.work / "conf" / names[0] / "config.yaml"
        self._wait(
            lambda: self._free_slots() == count * slots,
            180,
            f"{count} TaskManagers with {slots} slots",
            self.taskmanagers,
        )

    def stop(self) -> None:
        for proc in [*self.taskmanagers, *([self.jobmanager] if self.jobmanager else [])]:
            _stop(proc)

    def _wait(self, ready: Any, timeout_s: float, what: str, procs: list[subprocess.Popen[bytes]]) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for proc in procs:
                if proc.poll() is not None:
                    log = self.console_logs.get(proc.pid)
                    tail = log.read_text(errors="replace").splitlines()[-15:] if log and log.exists() else []
                    raise RuntimeError(
                        f"a Flink process exited ({proc.returncode}) while waiting for {what}; "
                        f"logs in {self.work / 'logs'}; last lines:\n" + "\n".join(tail)
                    )
            try:
                if ready():
                    return
            except (OSError, KeyError, TypeError, ValueError):
                pass
            time.sleep(0.5)
        raise TimeoutError(
            f"timed out after {timeout_s:.0f} s waiting for {what}; logs in {self.work / 'logs'}"
        )

    # --- REST ------------------------------------------------------------------------------------
    def get(self, path: str) -> Any:
        try:
            with _NO_PROXY.open(self.url + path, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.URLError:
            return None

    def _send(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> Any:
        request = urllib.request.Request(
            self.url + path, data=body, method=method, headers={"Content-Type": content_type}
        )
        try:
            with _NO_PROXY.open(request, timeout=60) as response:
                data = response.read()
        except urllib.error.HTTPError as error:
            # Flink's REST errors carry the reason in the body: keep it in the message.
            error.msg = f"{error.msg}: {error.read().decode(errors='replace')[:3000]}"
            raise
        return json.loads(data) if data else None

    def _free_slots(self) -> int:
        overview = self.get("/overview")
        return int(overview["slots-available"]) if overview else -1

    def upload_jar(self, jar: Path) -> str:
        boundary = uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="jarfile"; filename="{jar.name}"\r\n'
                "Content-Type: application/x-java-archive\r\n\r\n"
            ).encode()
            + jar.read_bytes()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        reply = self._send("POST", "/jars/upload", body, f"multipart/form-data; boundary={boundary}")
        return str(reply["filename"]).rsplit("/", 1)[-1]

    def submit(self, jar_id: str, parallelism: int, **args: Any) -> str:
        program_args = [str(x) for key, value in args.items() for x in (f"--{key.replace('_', '-')}", value)]
        reply = self._send(
            "POST",
            f"/jars/{jar_id}/run",
            json.dumps(
                {"entryClass": JOB_CLASS, "programArgsList": program_args, "parallelism": parallelism}
            ).encode(),
        )
        return str(reply["jobid"])

    def job_state(self, job_id: str) -> str:
        return str(self.get(f"/jobs/{job_id}")["state"])

    def wait_running(self, job_id: str, timeout_s: float = 90) -> None:
        """Until the job and every subtask run (metrics exist only for running subtasks)."""

        def all_running() -> bool:
            job = self.get(f"/jobs/{job_id}")
            if job["state"] in ("FAILED", "CANCELED", "FINISHED"):
                raise AssertionError(f"job {job_id} is {job['state']}: {self.root_exception(job_id)}")
            return job["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in job["vertices"])

        self._wait(all_running, timeout_s, f"job {job_id} to run", [])

    def wait_terminal(self, job_id: str, timeout_s: float = 90) -> str:
        self._wait(
            lambda: self.job_state(job_id) in ("FAILED", "CANCELED", "FINISHED"),
            timeout_s,
            f"job {job_id} to end",
            [],
        )
        return self.job_state(job_id)

    def root_exception(self, job_id: str) -> str:
        info = self.get(f"/jobs/{job_id}/exceptions") or {}
        history = info.get("exceptionHistory", {}).get("entries", [])
        texts = [str(info.get("root-exception") or "")] + [str(e.get("stacktrace", "")) for e in history]
        return "\n".join(t for t in texts if t)

    def cancel(self, job_id: str) -> None:
        try:
            self._send("PATCH", f"/jobs/{job_id}?mode=cancel")
        except urllib.error.HTTPError:
            return
        self.wait_terminal(job_id)

    def cancel_all_jobs(self) -> None:
        overview = self.get("/jobs/overview") or {"jobs": []}
        for job in overview["jobs"]:
            if job["state"] not in ("FAILED", "CANCELED", "FINISHED"):
                self.cancel(job["jid"])

    def taskmanager_ids(self) -> list[str]:
        return sorted(tm["id"] for tm in self.get("/taskmanagers")["taskmanagers"])


@pytest.fixture(scope="session")
def flink_home() -> Path:
    home, why = find_flink_home()
    if home is None:
        pytest.skip(f"real-Flink tests skipped: {why}")
    missing = _java_missing()
    if missing:
        pytest.skip(f"real-Flink tests skipped: {missing}")
    return home


@pytest.fixture(scope="session")
def e2e_dir(flink_home: Path) -> Iterator[Path]:
    """Our own scratch folder (not pytest's basetemp, which concurrent pytest runs prune)."""
    path = Path(tempfile.mkdtemp(prefix="flinktune-e2e-"))
    try:
        yield path
    finally:
        if os.environ.get("FLINKTUNE_E2E_KEEP"):
            print(f"real-Flink test files kept in {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


def build_job_jar(home: Path, build: Path) -> Path:
    """Our job sources compiled against `home`'s flink-dist (the same sources serve 1.20 and 2.x)."""
    dist = next((home / "lib").glob("flink-dist-*.jar"))
    subprocess.run(
        [
            "javac",
            "-nowarn",
            "-cp",
            str(dist),
            "-d",
            str(build / "classes"),
            *map(str, sorted(JOB_SOURCES.glob("*.java"))),
        ],
        check=True,
        capture_output=True,
    )
    jar = build / "flinktune-e2e-jobs.jar"
    subprocess.run(
        ["jar", "cf", str(jar), "-C", str(build / "classes"), "."], check=True, capture_output=True
    )
    return jar


@pytest.fixture(scope="session")
def job_jar(flink_home: Path, e2e_dir: Path) -> Path:
    return build_job_jar(flink_home, e2e_dir / "job-build")


@pytest.fixture(scope="session")
def flink_cluster(flink_home: Path, e2e_dir: Path) -> Iterator[FlinkCluster]:
    work = e2e_dir / "cluster"
    cluster = FlinkCluster(flink_home, work)
    try:
        cluster.start_jobmanager()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def jar_id(flink_cluster: FlinkCluster, job_jar: Path) -> str:
    return flink_cluster.upload_jar(job_jar)


def run_flinktune(*args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """The real CLI in a fresh interpreter, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "flinktune", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=REPO,
    )


@pytest.fixture(scope="session")
def flinktune_cli() -> Any:
    return run_flinktune


# --- Flink 2.x (the newest 2.x on PyPI, installed by .ci/run into .flink2-venv) ---------------------
# Flink 2.x reads only conf/config.yaml (bin/config.sh @2.3.0: setJavaRun "$FLINK_CONF_DIR/config.yaml"),
# which is the file FlinkCluster already writes, so the same harness starts a 2.x cluster.


@pytest.fixture(scope="session")
def flink2_home() -> Path:
    home, why = find_flink_home("2.", ".flink2-venv")
    if home is None:
        pytest.skip(f"real-Flink 2.x tests skipped: {why}")
    missing = _java_missing()
    if missing:
        pytest.skip(f"real-Flink 2.x tests skipped: {missing}")
    return home


@pytest.fixture(scope="session")
def e2e2_dir(flink2_home: Path) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="flinktune-e2e2-"))
    try:
        yield path
    finally:
        if os.environ.get("FLINKTUNE_E2E_KEEP"):
            print(f"real-Flink 2.x test files kept in {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def job_jar2(flink2_home: Path, e2e2_dir: Path) -> Path:
    return build_job_jar(flink2_home, e2e2_dir / "job-build")


@pytest.fixture(scope="session")
def flink2_cluster(flink2_home: Path, e2e2_dir: Path) -> Iterator[FlinkCluster]:
    cluster = FlinkCluster(flink2_home, e2e2_dir / "cluster")
    try:
        cluster.start_jobmanager()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def jar2_id(flink2_cluster: FlinkCluster, job_jar2: Path) -> str:
    return flink2_cluster.upload_jar(job_jar2)
