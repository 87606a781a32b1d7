""" "Insufficient number of network buffers" on a real Flink 2.x cluster: the job runs at N buffers and
fails at N - 1, and flinktune.model.buffers predicts N exactly.

Measured the way test_network_buffers.py measures 1.20: two TaskManagers x 4 slots, the job at
parallelism 8 (every TaskManager holds 4 subtasks of every vertex; each all-to-all gate has 4 local and
4 remote channels), network memory pinned to exactly N and N - 1 buffers
(``taskmanager.memory.network.min = max = buffers x 32 KiB``).

Flink 2.x sizes pools with the same code as 1.20 (``InputGateSpecUtils.createGateBuffersSpec`` and
``NettyShuffleUtils.getMinMaxNetworkBuffersPerResultPartition`` are byte-for-byte the same in 1.20.5
and 2.3.0, compared with javap), but ``NettyShuffleEnvironmentConfiguration.fromConfiguration`` @2.3.0
hard-codes buffers-per-channel 2, floating-buffers-per-gate 8, max-buffers-per-channel 10 and overdraft
20 instead of reading the removed options; docs/model.md lists the differences. The model is given
Flink 2.x settings (buffer_settings(FlinkVersion(2, x))) and must give the N at which the job runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from flinktune.model.buffers import (
    buffer_settings,
    busiest_taskmanager,
    fits,
    job_graph_from_plan,
    placement_from_job_json,
)
from flinktune.model.layout import taskmanager_buffers
from flinktune.versions import FlinkVersion

from .conftest import flink_dist_version

pytestmark = pytest.mark.flink

SEGMENT = 32 * 1024
SLOTS = 4
PARALLELISM = 8
INSUFFICIENT = "Insufficient number of network buffers"


@dataclass(frozen=True)
class Boundary:
    exchanges: int
    n: int  # worked by hand (flink-facts.md §2.2/§2.3), and what the model must say


# One exchange per slot: partition 8+1, gate 2*4 remote + 1 -> 18; x4 slots = 72.
# Three exchanges per slot: 3 partitions (9 each) + 3 gates (9 each) = 54; x4 slots = 216.
BOUNDARIES = (Boundary(1, 72), Boundary(3, 216))


@pytest.fixture(scope="module")
def settings(flink2_home):
    major, minor = (int(x) for x in flink_dist_version(flink2_home).split(".")[:2])
    return buffer_settings(FlinkVersion(major, minor))


def _use(cluster, buffers: int) -> None:
    network = f"{buffers * SEGMENT // 1024}kb"
    cluster.use_taskmanagers(2, **{
        "taskmanager.numberOfTaskSlots": SLOTS,
        "taskmanager.memory.network.min": network,
        "taskmanager.memory.network.max": network,
    })  # fmt: skip


def _outcome(cluster, job_id: str, settle_s: float = 5.0, timeout_s: float = 90.0) -> tuple[str, str]:
    """RUNNING once every vertex ran and kept running for `settle_s`, else the terminal state and error."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = cluster.get(f"/jobs/{job_id}")
        if job["state"] in ("FAILED", "CANCELED", "FINISHED"):
            return job["state"], cluster.root_exception(job_id)
        if job["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in job["vertices"]):
            time.sleep(settle_s)
            state = cluster.job_state(job_id)
            return state, cluster.root_exception(job_id) if state != "RUNNING" else ""
        time.sleep(0.5)
    raise TimeoutError(f"job {job_id} neither ran nor failed within {timeout_s} s")


def _run(cluster, jar_id: str, buffers: int, exchanges: int):
    job_id = cluster.submit(jar_id, PARALLELISM, name=f"2x-{buffers}-x{exchanges}", rate=200,
                            exchanges=exchanges)  # fmt: skip
    try:
        state, error = _outcome(cluster, job_id)
        graph = job_graph_from_plan(cluster.get(f"/jobs/{job_id}/plan"))
        vertices = cluster.get(f"/jobs/{job_id}")["vertices"]
        details = [cluster.get(f"/jobs/{job_id}/vertices/{v['id']}") for v in vertices]
        placement = placement_from_job_json(details)
    finally:
        if cluster.job_state(job_id) not in ("FAILED", "CANCELED", "FINISHED"):
            cluster.cancel(job_id)
    return state, error, graph, placement


@pytest.mark.parametrize("boundary", BOUNDARIES, ids=lambda b: f"{b.exchanges}-exchange(s)")
def test_flink_2x_runs_at_n_and_fails_at_n_minus_1(boundary: Boundary, settings, flink2_cluster, jar2_id):
    assert settings.buffers_per_channel == 2 and settings.floating_per_gate == 8  # fixed in 2.x
    for buffers in (boundary.n - 1, boundary.n):
        _use(flink2_cluster, buffers)
        state, error, graph, placement = _run(flink2_cluster, jar2_id, buffers, boundary.exchanges)
        assert len(graph.edges) == boundary.exchanges
        # The model on the graph and placement Flink reports, and on the default placement, says N.
        placed = busiest_taskmanager(taskmanager_buffers(graph, settings, SLOTS, placement=placement))
        default = busiest_taskmanager(taskmanager_buffers(graph, settings, SLOTS))
        assert placed.required == default.required == boundary.n
        model = fits(placed, buffers, SEGMENT)
        if buffers == boundary.n:
            assert model.fits
            assert state == "RUNNING", f"model: {boundary.n} fit; Flink 2.x: {error[:400]}"
        else:
            assert not model.fits
            assert state == "FAILED", f"model: {boundary.n} > {buffers}; Flink 2.x kept the job {state}"
            assert INSUFFICIENT in error, error[:400]
            assert f"The total number of network buffers is currently set to {buffers} of {SEGMENT}" in error
