"""The detached class-cache builder (flinktune/analysis/class_cache.py) ended by a signal leaves no
half-written state: no lock (which would block builds for 15 minutes), no class list, no args file
of an archive that does not exist, no temporary archive (issue 15, defect 1).

Before: SIGTERM killed the builder where it stood and left the lock and the args file behind.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


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
            [sys.executable, "-m", "flinktune.analysis.class_cache", str(tmp_path), key,
             str(stand_in.pid), str(stand_in.pid)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp_path,
        )  # fmt: skip
        try:
            time.sleep(1.5)  # past interpreter start-up, into the wait
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

