"""`flinktune analyze` on saved query_range answers recorded from a real Prometheus scraping a real
Flink 1.20 (tests/data/prometheus/skew, see test_prometheus.py): the skewed-key job, whose REST
collect dump of the same run was analysed as origin KeyedAgg, cause hot_subtask, subtask 2."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SKEW = Path(__file__).resolve().parents[1] / "data" / "prometheus" / "skew"


def test_analyze_reads_saved_answers_like_the_rest_dump(tmp_path):
    if shutil.which("java") is None:
        pytest.skip("analyze needs Java 17 (Spark)")
    # Some answers plain, some gzipped, as users save them with curl.
    files = sorted(SKEW.glob("*.json.gz"))
    for f in files[:5]:
        (tmp_path / f.name[: -len(".gz")]).write_bytes(gzip.decompress(f.read_bytes()))
    for f in files[5:]:
        shutil.copy(f, tmp_path / f.name)
    result = subprocess.run(
        [
            sys.executable, "-m", "flinktune", "analyze", str(tmp_path), "--plan", str(SKEW / "plan.json"),
            "--format", "json", "--no-progress",
        ],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr[-2000:]  # findings at warning level
    report = json.loads(result.stdout)
    expected = json.loads((SKEW / "meta.json").read_text())["rest_collect_analysis_same_run"]
    (job,) = report["jobs"]
    assert job["has_plan"]
    assert [(o["vertex"], o["cause"], o.get("hot_subtask")) for o in job["origins"]] == [
        (expected["origin"], expected["cause"], expected["hot_subtask"])
    ]
    # Task names come from the plan, not the filtered labels (SinkWork____Discard:_Writer).
    assert {v["name"] for v in job["vertices"]} == {
        "Source: Gen",
        "Parse",
        "KeyedAgg",
        "SinkWork -> Discard: Writer",
    }
