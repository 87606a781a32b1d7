"""The job plan: REST /jobs/:jobid/plan shape (flink-facts.md §5: edges live on the consumer's
``inputs[].id``; JsonPlanGenerator.java in flink-runtime)."""

from __future__ import annotations

import json

import pytest

from flinktune.analysis.plan import load_plan, name_from_description, parse_plan, prometheus_filtered
from flinktune.errors import MetricsError

from .conftest import real_dump  # type: ignore[import-not-found]


def test_real_plan_topological_order_and_names() -> None:
    plan = load_plan(real_dump("slow-sink") / "plan.json")
    names = [plan.name_of(v) for v in plan.topological_order()]
    assert names == ["Source: Gen", "Parse", "KeyedAgg", "SinkWork -> Discard: Writer"]
    sink = plan.topological_order()[-1]
    assert [plan.name_of(a) for a in plan.ancestors(sink)] == ["KeyedAgg", "Parse", "Source: Gen"]
    strategies = sorted(e.ship_strategy for e in plan.edges)
    assert strategies == ["HASH", "REBALANCE", "REBALANCE"]


def test_chain_description_becomes_task_name() -> None:
    assert name_from_description("SinkWork<br/>+- Discard: Writer<br/>") == "SinkWork -> Discard: Writer"
    assert name_from_description("Source: Gen<br/>") == "Source: Gen"


def test_id_for_accepts_id_name_and_prometheus_filtered_name() -> None:
    plan = load_plan(real_dump("slow-sink") / "plan.json")
    sink_id = "d2ba83d7e0731fc44219c2ac9f4401e7"
    assert plan.id_for(sink_id) == sink_id
    assert plan.id_for("SinkWork -> Discard: Writer") == sink_id
    # As the Prometheus reporter writes the label value (seen in the real scrape).
    assert prometheus_filtered("SinkWork -> Discard: Writer") == "SinkWork____Discard:_Writer"
    assert plan.id_for("SinkWork____Discard:_Writer") == sink_id
    assert plan.id_for("nope") is None


def test_jobs_endpoint_shape_with_vertex_names() -> None:
    doc = {
        "plan": {"jid": "j", "nodes": [{"id": "a", "parallelism": 1, "description": "x"}]},
        "vertices": [{"id": "a", "name": "Real Name"}],
    }
    assert parse_plan(doc).name_of("a") == "Real Name"


@pytest.mark.parametrize("text", ["[]", '{"plan": {}}', '{"nodes": [{"parallelism": 1}]}'])
def test_bad_plans_raise_metrics_error(tmp_path, text: str) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "plan.json"
    p.write_text(text)
    with pytest.raises(MetricsError):
        load_plan(p)


def test_plan_not_json_names_the_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "plan.json"
    p.write_text('{\n "plan": oops\n}')
    with pytest.raises(MetricsError) as info:
        load_plan(p)
    assert info.value.line == 2 and str(p) in info.value.one_line()


def test_round_trip_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = json.loads((real_dump("healthy") / "plan.json").read_text())
    assert len(parse_plan(src).vertices) == 4
