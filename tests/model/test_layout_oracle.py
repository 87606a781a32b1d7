"""The buffer demand flinktune computes equals the old per-subtask, per-TaskManager computation
(tests/layout_oracle.py) on random small layouts: parallelism, slots, TaskManagers, exchanges of every
ship strategy and partition type, explicit placements, batch (per pipelined region) and streaming,
Flink 1.13 to 2.3 with the buffer options each version reads. Compared: every TaskManager's totals and
requests in Flink's order, the busiest one, a batch job's stages, and Flink's verdict (``fits``: the
failing request, what is left, the racing sizes) at totals around the demand.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from layout_oracle import OracleTaskManager
from layout_oracle import batch as oracle_batch
from layout_oracle import busiest as oracle_busiest
from layout_oracle import fits as oracle_fits
from layout_oracle import taskmanagers as oracle_taskmanagers
from layout_oracle import worst_case as oracle_worst_case

from flinktune.errors import ModelInputError
from flinktune.model import batch as mbatch
from flinktune.model import buffers as mb
from flinktune.model import layout
from flinktune.versions import FlinkVersion

VERSIONS = [FlinkVersion(1, m) for m in range(13, 21)] + [FlinkVersion(2, 0), FlinkVersion(2, 3)]
STRATEGIES = ["HASH", "REBALANCE", "BROADCAST", "FORWARD", "RESCALE"]
TYPES = list(mb.PartitionType)
SEG = 32 * 1024


@st.composite
def buffer_settings(draw: st.DrawFn) -> mb.BufferSettings:
    version = draw(st.sampled_from(VERSIONS))
    tunable = version < FlinkVersion(2, 0)
    maybe = st.none() | st.integers(1, 40)
    kwargs: dict[str, Any] = {
        "sort_shuffle_min_buffers": draw(st.none() | st.integers(1, 600)),
        "required_per_gate_max": draw(maybe) if version >= FlinkVersion(1, 17) else None,
    }
    if tunable:
        kwargs.update(buffers_per_channel=draw(st.none() | st.integers(0, 4)),
                      floating_per_gate=draw(st.none() | st.integers(1, 12)),
                      sort_shuffle_min_parallelism=draw(maybe))
        if version >= FlinkVersion(1, 16):
            kwargs["max_overdraft_per_gate"] = draw(st.none() | st.integers(0, 6))
    if version >= FlinkVersion(1, 18) and tunable:
        kwargs["hybrid_new_mode"] = draw(st.none() | st.booleans())
    return mb.buffer_settings(version, **kwargs)


@st.composite
def graphs(draw: st.DrawFn, max_vertices: int = 5, max_parallelism: int = 24) -> mb.JobGraph:
    n = draw(st.integers(1, max_vertices))
    parallelism = [draw(st.integers(1, max_parallelism)) for _ in range(n)]
    edges = []
    for a in range(n):
        for b in range(a + 1, n):
            for _ in range(draw(st.sampled_from([0, 0, 1, 1, 1, 2]))):
                edges.append(mb.Edge(f"v{a}", f"v{b}", draw(st.sampled_from(STRATEGIES)),
                                     draw(st.sampled_from(TYPES))))
    # REST plans list vertices in any order (sinks first): the order decides ties, so it varies too.
    names = draw(st.permutations(list(range(n))))
    vertices = tuple(mb.Vertex(f"v{i}", parallelism[i]) for i in names)
    return mb.JobGraph(vertices, tuple(draw(st.permutations(edges))))


@st.composite
def placements(draw: st.DrawFn, graph: mb.JobGraph) -> dict[tuple[str, int], Any]:
    ids = draw(st.lists(st.sampled_from(["tm-a", "tm-b", "tm-c", 0, 1, 7]), min_size=1, max_size=4,
                        unique=True))
    return {(v.id, k): draw(st.sampled_from(ids)) for v in graph.vertices for k in range(v.parallelism)}


def _tm(d: mb.TaskManagerBuffers) -> tuple[Any, ...]:
    return (d.taskmanager, d.required, d.target, d.subtasks, d.each_request())


def _oracle_tm(d: OracleTaskManager) -> tuple[Any, ...]:
    return (d.taskmanager, d.required, d.target, d.subtasks, d.requests)


def _totals(required: int, data: st.DataObject) -> list[int]:
    """Totals where Flink's verdict changes: around the demand, and a few random ones below it."""
    near = [max(0, required + d) for d in (-2, -1, 0, 1)]
    return near + [data.draw(st.integers(0, max(required, 1))) for _ in range(3)]


def _same_fits(new: Any, old: OracleTaskManager, data: st.DataObject) -> None:
    for total in _totals(old.required, data):
        assert mb.fits(new, total, SEG) == oracle_fits(old, total, SEG), total


PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(graphs(), buffer_settings(), st.integers(1, 6), st.booleans(), st.booleans(), st.data())
def test_taskmanagers_equal_the_per_subtask_computation(graph: mb.JobGraph, s: mb.BufferSettings, slots: int,
                                                        all_remote: bool, placed: bool,
                                                        data: st.DataObject) -> None:
    placement = data.draw(placements(graph)) if placed else None
    new = layout.taskmanager_buffers(graph, s, slots, all_remote=all_remote, placement=placement)
    old = oracle_taskmanagers(graph, s, slots, all_remote=all_remote, placement=placement)
    assert [_tm(d) for d in new] == [_oracle_tm(d) for d in old]
    top, old_top = mb.busiest_taskmanager(new), oracle_busiest(old)
    assert _tm(top) == _oracle_tm(old_top)
    busiest = layout.busiest_taskmanager_buffers(graph, s, slots, all_remote=all_remote, placement=placement)
    assert _tm(busiest) == _oracle_tm(old_top)
    _same_fits(busiest, old_top, data)


@PROPERTY
@given(graphs(), buffer_settings(), st.integers(1, 6), st.none() | st.integers(1, 12), st.booleans(),
       st.data())
def test_batch_demand_equals_the_per_subtask_computation(graph: mb.JobGraph, s: mb.BufferSettings, slots: int,
                                                         taskmanagers: int | None, placed: bool,
                                                         data: st.DataObject) -> None:
    placement = data.draw(placements(graph)) if placed else None
    new = mbatch.batch_taskmanager_buffers(graph, s, slots, taskmanagers=taskmanagers, placement=placement)
    old = oracle_batch(graph, s, slots, taskmanagers=taskmanagers, placement=placement)
    assert _tm(new.busiest) == _oracle_tm(old.busiest)
    assert (new.stage, new.regions, new.per_stage_required, new.summed_required) == (
        old.stage, old.regions, old.per_stage_required, old.summed_required)
    assert [_tm(d) for d in new.stages] == [_oracle_tm(d) for d in old.stages]
    for total in _totals(old.busiest.required, data):
        assert new.fit(total, SEG) == old.fit(total, SEG), total


@PROPERTY
@given(st.integers(1, 64), st.integers(1, 12), buffer_settings(), st.integers(1, 4), st.sampled_from(TYPES),
       st.data())
def test_worst_case_equals_the_per_slot_computation(p: int, slots: int, s: mb.BufferSettings, exchanges: int,
                                                    ptype: mb.PartitionType, data: st.DataObject) -> None:
    new = mb.worst_case_taskmanager_buffers(p, slots, s, exchanges=exchanges, partition_type=ptype)
    old = oracle_worst_case(p, slots, s, exchanges, ptype)
    assert _tm(new) == _oracle_tm(old)
    _same_fits(new, old, data)


@PROPERTY
@given(st.integers(1, 64), st.integers(1, 8), st.integers(1, 12), buffer_settings(), st.integers(1, 2),
       st.data())
def test_stage_bound_equals_the_per_subtask_computation(p: int, slots: int, taskmanagers: int,
                                                        s: mb.BufferSettings, inputs: int,
                                                        data: st.DataObject) -> None:
    new = mbatch.stage_bound(p, slots, taskmanagers, s, inputs=inputs)
    vertices = [mb.Vertex(f"upstream{n}", p) for n in range(inputs)]
    vertices += [mb.Vertex("stage", p), mb.Vertex("downstream", p)]
    edges = [mb.Edge(f"upstream{n}", "stage", "HASH", mb.PartitionType.BLOCKING) for n in range(inputs)]
    edges.append(mb.Edge("stage", "downstream", "HASH", mb.PartitionType.BLOCKING))
    old = oracle_batch(mb.JobGraph(tuple(vertices), tuple(edges)), s, slots, taskmanagers=taskmanagers)
    assert _tm(new.busiest) == _oracle_tm(old.busiest)
    assert [_tm(d) for d in new.stages] == [_oracle_tm(d) for d in old.stages]
    for total in _totals(old.busiest.required, data):
        assert new.fit(total, SEG) == old.fit(total, SEG), total


def test_a_placement_missing_a_subtask_is_refused_as_before() -> None:
    graph = mb.JobGraph((mb.Vertex("a", 2),))
    try:
        layout.taskmanager_buffers(graph, mb.buffer_settings(), 1, placement={("a", 0): "tm"})
    except ModelInputError as error:
        assert "subtask 1 of vertex 'a'" in error.message
    else:
        raise AssertionError("an incomplete placement was accepted")
