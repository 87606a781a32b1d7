"""``recommend --write`` / ``-o``: byte preservation in all three formats, the backup, and an original
that survives the process being killed in the middle of the write."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from advisehelpers import PROFILES, SAMPLE_PROFILES, SAMPLES
from typer.testing import CliRunner

from flinktune.cli.app import app

FORMATS = {
    "flat": "cross-az-throughput.flink-conf.yaml",
    "yaml": "flink-2.x.config.yaml",
    "deployment": "flinkdeployment.yaml",
}


def _copy(sample: str, tmp_path: Path, *, crlf: bool = False) -> Path:
    data = (SAMPLES / sample).read_bytes()
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    target = tmp_path / sample
    target.write_bytes(data)
    return target


def _args(target: Path, sample: str, *extra: str) -> list[str]:
    args = ["recommend", str(target), *extra]
    if SAMPLE_PROFILES[sample]:
        args += ["--profile", str(PROFILES / SAMPLE_PROFILES[sample])]
    return args


def _removed_lines(original: bytes, written: bytes) -> list[int]:
    """1-based numbers of original lines that did not survive byte for byte."""
    import difflib

    old = original.splitlines(keepends=True)
    new = written.splitlines(keepends=True)
    out = []
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            out.extend(range(i1 + 1, i2 + 1))
    return out


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_write_preserves_untouched_bytes(fmt: str, crlf: bool, tmp_path: Path) -> None:
    sample = FORMATS[fmt]
    target = _copy(sample, tmp_path, crlf=crlf)
    original = target.read_bytes()
    dry = CliRunner().invoke(app, _args(target, sample, "--format", "json"))
    assert dry.exit_code == 0, dry.output
    assert target.read_bytes() == original            # dry run by default: nothing written
    changes = json.loads(dry.stdout)["recommendations"][0]["changes"]
    assert changes, "the sample must need at least one change for this test to mean something"
    lines = [c["line"] for c in changes if c["line"]]

    result = CliRunner().invoke(app, _args(target, sample, "--write"))
    assert result.exit_code == 0, result.output
    written = target.read_bytes()
    assert written != original
    backup = target.with_name(target.name + ".bak")
    assert backup.read_bytes() == original
    # What was applied, beside the file, for `compare --expected` (docs/compare.md).
    applied = target.with_name(target.name + ".recommendation.json").read_text(encoding="utf-8")
    assert json.loads(applied)["recommendations"][0]["changes"] == changes
    # Only the changed keys' own lines (and, in nested YAML, a parent block and comment a deletion
    # leaves empty right above them) differ; every other byte is kept, in order.
    removed = _removed_lines(original, written)
    assert removed, "a change must show in the file"
    assert all(any(line - 3 <= n <= line for line in lines) for n in removed), (removed, lines)
    kept = [ln for i, ln in enumerate(original.splitlines(keepends=True), 1) if i not in removed]
    assert kept == [ln for ln in kept if ln in written.splitlines(keepends=True)]
    if crlf:
        assert b"\n" not in written.replace(b"\r\n", b"")   # no bare LF slipped in
    # And the written file is what the dry run's diff promised: applying again changes nothing.
    again = CliRunner().invoke(app, _args(target, sample, "--write"))
    assert again.exit_code == 0
    assert target.read_bytes() == written
    # Nothing applied the second time: the recommendation beside the file stays the one that was.
    assert target.with_name(target.name + ".recommendation.json").read_text(encoding="utf-8") == applied


def test_output_file_leaves_input_alone(tmp_path: Path) -> None:
    sample = FORMATS["flat"]
    target = _copy(sample, tmp_path)
    original = target.read_bytes()
    out = tmp_path / "recommended.flink-conf.yaml"
    result = CliRunner().invoke(app, _args(target, sample, "-o", str(out)))
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == original
    assert not target.with_name(target.name + ".bak").exists()
    assert b"buffers-per-channel: 3" in out.read_bytes()


def test_write_and_output_exclude_each_other(tmp_path: Path) -> None:
    target = _copy(FORMATS["flat"], tmp_path)
    result = CliRunner().invoke(app, ["recommend", str(target), "--write", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "exclude each other" in result.stderr


# The child process runs the real CLI with os.replace wrapped so that the N-th call kills the process
# with SIGKILL just before the rename: call 1 is the backup, call 2 the config itself.
_KILLER = """
import os, signal, sys
real_replace = os.replace
calls = [0]
def replace(src, dst):
    calls[0] += 1
    if calls[0] == int(os.environ["KILL_AT"]):
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst)
os.replace = replace
from flinktune.cli.app import app
sys.argv = ["flinktune"] + sys.argv[1:]
app()
"""


@pytest.mark.parametrize("kill_at", [1, 2], ids=["during-backup", "during-replace"])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_original_intact_when_killed_mid_write(fmt: str, kill_at: int, tmp_path: Path) -> None:
    sample = FORMATS[fmt]
    target = _copy(sample, tmp_path)
    original = target.read_bytes()
    env = dict(os.environ, KILL_AT=str(kill_at))
    proc = subprocess.run([sys.executable, "-c", _KILLER, *_args(target, sample, "--write")[0:]],
                          env=env, capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert target.read_bytes() == original
    # Whatever was half-written is a temporary file beside it, never the config itself.
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in (target.name, target.name + ".bak")]
    assert all(name.startswith(".") and name.endswith(".tmp") for name in leftovers), leftovers
