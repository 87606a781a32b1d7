"""`flinktune recommend` refuses files that are not Flink configs (issue 15, defect 4).

Before: a metrics CSV, a job plan or an empty file got "recommendations" for Flink's defaults
("Flink refuses this memory setup" then "No changes"), exit 0.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _recommend(path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flinktune", "recommend", str(path)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("metrics.csv", "ts,job_id,task_name,subtask_index,metric,value\n1,j,Sink,0,outPoolUsage,0.5\n"),
        ("empty.yaml", ""),
        ("blank.yaml", "\n   \n# only a comment\n"),
        ("plan.json", None),  # the shipped job plan (REST /jobs/:jobid/plan)
        # Deployment files: their flattened keys (services.jobmanager.environment, spec.replicas) looked
        # like options, so a compose file got "Flink refuses this TaskManager memory setup", exit 0.
        ("docker-compose.yml", "services:\n  jobmanager:\n    image: flink:1.20\n    command: jobmanager\n"
                               "    environment:\n      - JOB_MANAGER_RPC_ADDRESS=jobmanager\n"),
        ("values.yaml", "flink:\n  flinkProperties:\n    taskmanager.numberOfTaskSlots: \"2\"\n"),
        ("taskmanager.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: flink-taskmanager\n"
                             "spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n"
                             "        - name: taskmanager\n          image: flink:1.20\n"),
    ],
)
def test_non_config_is_one_line_and_exit_2(tmp_path: Path, name: str, content: str | None) -> None:
    path = tmp_path / name
    if content is None:
        shutil.copy(REPO / "sample_data" / "slow-sink" / "plan.json", path)
    else:
        path.write_text(content)
    done = _recommend(path, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not a Flink config" in lines[0] and name in lines[0], done.stderr


@pytest.mark.parametrize("sample", sorted((REPO / "sample_configs").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_are_still_accepted(tmp_path: Path, sample: Path) -> None:
    done = _recommend(sample, tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("line", "flag"), [("parallelism.default: lots", "--parallelism"),
                                            ("taskmanager.numberOfTaskSlots: many", "--slots")])
def test_an_unreadable_parallelism_or_slot_count_is_refused(tmp_path: Path, line: str, flag: str) -> None:
    # It was read as 1 (the default) and judged: "No changes: the configuration already fits", exit 0.
    path = tmp_path / "config.yaml"
    path.write_text(f"taskmanager.memory.process.size: 2048m\n{line}\n", encoding="utf-8")
    result = _recommend(path, tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "config.yaml:2:" in result.stderr
    assert "is not a whole number" in result.stderr and flag in result.stderr
    # The flag settles it: the file is judged (lint reports the value, FTC010).
    given = subprocess.run([sys.executable, "-m", "flinktune", "recommend", str(path), flag, "8"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert given.returncode == 0, given.stderr


def test_a_template_placeholder_is_an_assumption_not_an_error(tmp_path: Path) -> None:
    # A real config of the dev corpus sets taskmanager.numberOfTaskSlots: ${cpu_thread} (filled in at
    # deploy time): judged with 1 slot, and said so.
    path = tmp_path / "config.yaml"
    path.write_text("taskmanager.memory.process.size: 2048m\ntaskmanager.numberOfTaskSlots: ${cpu_thread}\n",
                    encoding="utf-8")
    result = _recommend(path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "slots 1: taskmanager.numberOfTaskSlots is the placeholder '${cpu_thread}'" in result.stdout


def test_a_bad_plan_is_one_line_naming_the_plan(tmp_path: Path) -> None:
    # lint said "badplan.json: parallelism of vertex ..."; recommend said it without the file.
    import json

    bad = {"plan": {"nodes": [{"id": "src", "parallelism": "x"}]}}
    (tmp_path / "badplan.json").write_text(json.dumps(bad), encoding="utf-8")
    path = tmp_path / "config.yaml"
    path.write_text("taskmanager.memory.process.size: 2048m\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "flinktune", "recommend", str(path), "--plan",
                             str(tmp_path / "badplan.json")], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "badplan.json: parallelism of vertex 'src'" in result.stderr
