"""The batch closed loop of test_batch.py on a real Flink 2.x cluster (the newest 2.x on PyPI).

Flink 2.x always uses sort-merge for blocking exchanges (``taskmanager.network.sort-shuffle.min-
parallelism`` is gone, so the forced-hash cases do not apply) and hard-codes the buffers per channel
and floating buffers per gate (docs/model.md); ``sort-shuffle.min-buffers`` and the batch-shuffle read
memory are still read. `lint` and `recommend` are told the cluster's version, so their verdicts and
Flink's error text must match Flink 2.x's own, and recommend's file must make the job run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from .conftest import FlinkCluster, flink_dist_version
from .test_batch import CASES, HASH_FORCED, SUITE, Case, _closed_loop

pytestmark = pytest.mark.flink

CASES_2X = [c for c in CASES if HASH_FORCED not in c.overrides]


@pytest.mark.parametrize("case", CASES_2X, ids=[c.name for c in CASES_2X])
def test_batch_on_flink_2x(case: Case, flink2_home: Path, flink2_cluster: FlinkCluster, jar2_id: str,
                           flinktune_cli: Any, tmp_path: Path) -> None:
    version = ".".join(flink_dist_version(flink2_home).split(".")[:2])
    assert version.startswith("2."), version     # lint and recommend are told the 2.x they judge
    _closed_loop(case, replace(SUITE, flink_version=version), flink2_cluster, jar2_id, flinktune_cli,
                 tmp_path, with_plan=True)
