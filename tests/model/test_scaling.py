"""The rescale walk (model.scaling): DS2's policy with the autoscaler's target utilisation, key groups
and the cases where parallelism cannot help. Figures worked by hand in each test."""

from __future__ import annotations

import itertools

import pytest

from flinktune.errors import ModelInputError
from flinktune.model.scaling import (
    Link,
    VertexLoad,
    busiest_share,
    default_max_parallelism,
    hot_key_share,
    needed_parallelism,
    rescale,
)


@pytest.mark.parametrize(("p", "expected"), [(1, 128), (4, 128), (85, 128), (86, 256), (100, 256),
                                              (171, 256), (172, 512), (21846, 32768), (30000, 32768)])
def test_default_max_parallelism_is_flinks_rule(p: int, expected: int) -> None:
    # KeyGroupRangeAssignment.computeDefaultMaxParallelism: min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768)
    assert default_max_parallelism(p) == expected


def test_key_groups_make_the_busiest_subtask_take_the_ceiling() -> None:
    # 128 key groups on 3 subtasks: ranges of 43, 43, 42 (KeyGroupRangeAssignment).
    assert busiest_share(3, True, 128, None) == pytest.approx(43 / 128)
    assert busiest_share(3, False, 128, None) == pytest.approx(1 / 3)
    # The largest key group's share comes back from the busiest subtask's measured share.
    assert hot_key_share(busiest_share(4, True, 128, 0.5), 4, 128) == pytest.approx(0.5)


def _chain(*loads: VertexLoad, strategy: str = "HASH") -> list[Link]:
    return [Link(a.vertex_id, b.vertex_id, strategy) for a, b in itertools.pairwise(loads)]


def source(emitted: float) -> VertexLoad:
    """A back-pressured source that emits ``emitted`` records/s today."""
    return VertexLoad("src", "Source: Gen", 4, 50_000.0, input_per_s=emitted, output_per_s=emitted, busy=0.02,
                      backpressured=0.8, is_source=True)


SOURCE = source(4_000.0)


def test_one_slow_vertex_sized_for_the_target_at_the_target_utilisation() -> None:
    # 3,500 records per busy second and subtask (a 250 us pause, and some), 20,000 records/s asked,
    # 70% busy at most: 20,000 / (0.7 x 3,500) = 8.2 -> 9 subtasks on a rebalanced input.
    sink = VertexLoad("sink", "SinkWork", 4, 3_500.0, input_per_s=4_000.0, output_per_s=4_000.0, busy=0.99)
    plan = rescale([SOURCE, sink], _chain(SOURCE, sink, strategy="REBALANCE"), {"src": 20_000.0})
    got = plan.vertex("sink")
    assert got is not None and (got.verdict, got.needed, got.proposed) == ("scale-out", 9, 9)
    assert got.predicted_busy == pytest.approx(20_000 / (9 * 3_500))
    assert plan.vertex("src").verdict == "enough"   # type: ignore[union-attr]
    assert [v.vertex_id for v in plan.changes] == ["sink"] and plan.reaches_target


def test_a_keyed_vertex_is_sized_by_its_busiest_key_group_range() -> None:
    # 20,000 records/s at 1,000 per busy second: 29 subtasks if the load split evenly, but with 128
    # key groups the busiest of 29 holds 5 (3.9%): 32 subtasks hold at most 4 (3.1% of 20,000 = 625
    # <= 700 per subtask).
    agg = VertexLoad("agg", "KeyedAgg", 2, 1_000.0, input_per_s=1_900.0, output_per_s=1_900.0, busy=0.97,
                     keyed=True, max_parallelism=128, max_parallelism_source="job")
    plan = rescale([source(1_900.0), agg], _chain(SOURCE, agg), {"src": 20_000.0})
    got = plan.vertex("agg")
    assert got is not None and (got.needed, got.proposed) == (32, 32)
    assert "29 if the key groups split evenly" in got.reason
    assert needed_parallelism(agg, 20_000.0, 0.7, 128) == 32


