"""The two commands that write a user's config, ``lint --fix`` and ``recommend --write``: atomic,
with a backup, every untouched byte kept, no writing through a symlink into another folder without
``--follow-symlinks``, and the original intact when the process is killed at any point of the write.

The kill tests run the real CLI in a child process whose file-system calls are wrapped so that the
child SIGKILLs itself at the N-th call (every N up to the last), and once more at random moments
of a large write.
"""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from testkit import changed_lines
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.config.reader import read_config_text

# A flink-conf.yaml both commands change: lint --fix renames state.backend (FTC003), and
# recommend raises the credits per channel for the stated rate, record size and round trip (its
# evidence: without a stated or measured rate it changes nothing).
ORIGINAL = (
    "# Production TaskManagers \u2014 owned by the data team\r\n"
    "jobmanager.rpc.address: flink-jm   \r\n"
    "taskmanager.memory.process.size: 4g\t# four gigs\r\n"
    "taskmanager.numberOfTaskSlots: 2 # two\r\n"
    "\r\n"
    "state.backend: rocksdb   \r\n"
    "parallelism.default: 4\r\n"
    "# trailing comment without newline \u00e9t\u00e9"
)

COMMANDS = {
    "lint": ["lint", "--fix", "--flink-version", "1.20", "--format", "text"],
    "recommend": ["recommend", "--write", "--rtt", "5ms", "--bandwidth", "10Gbit/s", "--rate", "100000",
                  "--record-size", "1kb", "--flink-version", "1.20"],
}


