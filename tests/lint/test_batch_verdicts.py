"""`lint` on batch configurations: an error exactly where Flink fails (issue 19).

The outcomes are issue 19's runs on a real Flink 1.20.5 cluster: 2 TaskManagers x 32 slots of 2g, a
BATCH job with every vertex at parallelism 64 and two blocking all-to-all exchanges (keyBy -> reduce ->
rebalance -> sink). Lint sees only the file (no plan): it charges a blocking batch job one stage at a
time with the channels a full cluster guarantees local (model.batch), so configurations that ran may
get a warning for the pessimistic bound (FTC034), never an error. Facts behind the numbers:
tests/model/test_batch.py. The closed loop on a real cluster: tests/e2e_flink/test_batch.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flinktune.config.reader import read_config_text
from flinktune.lint.model import LintOptions
from flinktune.lint.runner import lint_paths
from flinktune.versions import parse_version

BASE = ("taskmanager.memory.process.size: 2048m\ntaskmanager.numberOfTaskSlots: 32\n"
        "parallelism.default: 64\nexecution.runtime-mode: BATCH\n")
HASH = "taskmanager.network.sort-shuffle.min-parallelism: 1000\n"
SORT16 = "taskmanager.network.sort-shuffle.min-buffers: 16\n"
READ = "taskmanager.memory.framework.off-heap.batch-shuffle.size"


def _network(size: str) -> str:
    return f"taskmanager.memory.network.min: {size}\ntaskmanager.memory.network.max: {size}\n"


# (name, extra lines, what Flink 1.20.5 did, the error codes lint must give)
CASES = [
    ("sort-merge defaults", "", "failed: required 512, but only 471 available", {"FTC030"}),
    ("hash shuffle 32m", HASH + _network("32m"), "failed: Insufficient number of network buffers",
     {"FTC030"}),
    ("hash shuffle 100m", HASH + _network("100m"), "failed: Insufficient number of network buffers",
     {"FTC030"}),
    ("hash shuffle 160m", HASH + _network("160m"), "finished", set()),
    ("sort-merge min-buffers 16 at 32m", SORT16 + _network("32m"),
     "failed: Insufficient number of network buffers", {"FTC030"}),
    ("sort-merge min-buffers 16 at 100m", SORT16 + _network("100m"), "finished", set()),
    ("read memory 256m, framework off-heap 128m", SORT16 + _network("100m") + f"{READ}: 256m\n",
     "failed: OutOfMemoryError: Can't allocate enough direct buffer for batch shuffle read buffer pool",
     {"FTC043"}),
    ("read memory 256m, framework off-heap 384m",
     SORT16 + _network("100m") + f"{READ}: 256m\ntaskmanager.memory.framework.off-heap.size: 384m\n",
     "finished", set()),
    ("read memory 16kb", SORT16 + _network("100m") + f"{READ}: 16kb\n",
     "TaskManagers do not start: Illegal configuration ... must be no smaller than segment-size", {"FTC044"}),
]


@pytest.fixture(autouse=True)
def _folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _findings(text: str) -> list:  # type: ignore[type-arg]
    Path("config.yaml").write_text(text, encoding="utf-8")
    return list(lint_paths(["config.yaml"], LintOptions(flink_version=parse_version("1.20"))).findings)


@pytest.mark.parametrize(("name", "extra", "flink", "errors"), CASES, ids=[c[0] for c in CASES])
def test_lint_errors_exactly_where_flink_fails(name: str, extra: str, flink: str, errors: set[str]) -> None:
    found = _findings(BASE + extra)
    codes = {f.code for f in found if f.severity.value == "error"}
    assert codes == errors, (flink, [(f.code, f.message) for f in found])


def test_the_predicted_numbers_are_flinks() -> None:
    # Flink: "Insufficient number of network buffers: required 512, but only 471 available" (the first
    # stage: nine of the 32 sort-merge partitions of 512 get theirs from 5079 buffers).
    from flinktune.model import network_fit
    from flinktune.situation import resolve_situation

    document = read_config_text(BASE, "config.yaml")[0]
    verdict = network_fit.network_verdict(resolve_situation(document, text=BASE))
    assert verdict.fit is not None and "required 512, but only 471 available" in (verdict.fit.message or "")


@pytest.mark.parametrize("network", ["32m", "100m", "160m"])
def test_forced_hash_shuffle_has_no_sort_merge_warning(network: str) -> None:
    # Issue 19: with min-parallelism above the job's parallelism no sort-merge partition exists, yet lint
    # warned that sort-merge min-buffers exceed the network memory.
    found = _findings(BASE + HASH + _network(network))
    assert "FTC041" not in {f.code for f in found}


def test_sort_merge_min_buffers_warning_stays_for_sort_merge() -> None:
    assert "FTC041" in {f.code for f in _findings(BASE)}


def test_the_fix_keeps_the_task_heap() -> None:
    # Issue 19: the fix was one process size of 18870mb (the 0.1 network fraction made to give the
    # network alone).
    ftc030 = next(f for f in _findings(BASE) if f.code == "FTC030")
    assert "set taskmanager.memory.network.min: 803mb and taskmanager.memory.process.size: 3328mb" in \
        ftc030.message, ftc030.message