def test_the_walk_sizes_the_next_bottleneck_in_the_same_step() -> None:
    # Source -> KeyedAgg (doubles records: a flatMap) -> SinkWork. Today KeyedAgg is the bottleneck and
    # SinkWork idles at the throttled rate; at the target SinkWork must take 2 x 12,000.
    agg = VertexLoad("agg", "KeyedAgg", 2, 2_000.0, input_per_s=3_000.0, output_per_s=6_000.0, busy=0.99,
                     keyed=True, max_parallelism=128)
    sink = VertexLoad("sink", "SinkWork", 4, 4_000.0, input_per_s=6_000.0, output_per_s=6_000.0, busy=0.37)
    links = [Link("src", "agg", "HASH"), Link("agg", "sink", "REBALANCE")]
    plan = rescale([source(3_000.0), agg, sink], links, {"src": 12_000.0})
    assert plan.vertex("agg").target_in_per_s == pytest.approx(12_000.0)    # type: ignore[union-attr]
    assert plan.vertex("sink").target_in_per_s == pytest.approx(24_000.0)   # type: ignore[union-attr]
    # 24,000 / (0.7 x 4,000) = 8.6 -> 9; KeyedAgg: 12,000 / 1,400 = 8.6 -> 9, key groups: 10 (13 of 128).
    assert {v.vertex_id: v.proposed for v in plan.changes} == {"agg": 10, "sink": 9}


def test_a_hot_key_gets_no_parallelism_and_says_why() -> None:
    # Subtask 0 takes 70% of KeyedAgg's input at p = 4 over 128 key groups: one key group carries
    # about (0.7 - 31/127) / (1 - 31/127) = 60%. At 2,000 records/s that is 1,206 on one subtask,
    # above the 700 one subtask takes at 70% busy: no parallelism reaches it.
    agg = VertexLoad("agg", "KeyedAgg", 4, 1_000.0, input_per_s=1_000.0, output_per_s=1_000.0, busy=0.3,
                     keyed=True, max_parallelism=128, busiest_input_share=0.7)
    plan = rescale([source(1_000.0), agg], _chain(SOURCE, agg), {"src": 2_000.0})
    got = plan.vertex("agg")
    assert got is not None and got.verdict == "hot-key" and got.proposed == 4 and got.needed is None
    assert "60%" in got.reason and "will not spread one key" in got.reason
    assert not plan.changes and not plan.reaches_target
    # A mild imbalance is no hot key: sized by the key-group model as usual.
    mild = VertexLoad("agg", "KeyedAgg", 4, 1_000.0, input_per_s=1_000.0, output_per_s=1_000.0, keyed=True,
                      max_parallelism=128, busiest_input_share=0.27)
    assert mild.hot_key_share is None
    assert rescale([source(1_000.0), mild], _chain(SOURCE, mild),
                   {"src": 2_000.0}).vertex("agg").verdict == "enough"  # type: ignore[union-attr]


def test_max_parallelism_caps_and_limits_what_flows_downstream() -> None:
    # 8 key groups: at most 8 subtasks of 500 records per busy second take 4,000 at 100% busy.
    agg = VertexLoad("agg", "KeyedAgg", 2, 500.0, input_per_s=1_000.0, output_per_s=1_000.0, keyed=True,
                     max_parallelism=8, max_parallelism_source="config")
    sink = VertexLoad("sink", "Sink", 2, 100_000.0, input_per_s=1_000.0, output_per_s=1_000.0)
    plan = rescale([source(1_000.0), agg, sink], _chain(SOURCE, agg, sink), {"src": 10_000.0})
    got = plan.vertex("agg")
    assert got is not None and (got.verdict, got.proposed, got.needed) == ("capped", 8, 29)
    assert "pipeline.max-parallelism" in got.reason
    assert plan.vertex("sink").target_in_per_s == pytest.approx(4_000.0)   # type: ignore[union-attr]


def test_a_source_that_waits_for_its_input_is_not_scaled() -> None:
    idle = VertexLoad("src", "Source: Kafka", 4, 40_000.0, input_per_s=5_000.0, output_per_s=5_000.0,
                      busy=0.1, backpressured=0.0, is_source=True)
    sink = VertexLoad("sink", "Sink", 4, 10_000.0, input_per_s=5_000.0, output_per_s=5_000.0, busy=0.12)
    plan = rescale([idle, sink], _chain(idle, sink), {"src": 20_000.0})
    got = plan.vertex("src")
    assert got is not None and got.verdict == "source-bound" and not got.changed
    assert "waits for its input" in got.reason
    # The job downstream is still sized for what was asked: 20,000 / 7,000 -> 3 (4 subtasks are enough).
    assert plan.vertex("sink").verdict == "enough"   # type: ignore[union-attr]


