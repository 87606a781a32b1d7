"""The Kubernetes operator's network-memory formula (flink-autoscaler MemoryTuning), ported and compared.

Vectors from apache/flink-kubernetes-operator
``flink-autoscaler/src/test/java/org/apache/flink/autoscaler/tuning/MemoryTuningTest.java``
(commit 6e9caeb4): ``testCalculateNetworkSegmentNumber`` and ``testMemoryTuning`` (vertex 1 scaled to
parallelism 25 feeds vertex 2 scaled to 10 over REBALANCE, 5 slots: network min = max = "13760 kb").
"""

from __future__ import annotations

import pytest

from flinktune.errors import ModelInputError
from flinktune.model.buffers import (
    Edge,
    JobGraph,
    Vertex,
    buffer_settings,
    busiest_taskmanager,
    chain_graph,
)
from flinktune.model.layout import taskmanager_buffers
from flinktune.model.operator_memory import network_segment_number, operator_network_memory
from flinktune.versions import FlinkVersion


@pytest.mark.parametrize(
    ("current", "connected", "strategy", "expected"),
    [
        (10, 10, "FORWARD", 10),  # equal parallelism FORWARD: bpc + floating
        (10, 15, "FORWARD", 12),  # "FORWARD is changed to RESCALE": ceil(15/10)*2 + 8
        (10, 15, "RESCALE", 12),
        (10, 15, "REBALANCE", 38),  # 15*2 + 8
        (10, 15, "UNKNOWN", 38),  # anything else: all-to-all
    ],
)
def test_operator_own_segment_vectors(current, connected, strategy, expected):
    assert network_segment_number(current, connected, strategy, 2, 8) == expected


def test_operator_memory_tuning_vector_13760_kb():
    graph = JobGraph((Vertex("v1", 50), Vertex("v2", 50)), (Edge("v1", "v2", "REBALANCE"),))
    result = operator_network_memory(graph, slots=5, parallelism={"v1": 25, "v2": 10})
    # v2's input from 25 producers: 25*2+8 = 58; v1's output to 10 consumers: 10*2+8 = 28.
    assert result.segments_per_slot == 86
    assert result.segments == 430
    assert result.network_bytes == 13760 * 1024  # the test's "13760 kb"


def test_same_pair_of_vertices_counts_once_as_in_the_operator_topology():
    one = JobGraph((Vertex("a", 4), Vertex("b", 4)), (Edge("a", "b", "HASH"),))
    two = JobGraph((Vertex("a", 4), Vertex("b", 4)), (Edge("a", "b", "HASH"), Edge("a", "b", "HASH")))
    assert operator_network_memory(two, 1).segments == operator_network_memory(one, 1).segments == 32
    # Flink itself gives the second exchange its own gate and partition.
    settings = buffer_settings(FlinkVersion(1, 20))
    assert busiest_taskmanager(taskmanager_buffers(two, settings, 1)).required == 2 * busiest_taskmanager(
        taskmanager_buffers(one, settings, 1)
    ).required


# The job shapes of the real-Flink suites (tests/e2e_flink/test_network_buffers*.py) and the boundary
# N measured there (runs at N, fails at N - 1; 1.20.5 and 2.3.0 alike), next to the operator's number.
SHAPES = [
    # (exchanges, parallelism, slots per TaskManager, measured N)
    (1, 8, 4, 72),
    (3, 8, 4, 216),
    (3, 8, 8, 216),  # 2 x 8 slots, subtasks spread 4 + 4 (test_..._collected_placement_...)
]


