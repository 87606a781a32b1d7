"""recommend with default flags over the dev config corpus (../shared/corpus/flink-configs).

Nothing is stated with default flags, so only what the file itself justifies may change (keys the
version no longer reads, values Flink refuses or absurd ones, legacy keys, network memory that cannot
start even with one exchange); no memory size above the ceiling; the output lints clean on what
recommend owns; recommend on its own output proposes nothing; and the checked-in summary
(benchmarks/results/recommend-corpus.md, one line per change with its evidence) is current.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from flinktune.advise.limits import MEMORY_CEILING_BYTES
from flinktune.findings import Severity
from flinktune.lint import LintOptions, lint_paths
from flinktune.units import parse_memory_size

ROOT = Path(__file__).resolve().parents[2]


def _script() -> Any:
    path = ROOT / "benchmarks" / "recommend_corpus.py"
    spec = importlib.util.spec_from_file_location("recommend_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["recommend_corpus"] = module
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()
CORPUS = SCRIPT.default_corpus()
pytestmark = pytest.mark.skipif(CORPUS is None, reason="config corpus (../shared/corpus/flink-configs) not "
                                                       "present")

# Steps that may act on the file alone; every other step needs a stated or measured fact.
FILE_ONLY_STEPS = {"removed-keys", "absurd-values", "legacy-memory", "legacy-buffers", "timeout-keys",
                   "batch-shuffle", "network-memory", "memory-fit"}


@pytest.fixture(scope="module")
def results() -> dict[Path, list[Any]]:
    assert CORPUS is not None
    return {path: SCRIPT.recommend_file(path) for path in SCRIPT.corpus_files(CORPUS)}


def test_the_checked_in_summary_is_current() -> None:
    assert CORPUS is not None
    expected = SCRIPT.summary(CORPUS)
    assert SCRIPT.RESULT.read_text(encoding="utf-8") == expected, \
        "run .venv/bin/python benchmarks/recommend_corpus.py"


def test_only_what_the_file_justifies_changes(results: dict[Path, list[Any]]) -> None:
    for path, recs in results.items():
        for rec in recs:
            for change in rec.changes:
                assert change.proposed_by in FILE_ONLY_STEPS, (path.name, change)
                assert change.shown_key not in ("taskmanager.network.memory.buffers-per-channel",
                                                "taskmanager.memory.segment-size") \
                or change.proposed_by == "absurd-values"


def test_no_memory_size_above_the_ceiling(results: dict[Path, list[Any]]) -> None:
    for path, recs in results.items():
        for rec in recs:
            for change in rec.changes:
                key = change.shown_key
                if change.action != "delete" and key.endswith((".size", ".min", ".max")) and "memory" in key:
                    size = parse_memory_size(str(change.value)).bytes
                    assert size <= MEMORY_CEILING_BYTES, (path.name, change)


def _errors(text: str, rec: Any, tmp_path: Path, name: str) -> set[str]:
    target = tmp_path / name
    target.write_text(text, encoding="utf-8")
    result = lint_paths([str(target)], LintOptions(flink_version=rec.version))
    return {f.code for f in result.findings if f.severity is Severity.ERROR}


def test_output_lints_clean_and_is_a_fixed_point(results: dict[Path, list[Any]], tmp_path: Path) -> None:
    for path, recs in results.items():
        rec = recs[-1]
        if rec.new_text == rec.original_text:
            continue
        before = _errors(rec.original_text, rec, tmp_path, "before-" + path.name)
        after = _errors(rec.new_text, rec, tmp_path, "after-" + path.name)
        assert after <= before and not after & {"FTC030", "FTC050"}, (path.name, after - before)
        out = tmp_path / path.name
        out.write_text(rec.new_text, encoding="utf-8")
        again = SCRIPT.recommend_file(out)
        assert [c.key for r in again for c in r.changes] == [], path.name
