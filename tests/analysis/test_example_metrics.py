"""The analysis rules' metrics examples (flinktune/analysis/example_metrics.py): a dump held in memory,
diagnosed by the analysis's own steps without Spark; and the same dump, written out, read by analyze
on Spark gives the same items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinktune.analysis.example_metrics import example_dump, items_from_metrics, vertex_id
from flinktune.errors import MetricsError
from flinktune.versions import FlinkVersion

V120 = FlinkVersion(1, 20)
BUSY_SINK = {
    "edges": ["Source: Gen --REBALANCE--> Parse --HASH--> Sink"],
    "vertices": {
        "Source: Gen": {"backPressuredTimeMsPerSecond": "90%", "outPoolUsage": "100%",
                        "numRecordsOut": "8000/s"},
        "Parse": {"backPressuredTimeMsPerSecond": "80%", "busyTimeMsPerSecond": "15%", "outPoolUsage": 1.0},
        "Sink": {"parallelism": 4, "busyTimeMsPerSecond": "98%", "numRecordsIn": "2000/s",
                 "inPoolUsage": [0.9, 0.8, 0.9, 0.7]},
    },
}


def _by_name(metrics: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    items, _env = items_from_metrics(metrics, V120)
    return {str(item["name"]): item for item in items}


def test_the_diagnosis_finds_the_origin_and_its_cause() -> None:
    items = _by_name(BUSY_SINK)
    assert [name for name, item in items.items() if item["is_origin"]] == ["Sink"]
    sink = items["Sink"]
    assert (sink["cause"], sink["parallelism"], sink["busy_mean"]) == ("all_busy", 4, pytest.approx(0.98))
    assert sink["upstream_backpressured"] == ["Parse", "Source: Gen"]
    assert sink["in_pool"] == pytest.approx(0.825)
    assert items["Parse"]["level"] == "HIGH" and items["Parse"]["backpressured"]
    assert sink["has_plan"] and not sink["single_sample"]


def test_values_percent_rates_series_and_subtasks() -> None:
    dump = example_dump({"samples": 3, "interval": "5s", "vertices": {"A": {
        "busyTimeMsPerSecond": ["50%", "0 100% 10%"], "outPoolUsage": "25%", "numRecordsIn": "100/s",
        "idleTimeMsPerSecond": None}}})
    def values(metric: str, subtask: int) -> list[float | None]:
        return [s.value for s in dump.samples if s.metric == metric and s.subtask_index == subtask]
    assert values("busyTimeMsPerSecond", 0) == [500.0] * 3
    assert values("busyTimeMsPerSecond", 1) == [0.0, 1000.0, 100.0]
    assert values("outPoolUsage", 1) == [0.25] * 3
    # A counter is given as its rate: the dump holds the running total, 5 s apart.
    assert values("numRecordsIn", 0) == [0.0, 500.0, 1000.0]
    assert values("idleTimeMsPerSecond", 0) == [None] * 3
    assert values("backPressuredTimeMsPerSecond", 0) == [0.0] * 3   # left out: 0
    assert {s.tm_id for s in dump.samples if s.subtask_index == 1} == {"tm-1"}
    assert dump.plan is None


def test_edges_are_the_plan() -> None:
    plan = example_dump({"edges": ["A --REBALANCE--> B --> C", "A --FORWARD--> C"],
                         "vertices": {"A": {}, "B": {"parallelism": 2}, "C": {}}}).plan
    assert plan is not None
    assert [(e.source_id, e.target_id, e.ship_strategy) for e in plan.edges] == [
        (vertex_id("A"), vertex_id("B"), "REBALANCE"), (vertex_id("B"), vertex_id("C"), "HASH"),
        (vertex_id("A"), vertex_id("C"), "FORWARD")]
    assert [v.parallelism for v in plan.vertices] == [1, 2, 1]


@pytest.mark.parametrize(("metrics", "says"), [
    ({"vertices": {"A": {"busyTime": 5}}}, "'busyTime' is not a metric the analysis reads"),
    ({"vertices": {"A": {"parallelism": 2, "busyTimeMsPerSecond": [1, 2, 3]}}}, "gives 3 subtasks"),
    ({"vertices": {"A": {"outPoolUsage": "5/s"}}}, "is a rate, but outPoolUsage is not a counter"),
    ({"vertices": {"A": {"outPoolUsage": "lots"}}}, "'lots' is not a number"),
    ({"vertices": {"A": {"outPoolUsage": "1 2", "inPoolUsage": "1 2 3"}}}, "different lengths"),
    ({"edges": ["A -> B"], "vertices": {"A": {}, "B": {}}}, "write it as 'A --HASH--> B'"),
    ({"edges": ["A --> C"], "vertices": {"A": {}}}, "no vertex 'C' under vertices"),
    ({"vertices": {}}, "'vertices' maps each vertex name"),
    ({"vertices": {"A": {}}, "bandwidth": 10}, "has no unit"),
    ({"vertices": {"A": {}}, "color": "red"}, "unknown key 'color'"),
    ({"vertices": {"A": {}}, "samples": 0}, "samples: 0"),
    ({"vertices": {"A": {"parallelism": 10**9}}}, "parallelism 1000000000 is not a whole number from 1"),
    ({"vertices": {"A": {"parallelism": 1000}, "B": {"parallelism": 999}}, "samples": 999}, "more than an"),
    ({"vertices": {1: {"tm": ["a", "b"]}}}, "'1': tm names 2 TaskManagers, the parallelism is 1"),
])
def test_a_bad_example_is_one_clear_line(metrics: dict, says: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(MetricsError) as caught:
        items_from_metrics(metrics, V120)
    line = caught.value.one_line()
    assert says in line and "\n" not in line and line.startswith("metrics example: ")


def _rule_example(code: str) -> dict:  # type: ignore[type-arg]
    from flinktune.rules import load_rules

    rule = next(r for r in load_rules() if r.code == code)
    return dict(rule.fail_examples[0].metrics or {})


@pytest.mark.spark
@pytest.mark.parametrize("shape", ["busy sink", "FTA003", "FTA005", "FTA010", "FTA011"])
def test_analyze_on_spark_reads_the_same_dump_the_same_way(spark, tmp_path: Path, shape: str) -> None:  # type: ignore[no-untyped-def]
    """The in-memory path is the analysis: the dump written as parquet beside its plan.json and read
    by run_analysis on Spark gives the same items (per-subtask values, a bandwidth and round trip,
    counters, samples over time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from flinktune.analysis import AnalysisOptions, run_analysis
    from flinktune.analysis.diagnose import vertex_items

    metrics = BUSY_SINK if shape == "busy sink" else _rule_example(shape)
    dump = example_dump(metrics)
    columns = {name: [getattr(s, name) for s in dump.samples] for name in dump.samples[0]._fields}
    columns["value"] = [float("nan") if v is None else v for v in columns["value"]]
    pq.write_table(pa.table({**columns, "host": ["h"] * len(dump.samples)}), tmp_path / "metrics.parquet")
    assert dump.plan is not None
    nodes = [{"id": v.vertex_id, "parallelism": v.parallelism, "description": v.name,
              "inputs": [{"id": e.source_id, "ship_strategy": e.ship_strategy, "exchange": e.exchange}
                         for e in dump.plan.edges if e.target_id == v.vertex_id]} for v in dump.plan.vertices]
    (tmp_path / "plan.json").write_text(json.dumps({"jid": "example", "name": "example", "nodes": nodes}))
    options = AnalysisOptions(inputs=(str(tmp_path / "metrics.parquet"),), warmup=dump.warmup, env=dump.env,
                              scaling=dump.scaling, segment_bytes=dump.segment_bytes)
    result = run_analysis(spark, options)
    on_spark = [item for diag in result.jobs for item in vertex_items(diag, dump.segment_bytes)]
    in_memory, _env = items_from_metrics(metrics, V120)
    assert on_spark == in_memory
    assert any(item["is_origin"] or item["temporary_bp"] or item["avg_record_bytes"] for item in in_memory)


def test_every_analysis_rule_example_starts_from_metrics() -> None:
    """Each analysis rule's examples, pass and fail, are diagnosed from metrics (none hands the rule a
    ready-made cause) and hold."""
    from flinktune.rules import load_rules
    from flinktune.rules.examples import run_examples

    rules = [rule for rule in load_rules() if rule.scope == "vertex"]
    assert len(rules) >= 11
    for rule in rules:
        examples = [*rule.pass_examples, *rule.fail_examples]
        assert all(e.metrics is not None and e.items is None for e in examples), rule.code
        results = run_examples(rule, items_from_metrics)
        assert len(results) == len(examples)
        assert all(r.ok for r in results), [f"{r.label()}: {r.detail}" for r in results if not r.ok]
        # Without the analysis a metrics example cannot be judged, and says how to run it.
        alone = run_examples(rule)[0]
        assert not alone.ok and "flinktune rules check" in alone.detail