@pytest.mark.parametrize(("exchanges", "parallelism", "slots", "measured"), SHAPES)
def test_operator_over_provisions_the_suite_shapes(exchanges, parallelism, slots, measured):
    graph = (
        JobGraph((Vertex("s", parallelism), Vertex("a", parallelism)), (Edge("s", "a", "HASH"),))
        if exchanges == 1
        else chain_graph(parallelism, exchanges, "HASH")
    )
    operator = operator_network_memory(graph, slots)
    assert operator.segments > measured
    # What the operator computes is each pool's maximum with every channel remote and every slot full:
    # flinktune's all-remote target under default slot sharing.
    settings = buffer_settings(FlinkVersion(1, 20))
    worst = busiest_taskmanager(taskmanager_buffers(graph, settings, slots, all_remote=True))
    assert operator.segments == worst.target
    expected = {(1, 8, 4): 192, (3, 8, 4): 576, (3, 8, 8): 1152}[(exchanges, parallelism, slots)]
    assert operator.segments == expected


def test_bad_input_is_refused():
    with pytest.raises(ModelInputError):
        network_segment_number(0, 4, "HASH")
    graph = JobGraph((Vertex("a", 2),))
    with pytest.raises(ModelInputError):
        operator_network_memory(graph, 0)
    with pytest.raises(ModelInputError):
        operator_network_memory(graph, 1, parallelism={"zz": 3})


DEPLOYMENT = """apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: router
spec:
  flinkVersion: v1_20
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "4"
{tuning}  taskManager:
    resource:
      memory: "4096m"
  job:
    jarURI: local:///opt/flink/usrlib/router.jar
    parallelism: 8
"""


def _situation(tuning: str, plan=None):
    from flinktune.config.reader import read_config_text
    from flinktune.situation import resolve_situation

    text = DEPLOYMENT.format(tuning=tuning)
    (document,) = read_config_text(text, "deploy.yaml")
    return resolve_situation(document, text=text, plan=plan, plan_source="plan.json" if plan else None)


def test_operator_comparison_only_when_memory_tuning_is_on():
    from flinktune.model.operator_memory import operator_comparison

    assert operator_comparison(_situation("")) is None
    assert operator_comparison(_situation('    job.autoscaler.memory.tuning.enabled: "false"\n')) is None
    on = operator_comparison(_situation('    job.autoscaler.memory.tuning.enabled: "true"\n'))
    assert on is not None and not on.graph_known
    assert "no job plan" in on.assumption


def test_operator_comparison_reads_the_plan():
    from flinktune.model.operator_memory import operator_comparison

    plan = {"plan": {"nodes": [
        {"id": "src", "parallelism": 8},
        {"id": "agg", "parallelism": 8, "inputs": [{"id": "src", "ship_strategy": "HASH"}]},
    ]}}  # fmt: skip
    result = operator_comparison(_situation('    job.autoscaler.memory.tuning.enabled: "true"\n', plan))
    assert result is not None and result.graph_known
    # 2 x (8*2 + 8) per slot, 4 slots: the suite's one-exchange shape (measured N = 72).
    assert result.memory.segments == 192
    assert result.memory.network_bytes == 192 * 32 * 1024


def test_recommend_shows_the_operator_figure_only_with_memory_tuning_on(tmp_path):
    import json
    import subprocess
    import sys

    def run(tuning: str, *args: str) -> str:
        path = tmp_path / "deploy.yaml"
        path.write_text(DEPLOYMENT.format(tuning=tuning))
        result = subprocess.run([sys.executable, "-m", "flinktune", "recommend", str(path), *args],
                                capture_output=True, text=True, timeout=120)  # fmt: skip
        assert result.returncode in (0, 1), result.stderr
        return result.stdout

    on = '    job.autoscaler.memory.tuning.enabled: "true"\n'
    # No plan: the situation's stated bound, 3 HASH exchanges at p = 8, 4 slots: 3 x 2 x 24 x 4 = 576.
    assert "Kubernetes operator (job.autoscaler.memory.tuning.enabled) would set" in run(on)
    network = json.loads(run(on, "--format", "json"))["recommendations"][0]["network"]
    assert network["operator_memory_tuning"]["buffers"] == 576
    assert network["operator_memory_tuning"]["network_bytes"] == 576 * 32 * 1024
    assert "Kubernetes operator" not in run("")
