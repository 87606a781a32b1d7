"""`flinktune lint` over many files on several CPUs (flinktune/lint/workers.py): the same report as one
process, a failed worker's files linted by the caller, and an interruption that leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flinktune.lint import workers
from flinktune.lint.workers import MIN_FILES_PER_WORKER, map_in_workers, worker_count

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="workers are forked on Linux only")


def _pid_of(item: int) -> tuple[int, int]:
    return item * item, os.getpid()


def test_results_come_back_in_order_and_some_from_another_process() -> None:
    results = map_in_workers(_pid_of, list(range(40)), 3)
    assert [square for square, _pid in results] == [i * i for i in range(40)]
    pids = {pid for _square, pid in results}
    assert os.getpid() in pids and len(pids) == 3, pids


def test_the_first_items_are_computed_here_before_any_fork() -> None:
    results = map_in_workers(_pid_of, list(range(40)), 2)
    first = 40 // (2 * 2)
    assert all(pid == os.getpid() for _square, pid in results[:first])


def test_a_failed_worker_has_its_share_computed_here() -> None:
    me = os.getpid()

    def fails_in_a_worker(item: int) -> tuple[int, int]:
        if os.getpid() != me and item == 21:
            raise RuntimeError("a worker's bug")
        return _pid_of(item)

    results = map_in_workers(fails_in_a_worker, list(range(40)), 2)
    assert [square for square, _pid in results] == [i * i for i in range(40)]
    assert results[21][1] == me


def test_a_result_that_does_not_pickle_is_computed_here() -> None:
    me = os.getpid()
    results = map_in_workers(lambda item: (item, os.getpid(), threading.Lock()), list(range(20)), 2)
    assert [item for item, _pid, _lock in results] == list(range(20))
    assert {pid for _item, pid, _lock in results} == {me}


def test_an_interruption_here_kills_and_reaps_every_worker(tmp_path: Path) -> None:
    me = os.getpid()
    marks = tmp_path / "pids"
    marks.mkdir()

    def slow(item: int) -> int:
        if os.getpid() != me:
            (marks / str(os.getpid())).touch()
            time.sleep(30)
        elif item == 39:
            time.sleep(0.5)          # the workers have started
            raise KeyboardInterrupt
        return item

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        map_in_workers(slow, list(range(41)), 3)
    assert time.monotonic() - started < 20
    pids = [int(p.name) for p in marks.iterdir()]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ChildProcessError):        # already reaped: no zombie left
            os.waitpid(pid, os.WNOHANG)
        stat = Path(f"/proc/{pid}/stat")
        assert not stat.exists() or stat.read_text().split()[2] != "Z"


def test_how_many_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    # This test process may hold other threads (a Spark session of another test): counted as one here,
    # then as two.
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert worker_count(10_000, 1) == 1
    assert worker_count(2 * MIN_FILES_PER_WORKER - 1, 4) == 1          # too few files to pay for a fork
    assert worker_count(4 * MIN_FILES_PER_WORKER, 4) == 4
    assert worker_count(100 * MIN_FILES_PER_WORKER, 100) == workers.MAX_WORKERS
    assert worker_count(100 * MIN_FILES_PER_WORKER) == min(workers.available_cpus(), workers.MAX_WORKERS)
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert worker_count(10_000, 4) == 1          # a fork copies no other thread: not with threads


def test_a_real_second_thread_keeps_lint_in_one_process() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert worker_count(10_000, 4) == 1
    finally:
        stop.set()
        other.join()


def _configs(folder: Path) -> Path:
    """Many configs of every kind the samples hold (flink-conf.yaml, config.yaml, a FlinkDeployment),
    each three times with a different unknown key, and one with a suppression."""
    folder.mkdir()
    sources = sorted([*(REPO / "sample_configs").glob("*.y*ml"), *(REPO / "sample_data").glob("*/*.yaml")])
    for copy in range(3):
        for number, source in enumerate(sources):
            target = folder / f"{copy}{number:02d}" / source.name
            target.parent.mkdir()
            text = source.read_text(encoding="utf-8")
            extra = f"# copy {copy}\n" if "apiVersion" in text else f"unknown.key.copy{copy}: 1\n"
            target.write_text(text + ("" if text.endswith("\n") else "\n") + extra, encoding="utf-8")
    (folder / "900" / "flink-conf.yaml").parent.mkdir()
    (folder / "900" / "flink-conf.yaml").write_text(
        "state.backend: rocksdb  # flinktune: disable=FTC003\ntaskmanager.numberOfTaskSlots: 4\n",
        encoding="utf-8")
    assert len(list(folder.iterdir())) >= 2 * MIN_FILES_PER_WORKER
    return folder


# A fresh interpreter for each run: workers are forked only in a process with one thread, and the
# test process may hold others (a Spark session of another test). It counts its forks on stderr.
_COUNTING = """
import atexit, os, sys
forks = []
real_fork = os.fork
def counted_fork():
    forks.append(1)
    return real_fork()
os.fork = counted_fork
atexit.register(lambda: sys.stderr.write(f"forks={len(forks)}\\n"))
sys.argv = ["flinktune", *sys.argv[1:]]
from flinktune.cli.app import main
main()
"""


def _lint(cwd: Path, *args: str) -> tuple[int, str, str, int]:
    proc = subprocess.run([sys.executable, "-c", _COUNTING, "lint", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    err, _, count = proc.stderr.rpartition("forks=")
    return proc.returncode, proc.stdout, err, int(count)


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_the_report_is_the_one_of_a_single_process(tmp_path: Path, fmt: str) -> None:
    folder = _configs(tmp_path / "configs")
    alone = _lint(tmp_path, "-f", fmt, "--jobs", "1", str(folder))
    shared = _lint(tmp_path, "-f", fmt, "--jobs", "2", str(folder))
    assert alone[3] == 0 and shared[3] == 1, "--jobs 2 did not fork one worker"
    assert shared[:3] == alone[:3]
    if fmt == "json":
        report = json.loads(shared[1])
        assert report["findings"] and report["summary"]["suppressed"] >= 1


def test_fix_lints_in_one_process(tmp_path: Path) -> None:
    folder = _configs(tmp_path / "configs")
    assert _lint(tmp_path, "--fix", "--jobs", "4", str(folder))[3] == 0


def test_sigterm_while_workers_lint_stops_them_all_and_says_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    sample = (REPO / "sample_configs" / "large-batch.flink-conf.yaml").read_text(encoding="utf-8")
    for number in range(600):
        (folder / f"{number:04d}").mkdir()
        (folder / f"{number:04d}" / "flink-conf.yaml").write_text(
            sample + f"unknown.key.number{number}: 1\n", encoding="utf-8")
    marker = f"FLINKTUNE_WORKER_TEST_{os.getpid()}_{time.monotonic_ns()}"
    env = {**os.environ, marker: "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "flinktune", "lint", "--jobs", "2", str(folder)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 60
        while len(_with_marker(marker)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert len(_with_marker(marker)) >= 2, "the worker did not start"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert err.decode().strip().splitlines() == ["flinktune: interrupted by SIGTERM"]
    time.sleep(0.2)
    assert _with_marker(marker) == []


def _with_marker(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
