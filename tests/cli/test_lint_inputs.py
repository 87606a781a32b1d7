"""`flinktune lint DIR` never passes silently (issue 15, defect 2).

Before: a folder holding only a config with an unusual name (flink-prod.yaml) or nothing at all
printed "0 files checked" and exited 0, while linting the file itself found an error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Flink's docs ("Configuration", flink-conf.yaml / config.yaml): flat keys "a.b.c: v" in the
# legacy file, nested blocks in config.yaml (1.19+). A negative buffers-per-channel is refused
# by Flink (NettyShuffleEnvironmentOptions.NETWORK_BUFFERS_PER_CHANNEL must be >= 0).
FLAT = "taskmanager.memory.process.size: 2g\ntaskmanager.network.memory.buffers-per-channel: -1\n"
NESTED = "taskmanager:\n  network:\n    memory:\n      buffers-per-channel: -1\n"


def _lint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flinktune", "lint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(("name", "text"), [("flink-prod.yaml", FLAT), ("prod-cluster.yml", NESTED)])
def test_folder_with_unusually_named_config_is_linted(tmp_path: Path, name: str, text: str) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / name).write_text(text)
    done = _lint("conf", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 file checked" in done.stdout
    assert "FTC015" in done.stdout


def test_other_yaml_is_not_taken_for_flink(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    # A docker-compose file names a service "jobmanager", indented: not a Flink config.
    (conf / "docker-compose.yaml").write_text("services:\n  jobmanager:\n    image: flink:1.20\n")
    (conf / "flink-conf.yaml").write_text("taskmanager.numberOfTaskSlots: 2\n")
    done = _lint("conf", cwd=tmp_path)
    # Issue 29: the compose file is read as the deployment around the config (counted as checked),
    # never as a Flink config: none of its keys is judged as a Flink option.
    assert "2 files checked" in done.stdout, done.stdout + done.stderr
    assert "FTC001" not in done.stdout and "FTC002" not in done.stdout
    assert "docker-compose.yaml:" not in done.stdout


@pytest.mark.parametrize("content", [None, "services:\n  web:\n    image: nginx\n"])
def test_folder_without_flink_config_is_exit_2_with_one_line(tmp_path: Path, content: str | None) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    if content is not None:
        (conf / "compose.yaml").write_text(content)
    done = _lint("conf", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("flinktune: error: conf: no Flink config found")
    assert "looked for" in errors[0] and "name a file" in errors[0]


def test_empty_folder_next_to_a_good_one_still_fails(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "flink-conf.yaml").write_text("taskmanager.numberOfTaskSlots: 2\n")
    done = _lint("good", "empty", cwd=tmp_path)
    assert done.returncode == 2
    assert "empty: no Flink config found" in done.stderr


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".flinktune.yaml", "select: [FTC]\nfail-on: error\nflink-version: 1.20\n"),
        ("pyproject.toml", '[tool.flinktune]\nselect = ["FTC"]\nflink-version = 1.20\n'),
    ],
)
def test_project_config_keeps_lint_light(tmp_path: Path, name: str, text: str) -> None:
    """A project config must not pull pydantic (or numpy/pyspark) into the lint process: it cost
    0.1-0.2 s of cold start per lint (issue 15). `flink-version: 1.20` is read as written (YAML and
    TOML make it the float 1.2)."""
    (tmp_path / name).write_text(text)
    (tmp_path / "flink-conf.yaml").write_text("taskmanager.numberOfTaskSlots: 2\n")
    probe = (
        "import sys\n"
        "sys.argv = ['flinktune', 'lint', 'flink-conf.yaml', '-v']\n"
        "from flinktune.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit as done:\n    code = done.code\n"
        "heavy = ('pydantic', 'numpy', 'pyspark')\n"
        "print('LOADED', sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert "LOADED []" in done.stderr, done.stderr[-2000:]
    assert "error" not in done.stderr.split("LOADED")[0].lower(), done.stderr
    # --verbose names the version used and where it came from.
    assert "checked against Flink 1.20 (project: flink-version)" in done.stdout, done.stdout


@pytest.mark.parametrize(("name", "text", "where"), [
    ("docker-compose.yml",
     "services:\n  jobmanager:\n    image: flink:1.20\n    volumes: [\n      - ./c:/c\n",
     "conf/docker-compose.yml:5: could not be read as a deployment file: invalid YAML"),
    ("tm.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: tm\nspec:\n  replicas: 1\n"
     "   template: {}\n", "conf/tm.yaml:7: could not be read as a deployment file: invalid YAML"),
    ("docker-compose.yml", "services:\n  taskmanager:\n    image: flink:1.20\n    mem_limit: 2 gigs\n",
     "conf/docker-compose.yml:4: could not be read as a deployment file: memory limit '2 gigs' is not"),
])
def test_a_broken_deployment_file_in_the_folder_is_exit_2_naming_file_and_line(
        tmp_path: Path, name: str, text: str, where: str) -> None:
    # Issue 29: a broken compose file or manifest beside the config was dropped without a word, and lint
    # judged the config as if there were no deployment (exit 0). The config itself is still linted.
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "flink-conf.yaml").write_text(FLAT)
    (conf / name).write_text(text)
    done = _lint("conf", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"flinktune: error: {where}"), errors
    assert "1 file checked: 1 error" in done.stdout and "Traceback" not in done.stderr
    named = _lint(f"conf/{name}", cwd=tmp_path)
    assert named.returncode == 2 and len(named.stderr.strip().splitlines()) == 1, named.stderr
