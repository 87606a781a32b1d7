"""The detached class-cache builder (flinktune/spark/class_cache.py) ended by a signal leaves no
half-written state: no lock (which would block builds for 15 minutes), no class list, no args file
of an archive that does not exist, no temporary archive (issue 15, defect 1).

Before: SIGTERM killed the builder where it stood and left the lock and the args file behind.
The signal is sent once the builder has its handlers (Linux: SIGTERM in its SigCgt mask in /proc), not after a
fixed delay: on a busy machine a delay could land during interpreter start-up (issue 25).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _wait_until_handled(pid: int, timeout_s: float = 30.0) -> None:
    """Until the builder has its handlers: it installs SIGTERM's last, and Python catches SIGINT from
    the start, so the SIGTERM bit of SigCgt in /proc/PID/status is the one to wait for."""
    signum = signal.SIGTERM
    status = Path(f"/proc/{pid}/status")
    if not status.exists():  # no procfs: past interpreter start-up on any machine this runs on
        time.sleep(3.0)
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        caught = next((int(line.split()[1], 16) for line in status.read_text().splitlines()
                       if line.startswith("SigCgt:")), 0)
        if caught >> (signum - 1) & 1:
            return
        time.sleep(0.02)
    raise AssertionError(f"the builder installed no SIGTERM handler within {timeout_s} s")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_builder_ended_by_a_signal_cleans_up(tmp_path: Path, signum: int) -> None:
    key = "k" * 20
    # The builder waits for the analysing process (its parent) to exit before it builds: a
    # sleeping stand-in keeps it waiting, so the signal finds it mid-run.
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / f"spark-{key}.lock").write_text("")
        (tmp_path / f"spark-{key}.args").write_text("java\n/cp\n")
        (tmp_path / f"spark-{key}.classlist.{stand_in.pid}.part").write_text("java/lang/Object\n")
        builder = subprocess.Popen(
            [sys.executable, "-m", "flinktune.spark.class_cache", str(tmp_path), key,
             str(stand_in.pid), str(stand_in.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path,
        )  # fmt: skip
        try:
            _wait_until_handled(builder.pid)
            assert builder.poll() is None, builder.stderr.read() if builder.stderr else ""
            builder.send_signal(signum)
            builder.wait(timeout=20)
        finally:
            if builder.poll() is None:
                builder.kill()
                builder.wait()
        err = builder.stderr.read().decode() if builder.stderr else ""
        assert "Traceback" not in err, err
        left = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".part"))
        assert left == [], left
        assert builder.returncode == 1  # nothing built
    finally:
        stand_in.kill()
        stand_in.wait()

