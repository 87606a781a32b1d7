"""Hostile file trees: symlink loops planted in a repository must not hang ``lint`` or ``analyze``.

Two links to an ancestor folder make a tree that doubles at every level; glob's ``**`` (and
``os.walk`` with links followed) would walk it for hours. Each case runs the real CLI in a child
process with a timeout far above what a correct run needs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def loop_tree(root: Path) -> Path:
    """root/a/flink-conf.yaml plus root/a/up1 -> .. and root/a/up2 -> .. (an exponential loop)."""
    (root / "a").mkdir(parents=True)
    (root / "a" / "flink-conf.yaml").write_text("parallelism.default: 2\n", encoding="utf-8")
    (root / "a" / "up1").symlink_to("..")
    (root / "a" / "up2").symlink_to("..")
    return root


def flinktune(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flinktune", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_lint_folder_with_follow_symlinks_visits_each_real_folder_once(tmp_path: Path) -> None:
    loop_tree(tmp_path / "repo")
    proc = flinktune("lint", "--follow-symlinks", "--format", "json", "repo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    import json

    report = json.loads(proc.stdout)
    assert report["files"] == ["repo/a/flink-conf.yaml"], report["files"]


@pytest.mark.parametrize(("command", "pattern"), [(["lint"], "repo/**/*.yaml"),
                                                  (["analyze", "--no-progress"], "repo/**/*.parquet")])
def test_double_star_glob_over_a_symlink_loop_is_refused_in_one_line(tmp_path: Path, command: list[str],
                                                                     pattern: str) -> None:
    loop_tree(tmp_path / "repo")
    proc = flinktune(*command, pattern, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("flinktune: error:")]
    assert len(errors) == 1 and "symlink loop" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_alias_symlink_is_not_a_loop(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "v2").mkdir(parents=True)
    (repo / "v2" / "flink-conf.yaml").write_text("parallelism.default: 2\n", encoding="utf-8")
    (repo / "current").symlink_to("v2")
    proc = flinktune("lint", "repo/**/*.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "2 files checked" in proc.stdout
