"""How a command's Spark JVM ends: at once (SIGKILL, session.end_at_exit) when nothing would be
lost, with every file it made inside its own folder; otherwise on its own after flinktune exits
(pyspark's JVM ends when our end of its stdin pipe closes)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flinktune.spark import session

REPO = Path(__file__).resolve().parents[2]


def test_a_jvm_is_ended_at_once_only_when_nothing_would_be_lost() -> None:
    assert session.fast_end_allowed("local[*]", {}, recording=False)
    assert session.fast_end_allowed("local[2]", {"spark.eventLog.enabled": "false"}, recording=False)
    # the class list it records is read by the archive builder once the JVM has exited
    assert not session.fast_end_allowed("local[*]", {}, recording=True)
    # an event log to complete; an application a cluster's master should see finish
    assert not session.fast_end_allowed("local[*]", {"spark.eventLog.enabled": "TRUE "}, recording=False)
    assert not session.fast_end_allowed("spark://127.0.0.1:7077", {}, recording=False)
    assert not session.fast_end_allowed("local-cluster[2,1,1024]", {}, recording=False)
    assert session.fast_end_allowed("local", {}, recording=False)


_CHILD = textwrap.dedent(
    """
    import json, os
    from flinktune.spark import session
    spark = session.build_session(input_bytes=1)
    jvm = spark.sparkContext._jvm
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    tmpdir = str(jvm.System.getProperty("java.io.tmpdir"))
    spark.range(1000).selectExpr("sum(id) AS s").collect()  # a shuffle: lz4's native library unpacks
    made = sorted(os.listdir(tmpdir))
    session.end_at_exit()
    print(json.dumps({"pid": pid, "tmpdir": tmpdir, "made": made, "alive": os.path.exists(f"/proc/{pid}")}))
    """
)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_jvm_keeps_its_files_in_its_own_folder_and_ends_at_once(tmp_path: Path) -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed")
    # A space and quotes in the path survive Spark's launcher (SPARK_SUBMIT_OPTS is parsed like a
    # shell word list).
    base = tmp_path / 'local "dirs" here'
    base.mkdir()
    env = dict(os.environ, SPARK_LOCAL_DIRS=str(base), FLINKTUNE_CLASS_CACHE="0", PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    tmpdir = Path(seen["tmpdir"])
    assert tmpdir.parent == base and tmpdir.name.startswith("flinktune-spark-")
    # what Java's temp folder received (Spark's spark-* folders, the native library) was in there
    assert any(name.startswith("spark-") for name in seen["made"]), seen["made"]
    assert not seen["alive"]
    assert list(base.iterdir()) == []


def _with_marker(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "environ").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_signal_while_popen_waits_for_the_exec_loses_no_child(tmp_path: Path, monkeypatch) -> None:
    """Popen forks, then reads a pipe until the exec has happened; a Ctrl-C or SIGTERM in that read
    raises out of Popen with the child running and no Popen handed back. The gateway is recorded
    anyway, so stop_started_processes ends its group and removes its folder (seen: SIGTERM 0.6 s into
    `analyze` left the JVM and its spark folder, one CI run in several)."""
    marker = f"FLINKTUNE_TEST_MARKER={tmp_path}"
    real_read = os.read
    raised: list[int] = []

    def read_interrupted(fd: int, n: int) -> bytes:
        if not raised:
            raised.append(fd)
            raise KeyboardInterrupt  # what the CLI's handlers raise for Ctrl-C and SIGTERM
        return real_read(fd, n)

    env = dict(os.environ, FLINKTUNE_TEST_MARKER=str(tmp_path))
    monkeypatch.setattr(os, "read", read_interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            session._GatewayPopen(["sleep", "60"], env=env, local_base=str(tmp_path), stdin=subprocess.PIPE)
        monkeypatch.undo()
        assert raised, "Popen did not wait for the exec"
        mine = [p for p in session._started if p.args == ["sleep", "60"]]
        assert len(mine) == 1, "the child forked before the signal was not recorded"
        private = session._local_dirs[mine[0].pid]
        assert Path(private).parent == tmp_path and Path(private).is_dir()
        # What stop_started_processes does to each recorded process (called for this one only: the
        # whole call would also end the Spark JVM other tests of this pytest process share).
        session._started.remove(mine[0])
        session._end_and_remove(mine[0])
        assert mine[0].returncode is not None
        assert not Path(private).exists()
        assert _with_marker(marker) == []
    finally:
        monkeypatch.undo()
        for pid in _with_marker(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
