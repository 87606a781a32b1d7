"""Flink accepts what `flinktune recommend --write` writes, and the job it failed before then runs.

Start from a TaskManager config whose network memory (71 buffers) is too small for the three-exchange
job at parallelism 8 on 2 x 4 slots (it needs 216, test_network_buffers.py). `recommend --write`
rewrites the file; real TaskManagers read that file byte for byte, report the network memory the
model derives from it, and run the job.
"""

from __future__ import annotations

import json

import pytest

from flinktune.model.memory import taskmanager_memory_from_config
from flinktune.versions import FlinkVersion

pytestmark = pytest.mark.flink

SLOTS = 4
PARALLELISM = 8


def _flat(text: str) -> dict[str, str]:
    pairs = (line.split(": ", 1) for line in text.splitlines() if ": " in line and not line.startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def test_recommended_config_starts_and_runs_the_job(flink_cluster, jar_id, flinktune_cli, e2e_dir):
    folder = e2e_dir / "recommend"
    folder.mkdir(parents=True, exist_ok=True)
    config_file = folder / "config.yaml"
    config = {
        **flink_cluster.base_config,
        "taskmanager.numberOfTaskSlots": SLOTS,
        "taskmanager.memory.network.min": "2272kb",  # 71 buffers of 32 KiB
        "taskmanager.memory.network.max": "2272kb",
    }
    config_file.write_text(
        "".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in config.items()),
        encoding="utf-8",
    )
    before = config_file.read_text(encoding="utf-8")
    result = flinktune_cli(
        "recommend", str(config_file), "--parallelism", str(PARALLELISM), "--slots", str(SLOTS),
        "--taskmanagers", "2", "--exchanges", "3", "--rtt", "0.1ms", "--bandwidth", "10Gbit/s", "--write",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    after = config_file.read_text(encoding="utf-8")
    assert after != before
    assert (folder / "config.yaml.bak").read_text(encoding="utf-8") == before
    lint = flinktune_cli("lint", str(config_file), "--select", "FTC030", "--parallelism", str(PARALLELISM),
                         "--format", "json")  # fmt: skip
    assert json.loads(lint.stdout)["findings"] == []

    flink_cluster.use_taskmanagers_with_file(config_file, SLOTS)
    expected = taskmanager_memory_from_config(_flat(after), FlinkVersion(1, 20))
    for tm in flink_cluster.get("/taskmanagers")["taskmanagers"]:
        detail = flink_cluster.get(f"/taskmanagers/{tm['id']}")
        assert detail["memoryConfiguration"]["networkMemory"] == expected.network_bytes
        assert detail["memoryConfiguration"]["totalProcessMemory"] == expected.total_process_bytes

    job_id = flink_cluster.submit(jar_id, PARALLELISM, name="recommended-config", rate=200, exchanges=3)
    try:
        flink_cluster.wait_running(job_id)
        assert flink_cluster.job_state(job_id) == "RUNNING"
    finally:
        flink_cluster.cancel(job_id)
