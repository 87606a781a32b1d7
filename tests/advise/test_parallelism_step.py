"""The parallelism step (advise/steps/parallelism.py): where the per-vertex parallelism is written for
each version and format, the rescaled job's network buffers and slots fixed in the same set of changes,
and what is not proposed (blocked, withheld, absurd, not fitting).

Flink facts: ``pipeline.jobvertex-parallelism-overrides`` exists from 1.17 (PipelineOptions
.PARALLELISM_OVERRIDES, FLINK-29501; a Map ``JobVertexID:parallelism``), applied by the Dispatcher from the
cluster's and the job's configuration (Dispatcher.applyParallelismOverrides, 1.17 to 1.20, checked in
flink-dist 1.20.5; ParallelismOverrideUtil in 2.x); the operator maps ``spec.job.parallelism`` to
``parallelism.default`` (FlinkConfigBuilder.applyJobOrSessionSpec).
"""

from __future__ import annotations

import pytest

from flinktune.advise import Environment, parse_parameters, recommend
from flinktune.advise.measured import Measured
from flinktune.analysis.capacity import VertexRates
from flinktune.analysis.parallelism import ParallelismAdvice, TargetRate
from flinktune.config.reader import read_config_text
from flinktune.model.scaling import Link, VertexLoad, rescale
from flinktune.versions import parse_version

SRC, AGG, SINK = "a" * 32, "b" * 32, "c" * 32


def _plan(p: dict[str, int]) -> dict:
    return {"plan": {"jid": "j" * 32, "name": "job", "nodes": [
        {"id": SRC, "parallelism": p[SRC], "description": "Source: Gen"},
        {"id": AGG, "parallelism": p[AGG], "description": "KeyedAgg",
         "inputs": [{"num": 0, "id": SRC, "ship_strategy": "HASH", "exchange": "pipelined_bounded"}]},
        {"id": SINK, "parallelism": p[SINK], "description": "SinkWork",
         "inputs": [{"num": 0, "id": AGG, "ship_strategy": "REBALANCE", "exchange": "pipelined_bounded"}]}]}}


def _advice(p: dict[str, int], agg_rate: float, target: float, blocked: str | None = None,
            withheld: str | None = None, keyed_share: float | None = None) -> ParallelismAdvice:
    """The advice for Source -> KeyedAgg (too slow) -> SinkWork at ``target`` records/s."""
    names = {SRC: "Source: Gen", AGG: "KeyedAgg", SINK: "SinkWork"}
    throttled = agg_rate * p[AGG]
    rates = {SRC: 50_000.0, AGG: agg_rate, SINK: 20_000.0}
    loads = [VertexLoad(k, names[k], p[k], rates[k], input_per_s=throttled, output_per_s=throttled,
                        busy=1.0 if k == AGG else 0.1, backpressured=0.8 if k == SRC else 0.0, keyed=k == AGG,
                        is_source=k == SRC, busiest_input_share=keyed_share if k == AGG else None)
             for k in (SRC, AGG, SINK)]
    scaling = rescale(loads, [Link(SRC, AGG, "HASH"), Link(AGG, SINK, "REBALANCE")], {SRC: target})
    vrates = tuple(VertexRates(k, names[k], p[k], k == SRC, "counters", throttled, throttled, 1.0 if k == AGG
                               else 0.1, 1.0, 0.0, rates[k], None, None, None) for k in (SRC, AGG, SINK))
    target_rate = TargetRate(SRC, "Source: Gen", target, "stated")
    ids = {k: k for k in (SRC, AGG, SINK)}
    return ParallelismAdvice(vrates, (target_rate,), scaling, blocked, (), withheld, ids)


def _measured(advice: ParallelismAdvice, p: int = 4) -> Measured:
    return Measured("job", p, 1000.0, 100.0, 1.0, 1.0, "KeyedAgg", "all_busy", "all",
                    backpressured_exchanges=2, parallelism_advice=advice)


def _rec(text: str, version: str, advice: ParallelismAdvice, p: dict[str, int],
         name: str = "flink-conf.yaml", **flags: str):  # type: ignore[no-untyped-def]
    given = {k.replace("_", "-"): v for k, v in flags.items()}
    env = Environment().with_values(parse_parameters(given), "flag")
    document = read_config_text(text, name)[0]
    return recommend(document, text, parse_version(version), env, measured=_measured(advice),
                     plan=_plan(p))


