"""The 2.x buffer model: what 2.x fixes, and the boundaries measured on a real Flink 2.3.0 cluster.

Sources: ``NettyShuffleEnvironmentConfiguration.fromConfiguration`` @2.3.0 (javap of flink-dist-2.3.0:
constants 2, 8, 10, 20 passed for buffers-per-channel, floating-buffers-per-gate,
max-buffers-per-channel, max-overdraft-buffers-per-gate); ``InputGateSpecUtils`` and
``NettyShuffleUtils.getMinMaxNetworkBuffersPerResultPartition`` are the same bytecode in 1.20.5 and
2.3.0. Boundaries: tests/e2e_flink/test_network_buffers_2x.py (2 x 4 slots, p = 8: runs at 72 and
fails at 71 with one HASH exchange; runs at 216 and fails at 215 with three exchanges).
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
    fits,
)
from flinktune.model.layout import taskmanager_buffers
from flinktune.versions import FlinkVersion

V2 = [FlinkVersion(2, m) for m in range(4)]


@pytest.mark.parametrize("version", V2, ids=str)
def test_2x_fixes_the_removed_options(version):
    s = buffer_settings(version)
    fixed = (s.buffers_per_channel, s.floating_per_gate, s.max_buffers_per_channel, s.max_overdraft_per_gate)
    assert fixed == (2, 8, 10, 20)
    assert not s.tunable
    with pytest.raises(ModelInputError, match="fixed to 2"):
        buffer_settings(version, buffers_per_channel=4)
    with pytest.raises(ModelInputError, match="legacy hybrid"):
        buffer_settings(version, hybrid_new_mode=False)
    assert buffer_settings(version).hybrid_new_mode


@pytest.mark.parametrize(("exchanges", "n"), [(1, 72), (3, 216)])
def test_measured_2x_boundary_is_predicted_exactly(exchanges, n):
    graph = (
        JobGraph((Vertex("s", 8), Vertex("a", 8)), (Edge("s", "a", "HASH"),))
        if exchanges == 1
        else chain_graph(8, exchanges, "HASH")
    )
    demand = busiest_taskmanager(taskmanager_buffers(graph, buffer_settings(FlinkVersion(2, 3)), 4))
    assert demand.required == n
    assert fits(demand, n, 32 * 1024).fits
    assert not fits(demand, n - 1, 32 * 1024).fits
    # Same sizing code as 1.20 with 1.20's defaults: same requirement.
    v120 = buffer_settings(FlinkVersion(1, 20))
    assert busiest_taskmanager(taskmanager_buffers(graph, v120, 4)).required == n
