"""First, do no harm: the eight cases of issue 13 as regression tests, on the model.

Flink facts used (flink-facts.md, real-flink-notes.md): the buffer demand of a TaskManager is
Flink's formula (InputGateSpecUtils, NettyShuffleUtils @1.20; flinktune.model.buffers, measured on
real Flink 1.20 in tests/e2e_flink/test_network_buffers.py: p=8 on 2 x 8 slots with three exchanges
needs 216 buffers as Flink places it, 240 with slot k holding subtask k); buffers-per-channel is
deprecated in 1.20 (NettyShuffleEnvironmentOptions @1.20) and fixed at 2 in 2.0
(NettyShuffleEnvironmentConfiguration @2.0); Flink 1.x maps taskmanager.heap.size / .mb to the total
Flink memory on a standalone cluster (ProcessMemoryUtils / BashJavaUtils, flinktune.situation.legacy);
the operator maps spec.taskManager.resource.memory onto taskmanager.memory.process.size
(FlinkConfigBuilder in flink-kubernetes-operator).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from flinktune.advise import Environment, parse_parameters, recommend
from flinktune.advise.limits import MEMORY_CEILING_BYTES, NETWORK_HEADROOM
from flinktune.advise.measured import Measured
from flinktune.advise.predict import barrier_wait_s
from flinktune.config.reader import read_config_text
from flinktune.findings import Severity
from flinktune.lint import LintOptions, lint_paths
from flinktune.model import buffers as mb
from flinktune.model import layout
from flinktune.model.memory import derive_taskmanager_memory, taskmanager_memory_options
from flinktune.versions import parse_version

V120 = parse_version("1.20")
BPC = "taskmanager.network.memory.buffers-per-channel"
SEGMENT = "taskmanager.memory.segment-size"


def cluster(parallelism: int, network: str = "8mb", slots: int = 8, extra: str = "") -> str:
    """The real-Flink suite's cluster: 2 TaskManagers x ``slots``, 1g each, fixed network memory."""
    return (f"taskmanager.memory.process.size: 1g\ntaskmanager.numberOfTaskSlots: {slots}\n"
            f"parallelism.default: {parallelism}\ntaskmanager.memory.network.min: {network}\n"
            f"taskmanager.memory.network.max: {network}\n" + extra)


def plan_json(parallelism: int, exchanges: int) -> dict:
    """NetworkJob.java's three-exchange shape as Flink's /jobs/:jobid/plan prints it."""
    nodes = [{"id": "v0", "parallelism": parallelism, "description": "Source"}]
    strategies = ["REBALANCE", "HASH", "REBALANCE"]
    for i in range(1, exchanges + 1):
        nodes.append({"id": f"v{i}", "parallelism": parallelism, "description": f"Op{i}",
                      "inputs": [{"num": 0, "id": f"v{i - 1}", "ship_strategy": strategies[(i - 1) % 3],
                                  "exchange": "pipelined_bounded"}]})
    return {"plan": {"jid": "x", "name": "network-job", "type": "STREAMING", "nodes": nodes}}


def run(text: str, version: str = "1.20", name: str = "flink-conf.yaml", *, measured: Measured | None = None,
        plan: dict | None = None, **flags: str):  # type: ignore[no-untyped-def]
    env = Environment().with_values(parse_parameters({k.replace("_", "-"): v for k, v in flags.items()}),
                                    "flag")
    document = read_config_text(text, name)[0]
    return recommend(document, text, parse_version(version), env, measured=measured, plan=plan)


def keys(rec) -> dict[str, str | None]:  # type: ignore[no-untyped-def]
    return {c.shown_key: c.value for c in rec.changes}