P = {SRC: 4, AGG: 2, SINK: 4}
CONFIG = ("taskmanager.memory.process.size: 1g\ntaskmanager.numberOfTaskSlots: 4\nparallelism.default: 4\n"
          "taskmanager.memory.network.min: 7mb\ntaskmanager.memory.network.max: 7mb\n")


def test_overrides_are_written_with_the_rescaled_jobs_buffers_and_slots() -> None:
    # KeyedAgg: 900 records per busy second; 4,000 asked at 70%: 4,000 / 630 = 6.3 -> 7 subtasks.
    advice = _advice(P, 900.0, 4000.0)
    rec = _rec(CONFIG, "1.20", advice, P, taskmanagers="2")
    changes = {c.shown_key: c for c in rec.changes}
    assert changes["pipeline.jobvertex-parallelism-overrides"].value == f"{AGG}:7"
    assert f"pipeline.jobvertex-parallelism-overrides: {AGG}:7" in rec.new_text
    why = changes["pipeline.jobvertex-parallelism-overrides"].why
    assert "KeyedAgg 2 -> 7" in why and "Dispatcher" in why
    assert any("900 records per busy second" in e for e in changes["pipeline.jobvertex-parallelism-overrides"]
               .evidence)
    # 7 MiB (224 buffers) held the job at KeyedAgg 2; the rescaled graph needs more: fixed in the same set,
    # sized for the rescaled job (the final verdict is for the job as it will run).
    assert "taskmanager.memory.network.min" in changes and "taskmanager.memory.network.max" in changes
    assert rec.final_fit is not None and rec.final_fit.fits
    assert rec.original_fit is not None and rec.original_fit.fits
    needed = next(e for e in changes["pipeline.jobvertex-parallelism-overrides"].effects
                  if e.name == "network_needed_bytes")
    assert needed.after > needed.before
    # 2 TaskManagers of 4 slots hold the 7 the rescaled job needs: no TaskManager change.
    assert "TaskManagers" not in changes


def test_too_few_slots_for_the_rescaled_job_is_fixed_by_hand() -> None:
    advice = _advice(P, 900.0, 4000.0)
    rec = _rec(CONFIG.replace("numberOfTaskSlots: 4", "numberOfTaskSlots: 3"), "1.20", advice, P,
               taskmanagers="2")
    tms = next(c for c in rec.changes if c.key == "TaskManagers")
    assert tms.action == "manual" and (tms.current, tms.value) == ("2", "3")
    assert "needs 7 slots" in tms.why and "slot.request.timeout" in tms.why
    assert rec.final_fit is not None and rec.final_fit.fits
    # Do no harm: the override alone would leave the job waiting for slots, so --write does not write
    # it; it is shown, with its value, to set together with the TaskManagers.
    override = next(c for c in rec.changes if c.key == "pipeline.jobvertex-parallelism-overrides")
    assert override.action == "manual" and override.value == f"{AGG}:7"
    assert "together with the TaskManagers" in override.why
    assert "pipeline.jobvertex-parallelism-overrides" not in rec.new_text


def test_existing_overrides_of_other_vertices_are_kept() -> None:
    text = CONFIG + f"pipeline.jobvertex-parallelism-overrides: {SINK}:6,{AGG}:2\n"
    rec = _rec(text, "1.20", _advice(P, 900.0, 4000.0), P, taskmanagers="2")
    change = next(c for c in rec.changes if c.shown_key == "pipeline.jobvertex-parallelism-overrides")
    assert change.value == f"{SINK}:6,{AGG}:7"


@pytest.mark.parametrize(("version", "why"), [
    # Dispatcher.internalSubmitJob applies them only to a submitted JobGraph (flink-dist 2.3.0); 2.x
    # clients submit the StreamGraph (FLINK-38770): tests/e2e_flink/test_parallelism.py saw it on 2.3.
    ("2.3", "FLINK-38770"),
    ("1.16", "no per-vertex override (pipeline.jobvertex-parallelism-overrides, 1.17+)"),
])
def test_without_working_overrides_the_job_code_sets_it(version: str, why: str) -> None:
    rec = _rec(CONFIG, version, _advice(P, 900.0, 4000.0), P, taskmanagers="2")
    manual = next(c for c in rec.changes if c.proposed_by == "parallelism")
    assert manual.action == "manual" and manual.value == "KeyedAgg 2 -> 7"
    assert why in manual.why and "set it in the job code" in manual.why
    assert "pipeline.jobvertex-parallelism-overrides" not in rec.new_text


