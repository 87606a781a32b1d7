""" "Insufficient number of network buffers": the model (flinktune.model.buffers) and the lint vs real Flink.

Two TaskManagers x 4 slots run a job at parallelism 8, so with default slot sharing every TaskManager
holds 4 subtasks of every vertex and each all-to-all gate has 4 local and 4 remote channels. Flink
1.20 asks, per TaskManager, for every input gate's floating minimum plus 2 exclusive buffers per
*remote* channel, and for every result partition's subpartitions + 1 (InputGateSpecUtils,
NettyShuffleUtils, NetworkBufferPool @1.20; flink-facts.md §2). The model computes that requirement
R from the job graph; we give the TaskManagers exactly R buffers of network memory and then R - 1
(``taskmanager.memory.network.min = max = buffers x 32 KiB``) and require Flink to run the job at R
and to fail with Flink's own message at R - 1, for a one-exchange and a three-exchange job; plus the
point from real-flink-notes.md (8 MB on 2 x 8 slots: parallelism 16 fails, 8 runs).

The model's placement assumption (slot k holds subtask k of every vertex) is not Flink's
(cluster.evenly-spread-out-slots interleaves subtasks), but with all-to-all edges and full
TaskManagers the number of local channels per gate, hence the requirement, is the same; the test
also rebuilds the graph from the running job's REST plan and checks the model gives the same R.

The lint (FTC030) sees no job graph and assumes one all-to-all exchange with every channel remote,
an upper bound: it must fire whenever Flink fails for a job of that shape, and its threshold exceeds
the real requirement by exactly the exclusive buffers local channels do not take.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import pytest

from flinktune.model.buffers import (
    Edge,
    JobGraph,
    Vertex,
    buffer_settings,
    busiest_taskmanager,
    chain_graph,
    fits,
    job_graph_from_plan,
    placement_from_job_json,
    worst_case_taskmanager_buffers,
)
from flinktune.model.layout import taskmanager_buffers
from flinktune.versions import FlinkVersion

pytestmark = pytest.mark.flink

SEGMENT = 32 * 1024
SETTINGS = buffer_settings(FlinkVersion(1, 20))
INSUFFICIENT = "Insufficient number of network buffers"


def job_graph(exchanges: int, parallelism: int) -> JobGraph:
    """NetworkJob.java's graph: exchanges 1 is Gen->Parse -HASH-> KeyedAgg->SinkWork->Discard; exchanges 3
    is REBALANCE, HASH, REBALANCE between four vertices. Every edge all-to-all and pipelined_bounded."""
    if exchanges == 1:
        return JobGraph(
            (Vertex("source", parallelism), Vertex("agg", parallelism)), (Edge("source", "agg", "HASH"),)
        )
    return chain_graph(parallelism, exchanges, "HASH")


def required_buffers(graph: JobGraph, slots: int) -> int:
    return busiest_taskmanager(taskmanager_buffers(graph, SETTINGS, slots)).required


@dataclass(frozen=True)
class Run:
    exchanges: int
    parallelism: int


@dataclass(frozen=True)
class Point:
    slots: int  # per TaskManager; always two TaskManagers
    buffers: int  # network memory = buffers x 32 KiB
    runs: tuple[Run, ...]  # jobs started one after the other at this point


R1 = required_buffers(job_graph(1, 8), 4)
R3 = required_buffers(job_graph(3, 8), 4)
POINTS = (
    Point(4, R1 - 1, (Run(1, 8),)),
    Point(4, R1, (Run(1, 8), Run(3, 8))),
    Point(4, R3 - 1, (Run(3, 8),)),
    Point(4, R3, (Run(3, 8), Run(1, 8))),
    # real-flink-notes.md: 8 MB on 2 x 8 slots fails at parallelism 16 and runs at 8. At 8 Flink spreads
    # the subtasks 4 + 4 (cluster.evenly-spread-out-slots) where the model puts all 8 on one TaskManager:
    # 216 vs 240 buffers, both within 256, so the verdicts agree.
    Point(8, 256, (Run(3, 16), Run(3, 8))),
)


def graph_from_plan(plan: dict) -> JobGraph:
    nodes = plan["plan"]["nodes"]
    return JobGraph(
        tuple(Vertex(n["id"], int(n["parallelism"])) for n in nodes),
        tuple(
            Edge(i["id"], n["id"], i["ship_strategy"], i.get("exchange", "pipelined_bounded"))
            for n in nodes
            for i in n.get("inputs", [])
        ),
    )


def _outcome(cluster, job_id: str, settle_s: float = 5.0, timeout_s: float = 90.0) -> tuple[str, str]:
    """RUNNING once every vertex ran and kept running for `settle_s` (buffers are requested while tasks
    set up, before they run), else the terminal state and Flink's root exception."""
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


