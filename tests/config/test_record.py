"""``Record`` values (flinktune.config.record): frozen, compared and hashed by their fields, copied with
``replace`` like a dataclass."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, dataclass

import pytest

from flinktune.config.record import replace
from flinktune.model.buffers import Edge, NetworkFit, PartitionType, TaskManagerBuffers


def test_replace_copies_a_record_with_the_changes_and_runs_its_init() -> None:
    demand = TaskManagerBuffers(0, 10, 12, 2)
    changed = replace(demand, assumption="stated", required=11)
    assert (changed.required, changed.target, changed.assumption) == (11, 12, "stated")
    assert demand.assumption == "" and changed != demand and replace(demand) == demand
    # __init__ runs again: an Edge normalises its strategy and partition type as when built.
    assert replace(Edge("a", "b"), ship_strategy=" rebalance ", partition_type="blocking") == Edge(
        "a", "b", "REBALANCE", PartitionType.BLOCKING)
    with pytest.raises(TypeError, match="no field"):
        replace(demand, requierd=1)


def test_replace_of_a_dataclass_is_dataclasses_replace() -> None:
    @dataclass(frozen=True)
    class Pair:
        a: int
        b: int = 0

    assert replace(Pair(1), b=2) == Pair(1, 2)


def test_records_are_frozen_hashable_and_pickle() -> None:
    fit = NetworkFit(True, 1, 2, 3, 4, None, None, None, None)
    with pytest.raises(FrozenInstanceError):
        fit.fits = False  # type: ignore[misc]
    assert hash(fit) == hash(NetworkFit(True, 1, 2, 3, 4, None, None, None, None))
    assert pickle.loads(pickle.dumps(fit)) == fit
    assert repr(fit).startswith("NetworkFit(fits=True, required=1")
