"""Network buffers with the subtasks' real placement (flinktune.model.buffers, placement input).

Gate and partition sizes as in test_buffers.py: InputGateSpecUtils.createGateBuffersSpec (1.17+,
FLINK-30473), SingleInputGateFactory (1.13-1.16, bpc exclusive per remote channel), NettyShuffleUtils
.getMinMaxNetworkBuffersPerResultPartition (partition min Sp + 1); local channels take no exclusive
buffers (LocalInputChannel @1.20). The REST field names (``subtask``, ``taskmanager-id``, ``endpoint``,
``host``) are the FIELD_NAME_* constants of SubtaskExecutionAttemptDetailsInfo in flink-dist 1.20.5.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit import shared_dir

from flinktune.errors import ModelInputError
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
)
from flinktune.model.layout import subtask_buffers, taskmanager_buffers
from flinktune.versions import FlinkVersion

V116, V120 = FlinkVersion(1, 16), FlinkVersion(1, 20)
SEG = 32 * 1024
ROOT = Path(__file__).resolve().parents[1]
COLLECTED = sorted((ROOT / "data" / "real-flink-1.20-collect").glob("*/job.json"))
SHARED = sorted((shared_dir() / "data" / "real-flink-1.20").glob("*/job-vertices.json"))


def interleaved(graph: JobGraph, taskmanagers: int) -> dict[tuple[str, int], str]:
    """Subtask k of every vertex in TaskManager k mod n: spread over half-full TaskManagers."""
    return {(v.id, k): f"tm-{k % taskmanagers}" for v in graph.vertices for k in range(v.parallelism)}


# --- real dumps -------------------------------------------------------------------------------------

@pytest.mark.parametrize("job_file", COLLECTED + SHARED,
                         ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_real_placement_covers_the_plan_and_gives_the_hand_worked_requirement(job_file: Path):
    assert len(COLLECTED) == 3  # the fixtures exist; the shared dumps are optional on other machines
    data = json.loads(job_file.read_text(encoding="utf-8"))
    graph = job_graph_from_plan(json.loads((job_file.parent / "plan.json").read_text(encoding="utf-8")))
    placement = placement_from_job_json(data)
    assert set(placement) == {(v.id, k) for v in graph.vertices for k in range(v.parallelism)}
    tm_ids = {s["taskmanager_id"] for v in data["vertices"] for s in v["subtasks"]}
    demands = taskmanager_buffers(graph, buffer_settings(V120), 2, placement=placement)
    assert {d.taskmanager for d in demands} == tm_ids and len(tm_ids) == 2
    # Flink put subtasks {0, 3} in one TaskManager and {1, 2} in the other, not k // slots ({0,1}, {2,3}):
    by_tm = {tm: sorted({k for (_, k), t in placement.items() if t == tm}) for tm in tm_ids}
    assert sorted(by_tm.values()) == [[0, 3], [1, 2]]
    # Three all-to-all exchanges at p=4, 2 local + 2 remote channels per gate. Per slot, 1.20 defaults:
    # Source: partition 4+1 = 5; Parse and KeyedAgg: gate 2*2 + (9 - 4*2) = 5, partition 5; Sink: gate 5.
    # 30 per slot, 2 slots: 60. Full TaskManagers, all-to-all: the same as the default placement's.
    assert [d.required for d in demands] == [60, 60]
    assert [d.subtasks for d in demands] == [8, 8]
    default = taskmanager_buffers(graph, buffer_settings(V120), 2)
    assert [(d.required, d.target) for d in default] == [(d.required, d.target) for d in demands]


# --- where placement changes the answer --------------------------------------------------------------

def test_half_full_taskmanagers_interleaved_need_fewer_buffers_than_the_default_assumes():
    # p=8 on 2 x 8 slots, three all-to-all exchanges. Default: all 8 slots of TM 0, every channel local:
    # per slot 9 + (1+9) + (1+9) + 1 = 30 (a local gate keeps only its floating minimum 17 - 8*2 = 1);
    # x8 = 240. Spread 4 + 4: each gate 4 remote channels: 2*4 + 1 = 9; per slot 9+18+18+9 = 54, x4 = 216.
    graph, s = chain_graph(8, 3), buffer_settings(V120)
    spread = busiest_taskmanager(taskmanager_buffers(graph, s, 8, placement=interleaved(graph, 2)))
    packed = busiest_taskmanager(taskmanager_buffers(graph, s, 8))
    assert (spread.required, packed.required) == (216, 240)
    assert spread.assumption == "subtasks placed as given (2 TaskManager(s)), same-TaskManager channels local"
    assert fits(spread, 216, SEG).fits and not fits(spread, 215, SEG).fits
    assert not fits(packed, 216, SEG).fits


def test_forward_edge_across_taskmanagers_takes_exclusive_buffers():
    # Two slot sharing groups in effect: source k in tm-a, sink k in tm-b; every FORWARD channel remote.
    graph = JobGraph((Vertex("src", 4), Vertex("sink", 4)), (Edge("src", "sink", "FORWARD"),))
    placement = {("src", k): "tm-a" for k in range(4)} | {("sink", k): "tm-b" for k in range(4)}
    s = buffer_settings(V120)
    by_tm = {d.taskmanager: d for d in taskmanager_buffers(graph, s, 4, placement=placement)}
    # Partition Sp=1: min 2. Gate C=1, remote: q = 3, e = 2, floating min 3 - 2 = 1, required 2 + 1 = 3.
    assert (by_tm["tm-a"].required, by_tm["tm-b"].required) == (4 * 2, 4 * 3)
    subtasks = subtask_buffers(graph, s, 4, placement=placement)
    gates = [sb.gates[0] for sb in subtasks if sb.vertex_id == "sink"]
    assert [g.remote_channels for g in gates] == [1, 1, 1, 1]
    # The default placement keeps both ends in one TaskManager: local, 1 buffer per gate.
    default = taskmanager_buffers(graph, s, 4)
    assert [d.required for d in default] == [4 * 2 + 4 * 1]


def test_flink_116_counts_bpc_exclusive_buffers_per_remote_channel_only():
    # 1.16: gate required = remote * bpc + 1. p=4 over three TaskManagers {0,3}, {1}, {2}, one HASH edge.
    graph = JobGraph((Vertex("a", 4), Vertex("b", 4)), (Edge("a", "b", "HASH"),))
    where = {0: "x", 1: "y", 2: "z", 3: "x"}
    placement = {(v, k): where[k] for v in ("a", "b") for k in range(4)}
    s = buffer_settings(V116)
    by_tm = {d.taskmanager: d.required for d in taskmanager_buffers(graph, s, 2, placement=placement)}
    # x: 2 partitions of 5 + 2 gates with 2 remote channels (2*2 + 1 = 5) = 20; y, z: 5 + (3*2 + 1) = 12.
    assert by_tm == {"x": 20, "y": 12, "z": 12}


def test_all_remote_ignores_locality_but_keeps_the_placement():
    graph = chain_graph(8, 2)
    s = buffer_settings(V120)
    placed = taskmanager_buffers(graph, s, 8, all_remote=True, placement=interleaved(graph, 2))
    assert [d.taskmanager for d in placed] == ["tm-0", "tm-1"]
    # per slot: 9 + (17 + 9) + 17 = 52, 4 slots each
    assert [d.required for d in placed] == [208, 208]


@settings(max_examples=60, deadline=None)
@given(p=st.integers(1, 24), slots=st.integers(1, 8), exchanges=st.integers(1, 3),
       strategy=st.sampled_from(["HASH", "FORWARD", "RESCALE", "BROADCAST"]), p_last=st.integers(1, 24))
def test_placement_k_div_slots_reproduces_the_default(p, slots, exchanges, strategy, p_last):
    vertices = [Vertex(f"v{i}", p) for i in range(exchanges)] + [Vertex("last", p_last)]
    edges = [Edge(vertices[i].id, vertices[i + 1].id, strategy) for i in range(exchanges)]
    graph = JobGraph(tuple(vertices), tuple(edges))
    s = buffer_settings(V120)
    placement = {(v.id, k): k // slots for v in graph.vertices for k in range(v.parallelism)}
    with_placement = taskmanager_buffers(graph, s, slots, placement=placement)
    default = taskmanager_buffers(graph, s, slots)
    assert [(d.taskmanager, d.required, d.target, d.subtasks, d.requests) for d in with_placement] == [
        (d.taskmanager, d.required, d.target, d.subtasks, d.requests) for d in default
    ]


# --- the loader -----------------------------------------------------------------------------------------

def rest_vertex(vertex_id: str, tms: list[str | None], *, key: str = "taskmanager-id") -> dict:
    """One /jobs/:jobid/vertices/:vertexid answer as Flink 1.20 writes it (fields trimmed)."""
    return {
        "id": vertex_id, "name": vertex_id, "parallelism": len(tms), "now": 0,
        "subtasks": [
            {"subtask": k, "status": "RUNNING" if tm else "SCHEDULED", "attempt": 0, "host": "localhost",
             "endpoint": f"localhost:{4000 + int(tm[-1])}" if tm else "(unassigned)",
             key: tm or "(unassigned)"}
            for k, tm in enumerate(tms)
        ],
    }


def test_loader_reads_flinks_rest_shape_and_a_single_vertex():
    vertices = [rest_vertex("a", ["tm1", "tm2"]), rest_vertex("b", ["tm2", "tm1"])]
    assert placement_from_job_json({"vertices": vertices}) == {
        ("a", 0): "tm1", ("a", 1): "tm2", ("b", 0): "tm2", ("b", 1): "tm1"}
    assert placement_from_job_json(vertices) == placement_from_job_json({"vertices": vertices})
    assert placement_from_job_json(vertices[1]) == {("b", 0): "tm2", ("b", 1): "tm1"}


def test_loader_falls_back_to_the_endpoint_and_to_host_port():
    vertex = rest_vertex("a", ["tm1", "tm2"], key="unused")
    for s in vertex["subtasks"]:
        del s["unused"]
    assert placement_from_job_json([vertex]) == {("a", 0): "localhost:4001", ("a", 1): "localhost:4002"}
    old = {"id": "a",
           "subtasks": [{"subtask": 0, "host": "10.0.0.7:41233"}, {"subtask": 1, "host": "node-7"}]}
    # A bare host name cannot tell two TaskManagers of one machine apart: left out.
    assert placement_from_job_json([old]) == {("a", 0): "10.0.0.7:41233"}


def test_unassigned_subtasks_are_left_out_and_the_model_names_them():
    graph = JobGraph((Vertex("a", 2), Vertex("b", 2)), (Edge("a", "b", "HASH"),))
    placement = placement_from_job_json([rest_vertex("a", ["tm1", "tm2"]), rest_vertex("b", ["tm1", None])])
    assert ("b", 1) not in placement and placement[("b", 0)] == "tm1"
    with pytest.raises(ModelInputError, match="no TaskManager for subtask 1 of vertex 'b'"):
        taskmanager_buffers(graph, buffer_settings(V120), 2, placement=placement)


def test_a_placement_of_another_job_is_refused():
    graph = chain_graph(2, 1)
    with pytest.raises(ModelInputError, match="subtask 0 of vertex 'v0'"):
        subtask_buffers(graph, buffer_settings(V120), 2, placement={("other", 0): "tm"})


@pytest.mark.parametrize("tm", [None, "", True, 1.5, ["tm"]])
def test_bad_taskmanager_ids_are_refused(tm):
    graph = JobGraph((Vertex("a", 1),))
    with pytest.raises(ModelInputError):
        subtask_buffers(graph, buffer_settings(V120), 1, placement={("a", 0): tm})


@pytest.mark.parametrize("data, message", [
    ("job.json", "'vertices' list"),
    ({"job": {}}, "'vertices' list"),
    ({"vertices": [{"name": "x", "subtasks": []}]}, "vertex 0 .* non-empty 'id'"),
    ({"vertices": [{"id": "x"}]}, "'subtasks' list"),
    ({"vertices": [{"id": "x", "subtasks": [{"taskmanager_id": "t"}]}]}, "'subtask' index, got None"),
    ({"vertices": [{"id": "x", "subtasks": [{"subtask": -1, "taskmanager_id": "t"}]}]}, "got -1"),
    ({"vertices": [{"id": "x", "subtasks": ["t"]}]}, "'subtask' index"),
    ({"vertices": [{"id": "x", "subtasks": [{"subtask": 0, "taskmanager_id": "t1"},
                                            {"subtask": 0, "taskmanager_id": "t2"}]}]}, "listed twice"),
])
def test_loader_refuses_malformed_input_with_one_clear_line(data, message):
    with pytest.raises(ModelInputError, match=message) as info:
        placement_from_job_json(data)
    assert "\n" not in info.value.one_line()