def _lint_fires(cli, config_file, parallelism: int) -> bool:
    result = cli("lint", str(config_file), "--select", "FTC030", "--parallelism", str(parallelism),
                 "--format", "json", "--flink-version", "1.20")  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    return any(f["code"] == "FTC030" for f in json.loads(result.stdout)["findings"])


def test_the_points_straddle_the_boundary():
    # Worked by hand from flink-facts.md §2.2/§2.3 (1.17+ streaming defaults, 4 remote of 8 channels):
    # one exchange per slot: partition 8+1, gate 2*4+1 -> 18; x4 slots = 72.
    # three exchanges per slot: 3 partitions (9 each) + 3 gates (9 each) = 54; x4 slots = 216.
    assert (R1, R3) == (72, 216)
    verdicts = {
        (p.slots, p.buffers, r.exchanges, r.parallelism): fits(
            busiest_taskmanager(
                taskmanager_buffers(job_graph(r.exchanges, r.parallelism), SETTINGS, p.slots)
            ),
            p.buffers,
            SEGMENT,
        ).fits
        for p in POINTS
        for r in p.runs
    }
    assert verdicts == {
        (4, 71, 1, 8): False,
        (4, 72, 1, 8): True,
        (4, 72, 3, 8): False,
        (4, 215, 3, 8): False,
        (4, 216, 3, 8): True,
        (4, 216, 1, 8): True,
        (8, 256, 3, 16): False,
        (8, 256, 3, 8): True,
    }


@pytest.mark.parametrize("point", POINTS, ids=lambda p: f"{p.slots}-slots-{p.buffers}-buffers")
def test_flink_agrees_with_the_model_and_the_lint(point: Point, flink_cluster, jar_id, flinktune_cli):
    network = f"{point.buffers * SEGMENT // 1024}kb"
    flink_cluster.use_taskmanagers(2, **{
        "taskmanager.numberOfTaskSlots": point.slots,
        "taskmanager.memory.network.min": network,
        "taskmanager.memory.network.max": network,
    })  # fmt: skip
    tms = flink_cluster.get("/taskmanagers")["taskmanagers"]
    assert [tm["slotsNumber"] for tm in tms] == [point.slots, point.slots]

    for run in point.runs:
        name = f"buffers-{point.buffers}-x{run.exchanges}-p{run.parallelism}"
        job_id = flink_cluster.submit(jar_id, run.parallelism, name=name, rate=200, exchanges=run.exchanges)
        try:
            state, error = _outcome(flink_cluster, job_id)
            graph = graph_from_plan(flink_cluster.get(f"/jobs/{job_id}/plan"))
        finally:
            if flink_cluster.job_state(job_id) not in ("FAILED", "CANCELED", "FINISHED"):
                flink_cluster.cancel(job_id)
        # The graph Flink actually built gives the model the same requirement as ours.
        assert len(graph.edges) == run.exchanges
        demand = busiest_taskmanager(taskmanager_buffers(graph, SETTINGS, point.slots))
        assert demand.required == required_buffers(job_graph(run.exchanges, run.parallelism), point.slots)
        model = fits(demand, point.buffers, SEGMENT)
        if model.fits:
            assert state == "RUNNING", (
                f"model: fits ({demand.required} <= {point.buffers}); Flink: {error[:400]}"
            )
        else:
            assert state == "FAILED", f"model: {model.message}; Flink kept the job {state}"
            assert INSUFFICIENT in error
            assert (
                f"The total number of network buffers is currently set to {point.buffers} of {SEGMENT}"
                in error
            )

        # The lint sees only the config: it must agree with its own stated worst case, and for a job of that
        # shape (one all-to-all exchange) it must have fired whenever Flink failed.
        lint_fires = _lint_fires(flinktune_cli, flink_cluster.tm_config_file, run.parallelism)
        worst = worst_case_taskmanager_buffers(run.parallelism, point.slots, SETTINGS).required
        assert lint_fires == (point.buffers < worst)
        if run.exchanges == 1 and state == "FAILED":
            assert lint_fires


