"""The shared flags do what they say in every command that takes them (issue 25).

``--no-color``: on a terminal a command's output may be coloured; with the flag (or NO_COLOR) there is
not one ANSI escape in what it writes, report or progress. ``-q``: nothing on stderr when nothing
went wrong. Before, ``model``, ``rules list`` and ``recommend`` accepted ``--no-color`` and ignored it
(their reports were never coloured), and each command declared the flags with its own wording.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "sample_configs"
SCENARIO = CONF / "scenarios" / "healthy.yaml"

# (command line, coloured on a terminal without --no-color)
COMMANDS: list[tuple[list[str], bool]] = [
    (["lint", str(CONF / "legacy-1.x.flink-conf.yaml")], True),
    (["rules", "list"], True),
    (["model", "--config", str(CONF / "flink-2.x.config.yaml")], True),
    (["recommend", str(CONF / "legacy-1.x.flink-conf.yaml")], True),
    (["simulate", str(SCENARIO), "--no-charts"], True),          # the live status line on stderr
]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_ACTIONS", "FORCE_COLOR")}
    env.update(COLUMNS="120", TERM="xterm-256color")
    return env


def _on_terminal(args: list[str], cwd: Path) -> bytes:
    """Everything the command writes to a pseudo-terminal (stdout and stderr both)."""
    main, side = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "flinktune", *args], stdin=subprocess.DEVNULL,
                                stdout=side, stderr=side, cwd=cwd, env=_env())
        os.close(side)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:          # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=300) in (0, 1)
    finally:
        os.close(main)
    return b"".join(chunks)


@pytest.mark.parametrize(("args", "coloured"), COMMANDS, ids=lambda x: x[0] if isinstance(x, list) else None)
def test_no_color_means_no_escape_at_all(args: list[str], coloured: bool, tmp_path: Path) -> None:
    plain = _on_terminal([*args, "--no-color"], tmp_path)
    assert b"\x1b" not in plain, plain[:400]
    if coloured:
        assert b"\x1b[" in _on_terminal(args, tmp_path)


@pytest.mark.parametrize(("args", "coloured"), COMMANDS, ids=lambda x: x[0] if isinstance(x, list) else None)
def test_quiet_leaves_stderr_empty(args: list[str], coloured: bool, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "flinktune", *args, "-q"], capture_output=True, cwd=tmp_path,
                          env=_env(), timeout=300, check=False)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout and done.stderr == b""