def test_before_1_17_one_parallelism_serves_when_every_vertex_follows_the_default() -> None:
    # Every vertex at the default parallelism: one parallelism serves them all.
    same = {SRC: 4, AGG: 4, SINK: 4}
    rec = _rec(CONFIG, "1.16", _advice(same, 400.0, 4000.0), same, taskmanagers="4")
    # 4,000 / (0.7 x 400) = 14.3; the busiest of 15 holds 9 of 128 key groups (281 > 280): 16.
    assert "parallelism.default: 16" in rec.new_text


DEPLOYMENT = """apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: job
spec:
  flinkVersion: v1_20
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "4"
  taskManager:
    resource:
      memory: "2048m"
      cpu: 1
  job:
    jarURI: local:///opt/flink/job.jar
    parallelism: 4
"""


def test_a_flinkdeployment_whose_vertices_all_follow_the_job_parallelism_gets_one() -> None:
    same = {SRC: 4, AGG: 4, SINK: 4}
    rec = _rec(DEPLOYMENT, "1.20", _advice(same, 400.0, 4000.0), same, name="deploy.yaml")
    change = next(c for c in rec.changes if c.proposed_by == "parallelism")
    assert (change.key, change.action, change.target) == ("spec.job.parallelism", "set", "spec")
    assert change.value == "16"
    assert "    parallelism: 16\n" in rec.new_text
    # Native mode: the operator's resource manager asks for the TaskManagers.
    assert any("resource manager starts them" in n for n in rec.notes)
    # One vertex set in the job code: the overrides, in flinkConfiguration.
    rec = _rec(DEPLOYMENT, "1.20", _advice(P, 900.0, 4000.0), P, name="deploy.yaml")
    assert f"pipeline.jobvertex-parallelism-overrides: {AGG}:7" in rec.new_text


def test_nothing_is_proposed_when_parallelism_will_not_help_or_the_rate_is_rough() -> None:
    blocked = _advice(P, 900.0, 4000.0, blocked="back pressure starts at the network")
    rec = _rec(CONFIG, "1.20", blocked, P, taskmanagers="2")
    assert not any(c.proposed_by == "parallelism" for c in rec.changes)
    assert any(n.startswith("Parallelism will not help: back pressure starts at the network")
               for n in rec.notes)
    rough = _advice(P, 900.0, 4000.0, withheld="the sources are back-pressured 97% of the time")
    rec = _rec(CONFIG, "1.20", rough, P, taskmanagers="2")
    assert not any(c.proposed_by == "parallelism" for c in rec.changes)
    assert any("97%" in w for w in rec.withheld)
    # A hot key: the walk says so and nothing changes.
    hot = _advice(P, 900.0, 4000.0, keyed_share=0.9)
    rec = _rec(CONFIG, "1.20", hot, P, taskmanagers="2")
    assert not any(c.proposed_by == "parallelism" for c in rec.changes)
    assert any("will not spread one key" in n for n in rec.notes)


def test_an_absurd_step_is_withheld() -> None:
    # 20 records per busy second, 4,000 asked: 286 subtasks from 2, far beyond 8x in one step.
    rec = _rec(CONFIG, "1.20", _advice(P, 20.0, 4000.0), P, taskmanagers="2")
    assert not any(c.proposed_by == "parallelism" for c in rec.changes)
    assert any("more than 8x in one step" in w for w in rec.withheld)


def test_a_rescale_whose_buffers_do_not_fit_is_not_proposed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The loop's do-no-harm rule: the file's 64 buffers hold the job as it runs (28 needed), the rescaled
    # job needs 84. With the network-memory step unable to help (here: switched off, as when no
    # TaskManager up to the memory ceiling gives enough), the rescale is the change that breaks a working
    # job: withdrawn, with the reason.
    from flinktune.advise.steps import network_memory

    monkeypatch.setattr(network_memory, "propose", lambda plan: None)
    text = CONFIG.replace("7mb", "2mb")
    rec = _rec(text, "1.20", _advice(P, 900.0, 4000.0), P, taskmanagers="2")
    assert not any(c.proposed_by == "parallelism" for c in rec.changes), [c.key for c in rec.changes]
    assert any(n.startswith("Not proposed (parallelism): it would raise the buffer demand to 84")
               for n in rec.notes), rec.notes
    assert rec.final_fit is not None and rec.final_fit.fits
    # With the step at work the same file gets the rescale and the network memory it needs.
    monkeypatch.undo()
    rec = _rec(text, "1.20", _advice(P, 900.0, 4000.0), P, taskmanagers="2")
    assert {"pipeline.jobvertex-parallelism-overrides", "taskmanager.memory.network.min"} <= {
        c.shown_key for c in rec.changes}
