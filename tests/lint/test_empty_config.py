"""A config file that sets no option is an input lint could not judge (exit 2, one line), as recommend
already refuses it (flinktune.config.reader.holds_no_option, one definition for both).

Before: lint said "1 file checked: 0 errors, 0 warnings, 0 info", exit 0, on an empty or comment-only
flink-conf.yaml / config.yaml, while recommend on the same file exited 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app

MESSAGE = "holds no Flink option (empty, or only comments): nothing to check"


@pytest.fixture(autouse=True)
def _no_project_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run in an empty folder so the repository's own pyproject.toml is never picked up.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _lint(*args: str):
    return CliRunner().invoke(app, ["lint", "--format", "text", *args])


@pytest.mark.parametrize(("name", "text"), [
    ("flink-conf.yaml", ""),
    ("flink-conf.yaml", "  \n\n\t\n"),
    ("flink-conf.yaml", "# settings for Flink 1.18\n   # none yet\n"),
    ("config.yaml", ""),
    ("config.yaml", "# only a comment\n"),
    ("config.yaml", "---\n"),
    ("config.yaml", "{}\n"),
])
def test_named_config_without_an_option_is_exit_2(tmp_path: Path, name: str, text: str) -> None:
    conf = _write(tmp_path / "conf" / name, text)
    result = _lint(f"conf/{name}")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"flinktune: error: conf/{name}: {MESSAGE}"]
    assert "Traceback" not in result.output and conf.read_text(encoding="utf-8") == text


def test_folder_with_an_empty_config_is_exit_2_and_the_others_are_still_linted(tmp_path: Path) -> None:
    _write(tmp_path / "repo" / "empty" / "flink-conf.yaml", "")
    _write(tmp_path / "repo" / "good" / "flink-conf.yaml", "taskmanager.numberOfTaskSlots: 2\n")
    result = _lint("repo")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"flinktune: error: repo/empty/flink-conf.yaml: {MESSAGE}"]
    assert result.stdout.startswith("1 file checked") and "(1 input not linted)" in result.stdout


def test_recommend_refuses_it_in_the_same_words(tmp_path: Path) -> None:
    _write(tmp_path / "flink-conf.yaml", "# nothing set yet\n")
    lint = _lint("flink-conf.yaml")
    recommend = CliRunner().invoke(app, ["recommend", "flink-conf.yaml"])
    assert lint.exit_code == recommend.exit_code == 2
    said = "flink-conf.yaml: holds no Flink option (empty, or only comments)"
    assert said in lint.stderr and said in recommend.stderr, (lint.stderr, recommend.stderr)


@pytest.mark.parametrize(("name", "text", "code"), [
    # A FlinkDeployment without flinkConfiguration still describes its pods.
    ("fd.yaml", "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata:\n  name: x\n"
                "spec:\n  image: flink:1.18\n", 0),
    # A manifest with no Flink configuration in it: read as part of the deployment, as before.
    ("dep.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n", 0),
    # A ConfigMap embedding an empty flink-conf.yaml: judged as the pods' complete config (FTC050/051).
    ("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  flink-conf.yaml: |\n"
                "    # nothing\n", 1),
    # A line Flink skips is a finding (FTC022), not "no option".
    ("flink-conf.yaml", "jobmanager.memory.process.size 1g\n", 1),
])
def test_manifests_and_malformed_files_are_judged_as_before(tmp_path: Path, name: str, text: str,
                                                            code: int) -> None:
    _write(tmp_path / name, text)
    result = _lint(name)
    assert "holds no Flink option" not in result.output
    assert result.exit_code == code, result.output


def test_a_file_fix_empties_is_not_reported(tmp_path: Path) -> None:
    # The check is on the input as given: a file whose only key --fix deleted was judged before the fix.
    conf = _write(tmp_path / "config.yaml",
                  "# flinktune: flink-version=2.0\ntaskmanager.network.numberOfBuffers: 2048\n")
    result = _lint("--fix", "config.yaml")
    assert conf.read_text(encoding="utf-8") == "# flinktune: flink-version=2.0\n", result.output
    assert "holds no Flink option" not in result.output, result.output
    assert result.exit_code == 0, result.output
