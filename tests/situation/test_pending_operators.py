"""Plans of Flink 2.x batch jobs that Flink had not finished building (situation.plan).

tests/data/flink-2.3-batch-failed-job-details.json is ``/jobs/:jobid`` of tests/e2e_flink's BatchJob
(Gen -> Parse -HASH-> Reduce -REBALANCE-> Hold -> Sink, BATCH, parallelism 16) on a real Flink 2.3.0
cluster, failed in its first stage ("Insufficient number of network buffers"): its ``plan`` holds the
source vertex alone, ``stream-graph`` every operator, ``pending-operators`` 3. Given only that plan,
recommend saw no exchange and said the job fits.
"""

from __future__ import annotations

import json
from pathlib import Path

from flinktune.config.reader import read_config_text
from flinktune.model import buffers as mb
from flinktune.model.network_fit import network_verdict
from flinktune.situation import Environment, parse_parameters, resolve_situation
from flinktune.situation.plan import with_pending_operators

DETAILS = json.loads((Path(__file__).resolve().parents[1] / "data" /
                      "flink-2.3-batch-failed-job-details.json").read_text(encoding="utf-8"))
CONFIG = ("taskmanager.memory.process.size: 1g\ntaskmanager.numberOfTaskSlots: 8\nparallelism.default: 16\n"
          "execution.runtime-mode: BATCH\n")


def test_the_plan_is_completed_from_the_stream_graph() -> None:
    assert len(DETAILS["plan"]["nodes"]) == 1 and DETAILS["pending-operators"] == 3
    plan, pending = with_pending_operators(DETAILS)
    assert pending == 3
    graph = mb.job_graph_from_plan(plan)
    # Reduce alone; Hold and Sink chained (FORWARD at one parallelism); both exchanges blocking.
    assert len(graph.vertices) == 3
    assert [(e.ship_strategy, e.partition_type) for e in graph.edges] == [
        ("HASH", mb.PartitionType.BLOCKING), ("REBALANCE", mb.PartitionType.BLOCKING)]
    names = [n["description"] for n in plan["plan"]["nodes"]]
    assert names[1:] == ["Reduce", "Hold<br/>+- Sink: Writer"]


def test_a_complete_plan_is_left_as_it_is() -> None:
    complete = {"plan": DETAILS["plan"], "pending-operators": 0, "stream-graph": DETAILS["stream-graph"]}
    assert with_pending_operators(complete) == (complete, 0)
    assert with_pending_operators(DETAILS["plan"]) == (DETAILS["plan"], 0)


def test_the_verdict_is_flinks_and_says_what_was_completed() -> None:
    document = read_config_text(CONFIG, "config.yaml")[0]
    environment = Environment().with_values(parse_parameters({"flink-version": "2.3"}), "flag")
    situation = resolve_situation(document, text=CONFIG, plan=DETAILS, environment=environment)
    assert situation.pending_operators == 3 and "3 operator(s)" in (situation.plan_note or "")
    verdict = network_verdict(situation)
    # Flink 2.3.0 printed "required 512, but only 0 available" for this run (8 sort-merge partitions of
    # 512 per TaskManager, 2048 buffers).
    assert verdict.fit is not None and not verdict.fit.fits
    assert verdict.fit.message is not None and "required 512, but only 0 available" in verdict.fit.message
    # The busiest stage is Reduce: a gate of 16 channels, 8 of them remote (2 each + 1), and a 512-buffer
    # sort-merge partition, on each of the 8 slots.
    assert verdict.demand is not None and verdict.demand.required == 8 * (17 + 512)


def test_collect_keeps_the_stream_graph_beside_the_plan() -> None:
    from flinktune.collect.job import plan_with_stream_graph

    plan = plan_with_stream_graph({"plan": DETAILS["plan"]}, DETAILS)
    assert plan["pending-operators"] == 3 and "stream-graph" in plan
    assert with_pending_operators(plan)[1] == 3
    finished = {**DETAILS, "pending-operators": 0}
    assert plan_with_stream_graph({"plan": DETAILS["plan"]}, finished) == {"plan": DETAILS["plan"]}
