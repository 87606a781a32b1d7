"""Ctrl-C / SIGTERM while `analyze` starts Spark: every child ended, temp files gone, one line, 130/143.

Regression for issue 15 (defect 1): before, pyspark's gateway JVM lost its parent while its main
thread was still starting, and a non-daemon py4j thread kept it alive forever (re-parented to PID 1,
its spark-* folder kept); later in start-up pyspark's own SIGINT handler cancelled the Spark job
and the user read "cannot analyse the dump: ... SparkException" (exit 2).

Each run gets its own SPARK_LOCAL_DIRS (Spark's scratch root, where the spark-* folders go) and
class-cache folder, so processes and files of other test runs on the machine are never counted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest
from testkit import default_sigint

REPO = Path(__file__).resolve().parents[2]
DUMP = REPO / "sample_data" / "slow-sink"

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find leftover processes"),
    pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"), reason="no Java"),
]


def _processes_with_env(marker: str) -> list[str]:
    """Processes (pid and command) whose environment holds ``marker``: ours, whoever their parent."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"{entry.name} {cmd[:160]}")
        except OSError:
            continue
    return found


ANALYZE = ["analyze", str(DUMP), "--no-progress"]
RECOMMEND = ["recommend", str(DUMP / "flink-config.yaml"), "--metrics", str(DUMP)]


def _interrupt_analyze(
    tmp_path: Path, signum: int, after_s: float, argv: list[str] = ANALYZE
) -> tuple[int, str, str, Path, Path]:
    scratch = tmp_path / f"scratch-{signum}-{after_s}"
    cache = tmp_path / f"cache-{signum}-{after_s}"
    scratch.mkdir()
    env = dict(os.environ)
    env.update(SPARK_LOCAL_DIRS=str(scratch), FLINKTUNE_CACHE_DIR=str(cache), NO_COLOR="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "flinktune", *argv],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # like a shell job: the signal goes to the whole process group
        preexec_fn=default_sigint,
    )
    try:
        time.sleep(after_s)
        os.killpg(proc.pid, signum)
        # A leftover JVM holds the pipes open, so read only until flinktune itself has exited.
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = _read_available(proc.stdout)
    err = _read_available(proc.stderr)
    return proc.returncode, out, err, scratch, cache


_FINISHED: dict[tuple[str, ...], str] = {}


def _finished_output(tmp_path: Path, argv: list[str]) -> str:
    """What the command prints when nothing interrupts it (once per command line)."""
    key = tuple(argv)
    if key not in _FINISHED:
        env = {**os.environ, "FLINKTUNE_CACHE_DIR": str(tmp_path / "cache-uninterrupted"), "NO_COLOR": "1"}
        done = subprocess.run([sys.executable, "-m", "flinktune", *argv], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)
        _FINISHED[key] = done.stdout
    return _FINISHED[key]


def _read_available(stream: IO[bytes] | None) -> str:
    if stream is None:
        return ""
    os.set_blocking(stream.fileno(), False)
    try:
        data = stream.read() or b""
    finally:
        stream.close()
    return data.decode(errors="replace")


def _leftovers(scratch: Path, cache: Path) -> list[str]:
    deadline = time.monotonic() + 3
    while True:
        procs = _processes_with_env(f"SPARK_LOCAL_DIRS={scratch}")
        # os.walk, not rglob: a JVM still deleting its folders must not fail the scan.
        files = [os.path.join(d, n) for d, dirs, names in os.walk(scratch) for n in dirs + names]
        # A class list recorded by an interrupted run, or a half-built archive.
        if cache.exists():
            files += [str(p) for p in cache.iterdir() if p.suffix in (".part", ".tmp", ".lock", ".classlist")]
        if (not procs and not files) or time.monotonic() > deadline:
            return procs + files
        time.sleep(0.2)


def _kill_leftovers(scratch: Path) -> None:
    for line in _processes_with_env(f"SPARK_LOCAL_DIRS={scratch}"):
        with contextlib.suppress(OSError):
            os.kill(int(line.split()[0]), signal.SIGKILL)


@pytest.mark.parametrize(
    ("signum", "after_s", "argv"),
    # 0.05-0.1 s: Python imports and argument parsing (typer turned an interrupt there into a silent
    # exit 130); then Spark's start-up.
    [(signal.SIGINT, 0.05, ANALYZE), (signal.SIGTERM, 0.1, ANALYZE)]
    + [(signal.SIGINT, t / 10, ANALYZE) for t in range(2, 32, 4)]
    + [(signal.SIGTERM, t, ANALYZE) for t in (0.6, 1.4, 2.2, 4.0)]
    + [(signal.SIGINT, 1.2, RECOMMEND), (signal.SIGTERM, 2.4, RECOMMEND)],
    ids=lambda x: x[0] if isinstance(x, list) else str(x),
)
def test_interrupt_during_spark_start_leaves_nothing(
    tmp_path: Path, signum: int, after_s: float, argv: list[str]
) -> None:
    scratch = tmp_path / f"scratch-{signum}-{after_s}"
    try:
        code, out, err, scratch, cache = _interrupt_analyze(tmp_path, signum, after_s, argv)
        left = _leftovers(scratch, cache)
        if code in (0, 1) or (out and out == _finished_output(tmp_path, argv)):
            # Finished within after_s (the signal found it exiting, after its complete report).
            pytest.skip(f"the analysis finished within {after_s} s; nothing to interrupt")
        assert code == 128 + signum, (code, err)
        assert not left, f"left behind after {signal.Signals(signum).name} at {after_s} s: {left}"
        # recommend --metrics says which stage it is in before Spark starts; the last line is ours.
        lines = [line for line in err.splitlines() if line.strip()]
        lines = [line for line in lines if "starting Spark" not in line and "note:" not in line]
        assert lines == [f"flinktune: interrupted by {signal.Signals(signum).name}"], err
        assert "Traceback" not in err and "cannot analyse" not in err
        assert out == ""
    finally:
        _kill_leftovers(scratch)


def test_a_finished_run_leaves_no_scratch_folder(tmp_path: Path) -> None:
    """The driver's scratch goes to a flinktune-spark-* folder of its own (session.py), removed when
    the command ends; a JVM ended mid-start can otherwise leave spark-*/userFiles-* behind."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # No class-data archive build: that detached builder outlives the command on purpose.
    env = dict(os.environ, SPARK_LOCAL_DIRS=str(scratch), FLINKTUNE_CLASS_CACHE="0")
    done = subprocess.run(
        [sys.executable, "-m", "flinktune", *ANALYZE],
        env=env, cwd=tmp_path, capture_output=True, timeout=300, check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    # The JVM was ended before flinktune exited (session.end_at_exit), not ~0.35 s after it.
    assert _processes_with_env(f"SPARK_LOCAL_DIRS={scratch}") == []
    assert _leftovers(scratch, tmp_path / "cache") == []
