"""Which deployment files a lint of a named config reads (docs/lint.md, "The deployment around the
config"): compose files beside the named file and up to three folders above it, not below those folders.

Before: a folder above holding a compose file made the whole project a search root, so an unrelated
compose file in a sibling folder (tools/legacy/docker-compose.yml) was read, and, unreadable, made the lint
of a good config exit 2. Manifests are still looked for in the project, as documented.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.deployment.find import beside

LEGACY_COMPOSE = "services:\n  jm:\n    image: flink:1.18\n    command: jobmanager\n    mem_limit: lots\n"


@pytest.fixture(autouse=True)
def _no_project_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run in the project folder the tests build, never the repository (its pyproject.toml).
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _project(root: Path) -> None:
    """The layout the bug was found with: an nginx compose file at the root, an old Flink one in tools/."""
    _write(root / "docker-compose.yml", "services:\n  web:\n    image: nginx\n")
    _write(root / "tools" / "legacy" / "docker-compose.yml", LEGACY_COMPOSE)
    _write(root / "flink" / "flink-conf.yaml", "taskmanager.numberOfTaskSlots: 2\n")


def _lint(*args: str):
    return CliRunner().invoke(app, ["lint", "--format", "text", *args])


def test_a_compose_file_in_a_sibling_folder_is_not_read(tmp_path: Path) -> None:
    _project(tmp_path)
    result = _lint("flink/flink-conf.yaml")
    assert "tools/legacy" not in result.output, result.output
    assert result.stderr == "" and "input not linted" not in result.stdout
    assert result.exit_code == 0, result.output


def test_beside_leaves_out_compose_files_below_the_folders_above(tmp_path: Path) -> None:
    _project(tmp_path)
    manifest = _write(tmp_path / "k8s" / "tm.yaml", "apiVersion: apps/v1\nkind: Deployment\n")
    found = beside([str(tmp_path / "flink" / "flink-conf.yaml")], [])
    assert found.get(str(tmp_path / "docker-compose.yml")) == "compose"      # above the named file
    assert str(tmp_path / "tools" / "legacy" / "docker-compose.yml") not in found
    assert found.get(str(manifest)) == "kubernetes"     # the project search still finds manifests


def test_an_unreadable_compose_file_above_still_fails_the_run(tmp_path: Path) -> None:
    # Found by the documented rule: what it would say about the config is unknown, so exit 2.
    _write(tmp_path / "deploy" / "docker-compose.yml", LEGACY_COMPOSE)
    _write(tmp_path / "deploy" / "conf" / "flink-conf.yaml", "taskmanager.numberOfTaskSlots: 2\n")
    result = _lint("deploy/conf/flink-conf.yaml")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        "flinktune: error: deploy/docker-compose.yml:5: could not be read as a deployment file: "
        "memory limit 'lots' is not a memory size"]


def test_an_unreadable_manifest_in_a_sibling_folder_still_fails_the_run(tmp_path: Path) -> None:
    # Manifests are looked for in the whole project (bounded), as documented; only compose files are not.
    _project(tmp_path)
    _write(tmp_path / "k8s" / "tm.yaml",
           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: tm\nspec:\n  template:\n    spec:\n"
           "      containers:\n      - name: tm\n        image: flink:1.18\n        args: [taskmanager]\n"
           "        resources:\n          limits:\n            memory: two-gigs\n")
    result = _lint("flink/flink-conf.yaml")
    assert result.exit_code == 2, result.output
    assert "k8s/tm.yaml" in result.stderr and "tools/legacy" not in result.stderr


def test_a_named_compose_file_checks_the_config_its_flink_processes_mount(tmp_path: Path) -> None:
    # Before: "1 file checked: 0 errors, 0 warnings", exit 0, without looking at the mounted config that
    # the same lint of the folder reports on.
    mount = "    volumes:\n      - ./conf/flink-conf.yaml:/opt/flink/conf/flink-conf.yaml\n"
    _write(tmp_path / "docker-compose.yml",
           "services:\n  jobmanager:\n    image: flink:1.20.0\n    command: jobmanager\n" + mount
           + "  taskmanager:\n    image: flink:1.20.0\n    command: taskmanager\n" + mount)
    _write(tmp_path / "conf" / "flink-conf.yaml",
           "jobmanager.rpc.address: jobmanager\nstate.backend: rocksdb\n")
    named = CliRunner().invoke(app, ["lint", "docker-compose.yml"])
    assert "conf/flink-conf.yaml:2: warning FTC003" in named.output, named.output
    assert "2 files checked" in named.output and named.exit_code == 1
    folder = CliRunner().invoke(app, ["lint", "."])
    assert [line for line in named.output.splitlines() if "FTC" in line] == [
        line for line in folder.output.splitlines() if "FTC" in line]