def run_cli(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16"])
def test_write_keeps_backup_and_every_untouched_byte(tmp_path: Path, command: str, encoding: str) -> None:
    conf = tmp_path / "flink-conf.yaml"
    original = ORIGINAL.encode(encoding)
    conf.write_bytes(original)
    os.chmod(conf, 0o640)
    code, output = run_cli([*COMMANDS[command], str(conf)])
    assert code in (0, 1), output
    after = conf.read_bytes()
    assert after != original, f"{command} changed nothing: {output}"
    assert (tmp_path / "flink-conf.yaml.bak").read_bytes() == original
    # Same encoding and BOM; every line the change did not need is byte-identical (CRLF, tabs,
    # trailing blanks, comments, the last line without a newline).
    text = after.decode(encoding)
    assert after.startswith(original[:2]) or encoding == "utf-8"
    removed, added = changed_lines(ORIGINAL.encode(), text.encode())
    allowed_removed = {"state.backend: rocksdb   \r\n"} if command == "lint" else set()
    if command == "recommend":
        # Appending after a last line without a newline must end that line first, nothing else.
        allowed_removed.add("# trailing comment without newline \u00e9t\u00e9")
    assert {r.decode() for r in removed} <= allowed_removed, removed
    assert all(a.decode().endswith("\r\n") or a is added[-1] for a in added), added
    if command == "recommend":
        assert "# trailing comment without newline \u00e9t\u00e9" in text
    # The mode of a config that may hold secrets is kept, for the file and its backup.
    assert stat.S_IMODE(conf.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "flink-conf.yaml.bak").stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []
    # And Flink reads the result: the keys not changed keep their values.
    doc = read_config_text(text, str(conf))[0]
    assert doc.get("jobmanager.rpc.address").value == "flink-jm"
    assert doc.get("taskmanager.memory.process.size").value == "4g"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_symlink_into_another_folder_is_refused_without_follow_symlinks(tmp_path: Path, command: str) -> None:
    real_dir = tmp_path / "etc-flink"
    real_dir.mkdir()
    target = real_dir / "flink-conf.yaml"
    target.write_bytes(ORIGINAL.encode())
    work = tmp_path / "repo"
    work.mkdir()
    link = work / "flink-conf.yaml"
    link.symlink_to(target)
    code, output = run_cli([*COMMANDS[command], str(link)])
    assert code == 2, output
    errors = [line for line in output.splitlines() if line.startswith("flinktune: error:")]
    assert len(errors) == 1 and "symlink" in errors[0] and "--follow-symlinks" in errors[0], output
    assert "Traceback" not in output
    assert target.read_bytes() == ORIGINAL.encode()
    assert link.is_symlink()
    assert not (work / "flink-conf.yaml.bak").exists() and not (real_dir / "flink-conf.yaml.bak").exists()

    code, output = run_cli([*COMMANDS[command], "--follow-symlinks", str(link)])
    assert code in (0, 1), output
    assert link.is_symlink() and link.resolve() == target.resolve()   # the link itself is kept
    assert target.read_bytes() != ORIGINAL.encode()
    assert (real_dir / "flink-conf.yaml.bak").read_bytes() == ORIGINAL.encode()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_symlink_within_its_own_folder_is_written_through(tmp_path: Path, command: str) -> None:
    target = tmp_path / "flink-conf.prod.yaml"
    target.write_bytes(ORIGINAL.encode())
    link = tmp_path / "flink-conf.yaml"
    link.symlink_to(target.name)
    code, output = run_cli([*COMMANDS[command], str(link)])
    assert code in (0, 1), output
    assert link.is_symlink()
    assert target.read_bytes() != ORIGINAL.encode()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_planted_backup_symlink_is_replaced_not_followed(tmp_path: Path, command: str) -> None:
    """An attacker-placed flink-conf.yaml.bak -> elsewhere must not make us write elsewhere."""
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n")
    conf = tmp_path / "flink-conf.yaml"
    conf.write_bytes(ORIGINAL.encode())
    (tmp_path / "flink-conf.yaml.bak").symlink_to(victim)
    code, output = run_cli([*COMMANDS[command], str(conf)])
    assert code in (0, 1), output
    assert victim.read_bytes() == b"precious\n"
    assert (tmp_path / "flink-conf.yaml.bak").read_bytes() == ORIGINAL.encode()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_special_files_are_refused_not_read_or_replaced(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "flink-conf.yaml"
    os.mkfifo(fifo)   # reading a FIFO would block forever
    code, output = run_cli([*COMMANDS[command], str(fifo)])
    assert code == 2, output
    assert "Traceback" not in output
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_an_unwritable_folder_leaves_the_original_and_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    conf = folder / "flink-conf.yaml"
    conf.write_bytes(ORIGINAL.encode())
    if os.geteuid() == 0:
        # Permission bits do not stop root; an immutable folder does (no entry can be added).
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("running as root and chattr +i is not available: cannot make a folder unwritable")
        undo = ["chattr", "-i", str(folder)]
    else:
        os.chmod(folder, 0o555)
        undo = ["chmod", "755", str(folder)]
    try:
        code, output = run_cli([*COMMANDS["lint"], str(conf)])
    finally:
        subprocess.run(undo, check=True)
    assert code == 2 and "original is unchanged" in output, output
    assert conf.read_bytes() == ORIGINAL.encode()
    assert sorted(p.name for p in folder.iterdir()) == ["flink-conf.yaml"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_full_disk_leaves_the_original_and_no_temp_files(tmp_path: Path, command: str) -> None:
    """The child may write at most 64 KiB per file (RLIMIT_FSIZE, SIGXFSZ ignored): writes past it
    fail with EFBIG, as on a full disk."""
    conf = tmp_path / "flink-conf.yaml"
    big = ORIGINAL + "\r\n" + "".join(f"# padding line {i} {'x' * 80}\r\n" for i in range(2000))
    conf.write_bytes(big.encode())

    def limit() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    proc = subprocess.run([sys.executable, "-m", "flinktune", *COMMANDS[command], str(conf)],
                          capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert proc.returncode == 2, proc.stdout[-500:] + proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("flinktune: error:")]
    assert len(errors) == 1 and "original is unchanged" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert conf.read_bytes() == big.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flink-conf.yaml"]


# --- killed mid-write ------------------------------------------------------------------------

# The child wraps the calls a write is made of and SIGKILLs itself at call number KILL_AT
# (counting all of them together), then runs the real CLI.
CHILD = textwrap.dedent("""\
    import os, signal, sys, tempfile
    kill_at = int(sys.argv[1])
    count = [0]
    first_temp = [0]
    def tick(name):
        count[0] += 1
        if name == "mkstemp" and not first_temp[0]:
            first_temp[0] = count[0]
        if count[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    def wrap(module, name):
        real = getattr(module, name)
        def wrapped(*args, **kwargs):
            tick(name)
            result = real(*args, **kwargs)
            tick(name + ":after")
            return result
        setattr(module, name, wrapped)
    for name in ("replace", "fsync", "fchmod", "chown", "unlink", "rename", "open", "write", "close"):
        wrap(os, name)
    wrap(tempfile, "mkstemp")
    from flinktune.cli.app import app
    try:
        app(sys.argv[2:], prog_name="flinktune")
    finally:
        sys.stderr.write(f"CALLS={count[0]} FIRST_TEMP={first_temp[0]}\\n")
""")


def run_child(kill_at: int, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CHILD, str(kill_at), *args], capture_output=True, text=True,
                          timeout=300)


def new_bytes(command: str, tmp_path: Path) -> bytes:
    ref = tmp_path / "reference" / "flink-conf.yaml"
    ref.parent.mkdir()
    ref.write_bytes(ORIGINAL.encode())
    code, output = run_cli([*COMMANDS[command], str(ref)])
    assert code in (0, 1), output
    return ref.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_killed_at_every_step_of_the_write_leaves_old_or_new_never_a_mix(tmp_path: Path,
                                                                         command: str) -> None:
    expected_new = new_bytes(command, tmp_path)
    conf = tmp_path / "flink-conf.yaml"
    # First a run that is not killed, to count the calls (os.open/os.write also happen at import).
    conf.write_bytes(ORIGINAL.encode())
    done = run_child(0, [*COMMANDS[command], str(conf)])
    assert done.returncode in (0, 1), done.stderr
    total = int(done.stderr.rsplit("CALLS=", 1)[1].split()[0])
    first_temp = int(done.stderr.rsplit("FIRST_TEMP=", 1)[1].split()[0])
    assert conf.read_bytes() == expected_new
    assert 0 < first_temp < total, done.stderr[-300:]
    # Every call from just before the first temporary file (the backup's) to the end.
    points = [*range(max(1, first_temp - 1), total + 1)]
    outcomes = {"old": 0, "new": 0}
    for kill_at in points:
        for leftover in tmp_path.glob("flink-conf.yaml*"):
            leftover.unlink()
        for leftover in tmp_path.glob(".flink-conf.yaml*"):
            leftover.unlink()
        conf.write_bytes(ORIGINAL.encode())
        proc = run_child(kill_at, [*COMMANDS[command], str(conf)])
        assert proc.returncode == -signal.SIGKILL, (kill_at, proc.returncode, proc.stderr[-500:])
        now = conf.read_bytes()
        assert now in (ORIGINAL.encode(), expected_new), f"killed at call {kill_at}: mixed file {now!r}"
        outcomes["old" if now == ORIGINAL.encode() else "new"] += 1
        backup = tmp_path / "flink-conf.yaml.bak"
        if backup.exists():
            assert backup.read_bytes() == ORIGINAL.encode(), f"killed at call {kill_at}: partial backup"
    # Both sides were hit: the kill points really straddle the moment of the replace.
    assert outcomes["old"] > 0 and outcomes["new"] > 0, outcomes


@pytest.mark.slow
def test_killed_at_random_moments_of_a_large_lint_fix(tmp_path: Path) -> None:
    """A ~15 MB flink-conf.yaml (the write takes a while): SIGKILL at random delays."""
    body = "".join(f"env.java.opts.x{i}: -Dfoo={i}  # padding {'x' * 60}\n" for i in range(150_000))
    original = ("state.backend: rocksdb\n" + body).encode()
    conf = tmp_path / "flink-conf.yaml"
    rng = random.Random(5)
    seen_new = seen_old = 0
    for _ in range(4):
        for leftover in tmp_path.iterdir():
            leftover.unlink()
        conf.write_bytes(original)
        proc = subprocess.Popen([sys.executable, "-m", "flinktune", *COMMANDS["lint"], "--select", "FTC003",
                                 str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        now = conf.read_bytes()
        if now == original:
            seen_old += 1
        else:
            assert now == b"state.backend.type: rocksdb\n" + body.encode(), "mixed file after SIGKILL"
            seen_new += 1
        backup = tmp_path / "flink-conf.yaml.bak"
        assert not backup.exists() or backup.read_bytes() == original
    assert seen_old + seen_new == 4