def real_fit(text: str, graph: mb.JobGraph, slots: int, version=V120) -> mb.NetworkFit:  # type: ignore[no-untyped-def]
    """Independently of the advisor: Flink's memory derivation and the plan's exact demand."""
    document = read_config_text(text, "flink-conf.yaml")[0]
    values = document.values()
    memory = derive_taskmanager_memory(taskmanager_memory_options(values), version)

    def given(key: str) -> int | None:
        return int(str(values[key])) if key in values else None

    settings = mb.buffer_settings(version, buffers_per_channel=given(BPC),
                                  floating_per_gate=given("taskmanager.network.memory.floating-buffers-per-gate"))
    demand = mb.busiest_taskmanager(layout.taskmanager_buffers(graph, settings, slots))
    return mb.fits(demand, memory.network_buffers, memory.segment_bytes)


def lint_errors(text: str, rec, tmp_path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    target = tmp_path / "out-flink-conf.yaml"
    target.write_text(text, encoding="utf-8")
    env = (("parallelism", rec.job.parallelism), ("slots", rec.job.slots))
    result = lint_paths([str(target)], LintOptions(flink_version=rec.version, env=env))
    return [f"{f.code} {f.message}" for f in result.findings if f.severity is Severity.ERROR]


# 1. It broke a working job -------------------------------------------------------------------------

def test_case1_a_working_job_is_not_broken_without_the_plan() -> None:
    text = cluster(8)
    graph = mb.chain_graph(8, 3)
    assert real_fit(text, graph, 8).fits            # 240 of 256 buffers: the job runs
    rec = run(text)
    assert BPC not in keys(rec) and SEGMENT not in keys(rec)      # no evidence: defaults stand
    assert real_fit(rec.new_text, graph, 8).fits
    # Below the pessimistic bound (three exchanges, every channel remote) the network memory is
    # raised for the bound, never a buffer count; the report says how to size it exactly.
    assert {c.shown_key for c in rec.changes} <= {"taskmanager.memory.network.min",
                                                  "taskmanager.memory.network.max",
                                                  "taskmanager.memory.process.size"}
    assert any("--plan" in w for w in rec.withheld)


def test_case1_evidence_without_the_plan_is_sized_for_the_bound() -> None:
    # 2 TaskManagers x 4 slots (the real-Flink suite's point: 216 buffers for three exchanges, 256 given).
    text = cluster(8, slots=4)
    graph = mb.chain_graph(8, 3)
    assert real_fit(text, graph, 4).fits
    # With a rate and a round trip but no plan: the raise is sized for the bound (three exchanges,
    # every slot hosting every vertex, every channel remote), so the real job still fits.
    rec = run(text, rate="100000", record_size="1kb", rtt="5ms")
    assert BPC in keys(rec)
    after = real_fit(rec.new_text, graph, 4)
    assert after.fits, after.message
    assert after.total_buffers >= math.ceil(after.required * NETWORK_HEADROOM)


def test_case1_with_the_plan_the_raise_keeps_the_job_running() -> None:
    text = cluster(8)
    graph = mb.chain_graph(8, 3)
    rec = run(text, plan=plan_json(8, 3), rate="100000", record_size="1kb", rtt="5ms")
    assert rec.original_fit is not None and rec.original_fit.required == 240
    after = real_fit(rec.new_text, graph, 8)
    assert after.fits and after.total_buffers >= 1.1 * after.required


# 2. Its fix for a failing job still failed -------------------------------------------------------

@pytest.mark.parametrize("with_plan", [False, True], ids=["bound", "plan"])
def test_case2_the_fix_for_a_failing_job_fits_with_headroom(with_plan: bool) -> None:
    text = cluster(16)
    graph = mb.chain_graph(16, 3)
    before = real_fit(text, graph, 8)
    assert not before.fits                               # Flink: "Insufficient number of network buffers"
    rec = run(text, plan=plan_json(16, 3) if with_plan else None)
    after = real_fit(rec.new_text, graph, 8)
    assert after.fits, after.message
    # Never sized at exactly 100%: at least the documented headroom above Flink's requirement.
    assert after.total_buffers >= NETWORK_HEADROOM * after.required - 32, (after.total_buffers,
                                                                             after.required)
    why = next(c for c in rec.changes if c.shown_key == "taskmanager.memory.network.min")
    assert ("the plan" if with_plan else "bound of 3 all-to-all exchange(s)") in " ".join(why.evidence)


# 3. Changes without evidence -----------------------------------------------------------------------

@pytest.mark.parametrize(("version", "name"), [("1.17", "flink-conf.yaml"), ("1.20", "flink-conf.yaml"),
                                               ("2.0", "config.yaml")])
def test_case3_no_credit_change_without_a_measured_or_stated_rate(version: str, name: str) -> None:
    text = "taskmanager.memory.process.size: 4g\ntaskmanager.numberOfTaskSlots: 4\nparallelism.default: 32\n"
    rec = run(text, version, name)
    assert not any(k in keys(rec) for k in (BPC, SEGMENT,
                                            "taskmanager.network.memory.floating-buffers-per-gate"))
    assert any("--rate" in w and "--rtt" in w for w in rec.withheld)
    # The rate alone is not enough: the round trip is assumed, never evidence.
    rec = run(text, version, name, rate="100000", record_size="1kb")
    assert not any(k in keys(rec) for k in (BPC, SEGMENT))
    assert any("--rtt" in w for w in rec.withheld)


def test_case3_a_raise_names_its_evidence_and_the_deprecation() -> None:
    text = "taskmanager.memory.process.size: 4g\ntaskmanager.numberOfTaskSlots: 4\nparallelism.default: 8\n"
    rec = run(text, rate="100000", record_size="1kb", rtt="20ms", exchanges="1")
    change = next(c for c in rec.changes if c.key == BPC)
    assert change.evidence == ("rate 100,000 records/s per subtask [--rate]", "record size 1024 B "
                                                                              "[--record-size]",
                               "rtt 20 ms [--rtt]")
    assert "deprecated in Flink 1.20" in change.why


# 4. Absurd settings are kept and memory inflated to match -----------------------------------------

@pytest.mark.parametrize("absurd", [30000, 10_000_000])
def test_case4_absurd_buffers_per_channel_are_reset_not_accommodated(absurd: int, tmp_path: Path) -> None:
    text = ("taskmanager.memory.process.size: 1g\ntaskmanager.numberOfTaskSlots: 2\nparallelism.default: 4\n"
            f"{BPC}: {absurd}\n")
    rec = run(text)
    assert keys(rec)[BPC] == "2"
    reset = next(c for c in rec.changes if c.key == BPC)
    assert "far outside" in reset.why
    assert "taskmanager.memory.process.size" not in keys(rec)
    assert "taskmanager.memory.network.max" not in keys(rec)
    assert lint_errors(rec.new_text, rec, tmp_path) == []
    assert run(rec.new_text).changes == ()


def test_case4_no_memory_size_above_the_ceiling() -> None:
    # Parallelism 10000 on 16 slots needs far more network memory than a 64 GiB container gives.
    text = ("taskmanager.memory.process.size: 4g\ntaskmanager.numberOfTaskSlots: 16\n"
            "parallelism.default: 10000\n")
    rec = run(text, exchanges="3")
    for change in rec.changes:
        if change.shown_key in ("taskmanager.memory.process.size", "taskmanager.memory.network.min",
                                "taskmanager.memory.network.max"):
            from flinktune.units import parse_memory_size

            assert parse_memory_size(str(change.value)).bytes <= MEMORY_CEILING_BYTES
    assert any("ceiling" in n for n in rec.notes)


# 5. False "Flink refuses" for legacy heap keys --------------------------------------------------

@pytest.mark.parametrize("line", ["taskmanager.heap.size: 1024m", "taskmanager.heap.mb: 1024"])
def test_case5_legacy_heap_keys_are_accepted_and_renamed(line: str) -> None:
    text = f"{line}\ntaskmanager.numberOfTaskSlots: 2\nparallelism.default: 2\n"
    rec = run(text)
    assert rec.original_memory_error is None             # Flink 1.20 maps it: no refusal
    rename = next(c for c in rec.changes if c.action == "rename")
    assert rename.new_key == "taskmanager.memory.flink.size" and rename.value == "1024m"
    assert "still accepts it" in rename.why and "refuse" not in rename.why
    assert run(rec.new_text).changes == ()


def test_case5_both_spellings_are_handled_consistently() -> None:
    text = ("taskmanager.heap.size: 2048m\ntaskmanager.heap.mb: 1024\ntaskmanager.numberOfTaskSlots: 2\n"
            "parallelism.default: 2\n")
    rec = run(text)
    actions = {c.key: (c.action, c.new_key) for c in rec.changes}
    assert actions["taskmanager.heap.size"] == ("rename", "taskmanager.memory.flink.size")
    assert actions["taskmanager.heap.mb"] == ("delete", None)      # ignored: .size is read first
    assert "taskmanager.heap" not in rec.new_text


# 6. FlinkDeployment output is not a fixed point; the ratchet ----------------------------------

DEPLOYMENT = """apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: big
spec:
  flinkVersion: v1_20
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "8"
  taskManager:
    resource:
      memory: "1024m"
  job:
    parallelism: 200
"""


def test_case6_deployment_memory_is_written_once_and_the_output_is_a_fixed_point() -> None:
    rec = run(DEPLOYMENT, name="deploy.yaml", exchanges="1")
    sized = [c for c in rec.changes if c.key == "spec.taskManager.resource.memory"]
    assert len(sized) == 1                                  # one raise, measured from the file's 1024m
    assert sized[0].current == "1024m" and sized[0].target == "spec"
    assert sized[0].action == "set" and sized[0].spec_path == ("taskManager", "resource", "memory")
    assert f'memory: "{sized[0].value}"' in rec.new_text
    assert run(rec.new_text, name="deploy.yaml", exchanges="1").changes == ()


def test_case6_no_ratchet_in_a_flat_file() -> None:
    text = "taskmanager.memory.process.size: 1g\ntaskmanager.numberOfTaskSlots: 8\nparallelism.default: 200\n"
    rec = run(text, exchanges="1")
    sizes = [c for c in rec.changes if c.key == "taskmanager.memory.process.size"]
    assert len(sizes) == 1 and sizes[0].current == "1g"
    assert run(rec.new_text, exchanges="1").changes == ()


# 7. Network-bound job (20 Mbit/s link) -----------------------------------------------------------

def test_case7_a_saturated_link_is_said_plainly_and_nothing_is_tuned() -> None:
    # The tbf run of real-flink-notes.md: ~2.4 MB/s received over a 20 Mbit/s (2.5 MB/s) link, the
    # receivers' input pools 1-30% full, the senders' output pools full.
    measured = Measured("job", 4, 600.0, 1024.0, 1.0, 1.0, "Sink", "network_or_credits", "all",
                        in_pool_usage=0.3, out_pool_usage=1.0, backpressured_exchanges=1,
                        remote_in_bytes_per_s=2.4e6)
    text = "taskmanager.memory.process.size: 2g\ntaskmanager.numberOfTaskSlots: 2\nparallelism.default: 4\n"
    rec = run(text, measured=measured, bandwidth="20Mbit/s", rtt="1ms", exchanges="1")
    assert any("the link is saturated" in n and "buffer tuning will not help" in n for n in rec.notes)
    assert not any(k in keys(rec) for k in (BPC, SEGMENT,
                                            "taskmanager.network.memory.buffer-debloat.enabled"))


def test_case7_debloating_only_when_the_input_gates_hold_the_data() -> None:
    text = "taskmanager.memory.process.size: 2g\ntaskmanager.numberOfTaskSlots: 2\nparallelism.default: 4\n"
    senders = Measured("job", 4, 100.0, 1024.0, None, None, "Sink", "network_or_credits", "all",
                       in_pool_usage=0.05, out_pool_usage=1.0, backpressured_exchanges=1)
    rec = run(text, measured=senders)
    assert "taskmanager.network.memory.buffer-debloat.enabled" not in keys(rec)
    assert any("senders' queues" in n for n in rec.notes)
    receivers = Measured("job", 4, 100.0, 1024.0, None, None, "Sink", "slow_receiver", "all",
                         in_pool_usage=0.95, out_pool_usage=1.0, backpressured_exchanges=1)
    rec = run(text, measured=receivers)
    assert keys(rec)["taskmanager.network.memory.buffer-debloat.enabled"] == "true"


# 8. Predicted effects off by 4x --------------------------------------------------------------------

def test_case8_the_prediction_covers_the_whole_back_pressured_path() -> None:
    # The slow-sink job: three back-pressured exchanges, p=4 on 2 x 2 slots, 1 KiB records at 300/s.
    text = "taskmanager.memory.process.size: 2g\ntaskmanager.numberOfTaskSlots: 2\nparallelism.default: 4\n"
    measured = Measured("job", 4, 300.0, 1024.0, None, None, "Sink", "all_busy", "all",
                        in_pool_usage=0.95, out_pool_usage=1.0, backpressured_exchanges=3)
    rec = run(text, measured=measured)
    before, after = rec.barrier_wait_s
    # Worked by hand: a gate holds 4 x 2 + 8 = 16 buffers of 32 KiB; as much waits in the senders'
    # queues; the receiver takes 300 x 1 KiB/s; three exchanges in a row.
    per_exchange = 2 * 16 * 32768 / (300 * 1024)
    assert before == pytest.approx(3 * per_exchange)
    assert after is not None and after < before
    # Debloating keeps ~1 s per gate and per queue: the wait drops to about 3 x 2 x 1 s.
    assert after == pytest.approx(6.0, rel=0.01)
    assert keys(rec)["taskmanager.network.memory.buffer-debloat.enabled"] == "true"
    # The other lever, with its cost.
    note = next(n for n in rec.notes if "Unaligned checkpoints" in n)
    assert "execution.checkpointing.unaligned.enabled" in note and "replayed on recovery" in note
    # One exchange would predict a third of it: the chain is what issue 13 missed.
    state = rec.job
    assert state.parallelism == 4


def test_case8_prediction_function_sums_over_exchanges() -> None:
    text = "taskmanager.memory.process.size: 2g\ntaskmanager.numberOfTaskSlots: 2\nparallelism.default: 4\n"
    measured = Measured("job", 4, 300.0, 1024.0, None, None, "Sink", "all_busy", "all",
                        in_pool_usage=0.95, out_pool_usage=1.0, backpressured_exchanges=1)
    rec = run(text, measured=measured)
    from flinktune.advise.plan import Evidence  # noqa: F401  (the planner's types import cleanly)

    assert rec.barrier_wait_s[0] is not None
    one = rec.barrier_wait_s[0]
    rec3 = run(text, measured=Measured("job", 4, 300.0, 1024.0, None, None, "Sink", "all_busy", "all",
                                       in_pool_usage=0.95, out_pool_usage=1.0, backpressured_exchanges=3))
    assert rec3.barrier_wait_s[0] == pytest.approx(3 * one)
    assert barrier_wait_s is not None


def test_the_headroom_is_configurable_and_never_100_percent() -> None:
    from typer.testing import CliRunner

    from flinktune.advise.limits import Margins
    from flinktune.cli.app import app
    from flinktune.errors import UsageError

    text = cluster(16)
    graph = mb.chain_graph(16, 3)
    document = read_config_text(text, "flink-conf.yaml")[0]
    rec = recommend(document, text, V120, Environment(), plan=plan_json(16, 3), margins=Margins(1.5))
    after = real_fit(rec.new_text, graph, 8)
    assert after.total_buffers >= 1.5 * after.required
    with pytest.raises(UsageError):
        Margins(1.0)                                      # exactly Flink's requirement: refused
    result = CliRunner().invoke(app, ["recommend", "-", "--headroom", "25"])
    assert result.exit_code == 2 and "percentage" in result.stderr