def test_the_senders_own_ratio_not_what_the_buffers_let_through() -> None:
    # Under back pressure the source has emitted 4,100 records/s while Parse took 1,790: the rest sits
    # in the buffers between them. Parse's target is the source's target times the source's own
    # out / in (1), not 1,790 / 4,100.
    src = VertexLoad("src", "Source: Gen", 4, 30_000.0, input_per_s=4_100.0, output_per_s=4_100.0, busy=0.03,
                     is_source=True)
    parse = VertexLoad("parse", "Parse", 4, 1_500.0, input_per_s=1_790.0, output_per_s=1_790.0, busy=0.3)
    plan = rescale([src, parse], _chain(src, parse, strategy="REBALANCE"), {"src": 4_000.0})
    assert plan.vertex("parse").target_in_per_s == pytest.approx(4_000.0)   # type: ignore[union-attr]


def test_a_join_takes_what_each_input_sends() -> None:
    a = VertexLoad("a", "Source: A", 1, 10_000.0, input_per_s=1_000.0, output_per_s=1_000.0, is_source=True)
    b = VertexLoad("b", "Source: B", 1, 10_000.0, input_per_s=3_000.0, output_per_s=3_000.0, is_source=True)
    join = VertexLoad("j", "Join", 2, 1_000.0, input_per_s=4_000.0, output_per_s=500.0, keyed=True)
    plan = rescale([a, b, join], [Link("a", "j"), Link("b", "j")], {"a": 2_000.0, "b": 3_000.0})
    assert plan.vertex("j").target_in_per_s == pytest.approx(5_000.0)   # type: ignore[union-attr]


def test_nothing_to_size_by_is_said_not_guessed() -> None:
    unknown = VertexLoad("agg", "KeyedAgg", 2, None, input_per_s=None, output_per_s=None)
    plan = rescale([SOURCE, unknown], _chain(SOURCE, unknown), {"src": 1_000.0})
    got = plan.vertex("agg")
    assert got is not None and got.verdict == "no-data" and not got.changed
    assert rescale([SOURCE], [], {}).vertex("src").verdict == "no-data"  # type: ignore[union-attr]


def test_bad_inputs_are_model_errors() -> None:
    with pytest.raises(ModelInputError):
        VertexLoad("v", "V", 0, 1.0)
    with pytest.raises(ModelInputError):
        VertexLoad("v", "V", 1, 0.0)
    with pytest.raises(ModelInputError):
        rescale([SOURCE], [], {"src": 1.0}, utilization=1.5)


def test_the_model_what_if_for_one_vertex() -> None:
    from flinktune.model.scaling import what_if

    # KeyedAgg at 2 x 900 records per busy second cannot take 4,000 (222% busy); 7 subtasks can (63%).
    w = what_if(4_000.0, 900.0, parallelism=2, keyed=True)
    assert (w.busy, w.busiest) == (pytest.approx(4000 / 1800), pytest.approx(64 / 128 * 4000 / 900))
    assert (w.scaling.verdict, w.scaling.needed) == ("scale-out", 7)
    assert w.scaling.predicted_busy == pytest.approx(4000 / (7 * 900))
    # The number of key groups caps it.
    capped = what_if(4_000.0, 900.0, keyed=True, max_parallelism=4)
    assert capped.scaling.verdict == "capped" and "max parallelism is 4 (as stated)" in capped.scaling.reason


def test_the_model_command_gives_the_what_if() -> None:
    import json

    from typer.testing import CliRunner

    from flinktune.cli.app import app

    runner = CliRunner()
    result = runner.invoke(app, ["model", "--capacity", "900", "--target-rate", "4000", "--parallelism", "2",
                                 "--keyed"])
    assert result.exit_code == 0, result.output
    assert "at parallelism 2: subtasks busy 222% on average" in result.output
    assert "needs 7 subtasks to stay at most 70% busy" in result.output
    result = runner.invoke(app, ["model", "--capacity", "900", "--target-rate", "4000", "-f", "json",
                                 "--target-utilization", "50%"])
    doc = json.loads(result.stdout)
    assert doc["parallelism"]["needed"] == 9 and doc["parallelism"]["target_utilization"] == 0.5
    result = runner.invoke(app, ["model", "--capacity", "900", "--target-rate", "4000", "--parallelism", "2",
                                 "--keyed", "-f", "markdown"])
    assert result.exit_code == 0, result.output
    section = result.stdout.split("## Parallelism what-if", 1)[1]
    assert "- scale-out: 4,000 records/s" in section and "needs 7 subtasks" in section
    for bad in (["--target-rate", "4000"], ["--capacity", "900"], ["--capacity", "0", "--target-rate", "1"],
                ["--capacity", "9", "--target-rate", "1", "--target-utilization", "0.7"]):
        result = runner.invoke(app, ["model", *bad])
        assert result.exit_code == 2 and "Traceback" not in result.output, (bad, result.output)
