"""Constants shared by the recommend tests (imported by name: pytest runs with importlib mode)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_configs"
PROFILES = SAMPLES / "profiles"
GOLDEN = Path(__file__).resolve().parent / "golden"

# sample file -> profile; every sample config shipped must be listed (test_every_sample_is_covered).
SAMPLE_PROFILES = {
    "low-latency-streaming.flink-conf.yaml": "low-latency-streaming.yaml",
    "cross-az-throughput.flink-conf.yaml": "cross-az-throughput.yaml",
    "large-batch.flink-conf.yaml": "large-batch.yaml",
    "legacy-1.x.flink-conf.yaml": "legacy-1.x.yaml",
    "flink-2.x.config.yaml": "flink-2.x.yaml",
    "flinkdeployment.yaml": "flinkdeployment.yaml",
    "simulated-cluster.flink-conf.yaml": None,
}
