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