def test_lint_threshold_minus_real_requirement_is_the_local_channels_exclusive_buffers():
    slots, parallelism = 4, 8
    worst = worst_case_taskmanager_buffers(parallelism, slots, SETTINGS).required
    local_per_gate = slots  # all-to-all, full TaskManagers: the producers in the same TaskManager
    assert worst - R1 == slots * SETTINGS.buffers_per_channel * local_per_gate


def _collected_placement(cluster, job_id: str) -> dict[tuple[str, int], str]:
    """Where Flink ran each subtask: /jobs/:jobid/vertices/:vertexid, as `flinktune collect` reads it."""
    vertices = cluster.get(f"/jobs/{job_id}")["vertices"]
    return placement_from_job_json([cluster.get(f"/jobs/{job_id}/vertices/{v['id']}") for v in vertices])


def _run_and_place(cluster, jar_id: str, buffers: int, parallelism: int, exchanges: int):
    name = f"placement-{buffers}-x{exchanges}-p{parallelism}"
    job_id = cluster.submit(jar_id, parallelism, name=name, rate=200, exchanges=exchanges)
    try:
        state, error = _outcome(cluster, job_id)
        graph = job_graph_from_plan(cluster.get(f"/jobs/{job_id}/plan"))
        placement = _collected_placement(cluster, job_id)
    finally:
        if cluster.job_state(job_id) not in ("FAILED", "CANCELED", "FINISHED"):
            cluster.cancel(job_id)
    return state, error, graph, placement


def test_the_model_with_the_collected_placement_finds_the_exact_boundary(flink_cluster, jar_id):
    """p=8 on 2 x 8 slots, three exchanges: TaskManagers half full, so where subtasks land decides.

    The default placement (slot k holds subtask k, TaskManager 0 full) says 240 buffers; the harness runs
    with cluster.evenly-spread-out-slots, so Flink spreads the subtasks and needs fewer. The model fed
    with the placement Flink reports must give the requirement N at which the job runs and below which
    it fails with Flink's own message.
    """
    slots, parallelism, exchanges = 8, 8, 3

    def use(buffers: int) -> None:
        network = f"{buffers * SEGMENT // 1024}kb"
        flink_cluster.use_taskmanagers(2, **{
            "taskmanager.numberOfTaskSlots": slots,
            "taskmanager.memory.network.min": network,
            "taskmanager.memory.network.max": network,
        })  # fmt: skip

    def required(graph: JobGraph, placement) -> int:
        return busiest_taskmanager(taskmanager_buffers(graph, SETTINGS, slots, placement=placement)).required

    # 1. Plenty of buffers (the last POINT's cluster): learn where Flink puts the subtasks.
    use(256)
    state, error, graph, placement = _run_and_place(flink_cluster, jar_id, 256, parallelism, exchanges)
    assert state == "RUNNING", error[:400]
    n = required(graph, placement)
    default = busiest_taskmanager(taskmanager_buffers(graph, SETTINGS, slots)).required
    tms = {tm: sum(1 for t in placement.values() if t == tm) for tm in set(placement.values())}
    # 4 subtasks of each of the 4 vertices in each TaskManager: 4 remote channels per gate, 54 per slot.
    assert sorted(tms.values()) == [16, 16], tms
    assert (n, default) == (216, 240)

    # 2. Exactly N: runs, on a placement that again needs N.
    use(n)
    state, error, graph, placement = _run_and_place(flink_cluster, jar_id, n, parallelism, exchanges)
    assert state == "RUNNING", f"model with placement: {n} fit; Flink: {error[:400]}"
    assert required(graph, placement) == n

    # 3. N - 1: fails with Flink's "Insufficient number of network buffers" (the default placement's 240
    # says "fails" here too, but it said so at N as well, where Flink ran the job).
    use(n - 1)
    state, error, graph, placement = _run_and_place(flink_cluster, jar_id, n - 1, parallelism, exchanges)
    assert state == "FAILED", f"model with placement: {n} > {n - 1}; Flink kept the job {state}"
    assert INSUFFICIENT in error
    assert f"The total number of network buffers is currently set to {n - 1} of {SEGMENT}" in error
    # The failed job's subtasks keep the TaskManagers they were deployed to.
    assert len(placement) == parallelism * len(graph.vertices)
    assert required(graph, placement) == n
