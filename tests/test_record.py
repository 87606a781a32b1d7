"""``Record`` values (flinktune.record): frozen, compared and hashed by their fields, copied with
``replace`` like a dataclass."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, dataclass

import pytest

from flinktune.model.buffers import Edge, NetworkFit, PartitionType, TaskManagerBuffers
from flinktune.record import replace


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


def test_fields_left_out_of_the_comparison_are_still_copied() -> None:
    """A Situation's catalog and deployment were ``field(compare=False)`` as a dataclass: as a Record
    they stay out of equality and hash (``_compared``) but ``replace`` and pickling keep them."""
    from flinktune.config.types import ConfigDocument, ConfigFormat
    from flinktune.situation.resolve import Situation
    from flinktune.situation.sourced import Sourced
    from flinktune.versions import FlinkVersion

    document = ConfigDocument("f.yaml", ConfigFormat.YAML, ())
    one = Situation(document, Sourced(FlinkVersion(1, 20), "flag"), catalog="a", deployed=1)
    other = Situation(document, Sourced(FlinkVersion(1, 20), "flag"), catalog="b", deployed=2)
    assert one == other and hash(one) == hash(other)
    assert replace(one, plan_source="x").catalog == "a" and pickle.loads(pickle.dumps(one)).deployed == 1
    assert replace(one, plan_source="x") != one


def test_a_record_subclass_extends_its_fields() -> None:
    """recommend's ProposedChange is the one config change plus what only the advisor knows."""
    from flinktune.advise.change import ProposedChange
    from flinktune.change import Applicability, Change

    change = ProposedChange("set", "a.b", "2", applicability=Applicability.SAFE, current="1", default="3")
    assert isinstance(change, Change) and (change.key, change.current, change.default) == ("a.b", "1", "3")
    assert replace(change, value="4").current == "1" and pickle.loads(pickle.dumps(change)) == change
    assert change != replace(change, current=None)
    with pytest.raises(FrozenInstanceError):
        change.current = "2"  # type: ignore[misc]
    from flinktune.errors import WriteError

    with pytest.raises(WriteError):     # Change's own checks still run
        ProposedChange("bogus", "a.b")
