"""`flinktune recommend` lists the lint errors its changes do not fix (issue 29).

Before: recommend rewrote a file that still failed `flinktune lint` and said nothing. Now every report
(text, json, html) lists the errors lint reports on the recommended config, judged as recommend judged it
(the same --flink-version, the deployment files beside it), and --write / -o repeat their number.

Facts the configs rest on (the rules' own sources): reporters configured only by '.class' are not
started since Flink 1.17 (FTC070: ReporterSetup.loadReporter, FLINK-35091); a checkpoint directory
without a scheme is refused (FTC080: AbstractFileStateBackend.validatePath); execution.checkpointing.dir
exists from 1.20 (FTC071: CheckpointingOptions); a complete flink-conf.yaml without a memory size stops
the TaskManager and JobManager (FTC050/FTC051: ProcessMemoryUtils, TaskExecutorFlinkMemoryUtils).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flinktune.lint.model import LintOptions
from flinktune.lint.runner import lint_errors_in_text

CONFIG = ("taskmanager.memory.process.size: 2g\n"
          "metrics.reporter.prom.class: org.apache.flink.metrics.prometheus.PrometheusReporter\n"
          "execution.checkpointing.dir: data/checkpoints\n")


def _recommend(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flinktune", "recommend", str(config), *args],
                          cwd=config.parent, capture_output=True, text=True, timeout=120, check=False)


def test_text_lists_them_and_write_says_how_many(tmp_path: Path) -> None:
    config = tmp_path / "flink-conf.yaml"
    config.write_text(CONFIG)
    done = _recommend(config, "--write")
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split("Lint errors these changes do not fix")[1]
    assert f"{config}:2: FTC070" in listed and f"{config}:3: FTC080" in listed
    assert "still has 2 lint error(s)" in done.stderr
    clean = tmp_path / "clean.yaml"
    clean.write_text("taskmanager.memory.process.size: 2g\n")
    done = _recommend(clean)
    assert done.returncode == 0 and "Lint errors" not in done.stdout


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_every_format_lists_them(tmp_path: Path, fmt: str) -> None:
    config = tmp_path / "flink-conf.yaml"
    config.write_text(CONFIG)
    done = _recommend(config, "-f", fmt)
    assert done.returncode == 0, done.stderr
    if fmt == "json":
        errors = json.loads(done.stdout)["lint_errors"]
        assert [(e["code"], e["line"], e["severity"]) for e in errors] == [("FTC070", 2, "error"),
                                                                            ("FTC080", 3, "error")]
    else:
        section = done.stdout.split("Lint errors these changes do not fix")[1]
        assert "FTC070" in section and "FTC080" in section and f"{config}:3" in section


def test_lint_judges_the_version_recommend_was_given(tmp_path: Path) -> None:
    # At 1.16 the '.class' reporter still starts, and execution.checkpointing.dir is not read at all.
    config = tmp_path / "flink-conf.yaml"
    config.write_text(CONFIG)
    done = _recommend(config, "--flink-version", "1.16", "-f", "json")
    codes = [e["code"] for e in json.loads(done.stdout)["lint_errors"]]
    assert "FTC070" not in codes and "FTC071" in codes


def test_the_deployment_beside_the_file_counts(tmp_path: Path) -> None:
    # Mounted as the whole conf/flink-conf.yaml of both containers, a file without a memory size is
    # complete, and Flink refuses to start; alone, it may be an overlay, and lint says nothing.
    text = "jobmanager.rpc.address: jobmanager\ntaskmanager.numberOfTaskSlots: 2\n"
    config = tmp_path / "flink-conf.yaml"
    config.write_text(text)
    options = LintOptions(flink_version=None)
    assert lint_errors_in_text(text, str(config), options) == []
    mount = "    volumes:\n      - ./flink-conf.yaml:/opt/flink/conf/flink-conf.yaml\n"
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  jobmanager:\n    image: flink:1.18\n    command: jobmanager\n" + mount
        + "  taskmanager:\n    image: flink:1.18\n    command: taskmanager\n" + mount)
    codes = [f.code for f in lint_errors_in_text(text, str(config), options)]
    assert codes == ["FTC050", "FTC051"]
