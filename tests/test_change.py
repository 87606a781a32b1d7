"""The one config change (flinktune.change): its shape, its applicability and what is written.

Lint fixes, recommend's changes and the writer all take this type; what ``lint --fix`` and
``recommend --write`` apply is decided by the applicability alone (safe / unsafe / manual).
"""

from __future__ import annotations

import pytest

from flinktune.change import Applicability, Change, writable
from flinktune.config.reader import read_config_text
from flinktune.config.writer import apply_changes
from flinktune.errors import WriteError

DEPLOYMENT = """apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: job
spec:
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
  taskManager:
    replicas: 2
    resource:
      memory: "2048m"
  job:
    parallelism: 4
"""


@pytest.mark.parametrize(("args", "kwargs"), [
    (("replace", "a"), {}),
    (("set", "a"), {}),                                     # set needs a value
    (("rename", "a"), {"new_key": "a"}),                    # onto itself
    (("set", ""), {"value": "1"}),                          # no key
    (("manual", "a"), {}),                                  # by hand, yet not applicability manual
    (("set", "job.parallelism", "8"), {"target": "spec"}),  # a spec field is spelled spec.<path>
    (("set", "a", "1"), {"target": "elsewhere"}),
])
def test_a_change_that_cannot_mean_anything_is_refused(args: tuple[str, ...], kwargs: dict) -> None:
    with pytest.raises(WriteError):
        Change(*args, **kwargs)


def test_what_is_written_follows_the_applicability() -> None:
    safe = Change("rename", "old", new_key="new", applicability=Applicability.SAFE)
    unsafe = Change("set", "a", "1")                        # the default: it changes what Flink runs with
    manual = Change("manual", "spec.taskManager.replicas", "3", applicability=Applicability.MANUAL,
                    target="spec")
    assert unsafe.applicability is Applicability.UNSAFE
    assert writable([safe, unsafe, manual], unsafe=False) == [safe]             # lint --fix
    assert writable([safe, unsafe, manual], unsafe=True) == [safe, unsafe]      # recommend --write
    assert [c.describe() for c in (safe, unsafe, manual)] == [
        "rename old to new", "set a: 1", "by hand: spec.taskManager.replicas: 3"]
    assert [c.describe_done() for c in (safe, unsafe)] == ["renamed old to new", "set a to 1"]
    assert safe.shown_key == "new" and unsafe.shown_key == "a"


def test_a_flinkdeployment_spec_field_is_a_change_too() -> None:
    # Issue 27 sets spec.job.parallelism / spec.taskManager.replicas: the type says so today, and the
    # writer sets an existing scalar of the spec in place, beside the flinkConfiguration edits.
    (document,) = read_config_text(DEPLOYMENT, "deploy.yaml")
    parallelism = Change("set", "spec.job.parallelism", "8", target="spec")
    replicas = Change("set", "spec.taskManager.replicas", "3", target="spec")
    slots = Change("set", "taskmanager.numberOfTaskSlots", "4")
    assert parallelism.spec_path == ("job", "parallelism") and slots.spec_path == ()
    out = apply_changes(DEPLOYMENT, document, [parallelism, replicas, slots])
    assert "    parallelism: 8\n" in out and "    replicas: 3\n" in out
    assert 'taskmanager.numberOfTaskSlots: "4"' in out
    assert out.replace("8\n", "4\n", 1).replace("replicas: 3", "replicas: 2").replace('"4"', '"2"') \
        == DEPLOYMENT
    # A field the manifest does not have, or a delete of one, is left to the user.
    with pytest.raises(WriteError, match="not in the manifest"):
        apply_changes(DEPLOYMENT, document, [Change("set", "spec.jobManager.replicas", "2", target="spec")])
    with pytest.raises(WriteError, match="by hand"):
        apply_changes(DEPLOYMENT, document, [Change("delete", "spec.job.parallelism", target="spec")])


def test_the_writer_never_writes_a_manual_change() -> None:
    (document,) = read_config_text("a: 1\n", "flink-conf.yaml")
    manual = Change("set", "a", "2", applicability=Applicability.MANUAL)
    with pytest.raises(WriteError, match="by hand"):
        apply_changes("a: 1\n", document, [manual])
