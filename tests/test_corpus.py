"""Lint every real config of the corpus (../shared/corpus/flink-configs, see its SOURCES.tsv).

No file may crash the linter or be refused as unreadable, the CLI must agree with the library,
and a set of findings checked by hand against the files (and against Flink's own rules) must be
there, while some plausible false positives must not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from testkit import shared_dir

from flinktune.findings import Finding, Severity
from flinktune.lint import LintOptions, LintResult, lint_paths
from flinktune.versions import FlinkVersion

_FOUND = shared_dir() / "corpus" / "flink-configs"
CORPUS = _FOUND if _FOUND.is_dir() else None

pytestmark = pytest.mark.skipif(CORPUS is None,
                                reason="config corpus (../shared/corpus/flink-configs) not present")


def _files() -> list[str]:
    assert CORPUS is not None
    return sorted(str(p) for p in CORPUS.iterdir() if p.suffix in (".yaml", ".yml"))


@pytest.fixture(scope="module")
def corpus_result() -> LintResult:
    return lint_paths(_files(), LintOptions())


def _in(result: LintResult, prefix: str) -> list[Finding]:
    return [f for f in result.findings if Path(f.location.file).name.startswith(prefix)]


def _has(findings: Iterable[Finding], code: str, line: int | None = None, key: str | None = None,
         text: str = "") -> bool:
    return any(f.code == code and (line is None or f.location.line == line)
               and (key is None or f.location.key == key) and text in f.message for f in findings)


def test_every_corpus_file_is_linted_without_a_problem(corpus_result: LintResult) -> None:
    files = _files()
    assert len(files) >= 60
    assert corpus_result.problems == ()
    assert sorted(corpus_result.files) == files
    assert corpus_result.findings, "real configs with no finding at all means the rules did not run"


def test_cli_agrees_with_the_library(corpus_result: LintResult) -> None:
    done = subprocess.run([sys.executable, "-m", "flinktune", "lint", "--format", "json", *_files()],
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr
    assert done.returncode == 1, done.stderr          # findings at warning or above exist; nothing unreadable
    doc = json.loads(done.stdout)
    assert doc["summary"]["files"] == len(_files()) and doc["summary"]["problems"] == 0
    assert [(f["file"], f["line"], f["code"]) for f in doc["findings"]] == [
        (f.location.file, f.location.line, f.code) for f in corpus_result.findings]


# --- true findings, checked by hand -----------------------------------------------------------

def test_invalid_integer_value(corpus_result: LintResult) -> None:
    # line 255: `taskmanager.network.numberOfBuffers: 300mb`; the option is an Integer
    # (NettyShuffleEnvironmentOptions.NETWORK_NUM_BUFFERS), so Flink cannot parse "300mb".
    assert _has(_in(corpus_result, "005__"), "FTC010", 255, "taskmanager.network.numberOfBuffers", "300mb")


def test_duplicate_key_last_wins(corpus_result: LintResult) -> None:
    # taskmanager.numberOfTaskSlots is 1 on line 90 and 10 on line 312 (the docker image appends keys).
    assert _has(_in(corpus_result, "016__"), "FTC021", 312, "taskmanager.numberOfTaskSlots")


def test_misspelled_and_invented_keys(corpus_result: LintResult) -> None:
    # `jobmanager.rpc.ardress: jobamanger` (typo) and `taskmanager.numberOfTaskManagers` (no such option).
    assert _has(_in(corpus_result, "049__"), "FTC001", 20, "jobmanager.rpc.ardress")
    assert _has(_in(corpus_result, "054__"), "FTC002", 12, "taskmanager.numberOfTaskManagers")


def test_memory_setups_flink_refuses(corpus_result: LintResult) -> None:
    # 058: taskmanager.memory.flink.size 64m < framework heap 128m + framework off-heap 128m + ...
    # (TaskExecutorFlinkMemoryUtils: "Sum of configured Framework Heap Memory ... exceed ...
    # Total Flink Memory").
    assert _has(_in(corpus_result, "058__"), "FTC050", 24, text="Total Flink Memory")
    # 041: process 1728m with task.heap 512m + managed 512m + network 64m: 128+128+512+512+64 = 1344m
    # Flink memory, + 256m metaspace leaves 128m JVM overhead, below its 192m minimum (ProcessMemoryUtils).
    assert _has(_in(corpus_result, "041__"), "FTC050", 51, text="JVM Overhead")
    # 036 (config.yaml): jobmanager.memory.process.size 512m - 256m metaspace - 192m overhead = 64m
    # Total Flink Memory, less than the JobManager's 128m off-heap default (JobManagerFlinkMemoryUtils).
    assert _has(_in(corpus_result, "036__"), "FTC051", text="JobManager")
    assert all(f.severity == Severity.ERROR for f in _in(corpus_result, "058__") if f.code == "FTC050")


def test_deprecated_key_with_replacement(corpus_result: LintResult) -> None:
    # Flink 1.18 replaced Akka by Pekko: akka.ask.timeout is a deprecated key of pekko.ask.timeout from 1.18
    # (AkkaOptions @1.18, RpcOptions @1.20 in the release jars the catalog is built from). Target: 1.20.
    nexmark = [str(p) for p in CORPUS.glob("011__*")]
    on_120 = lint_paths(nexmark, LintOptions(flink_version=FlinkVersion(1, 20)))
    assert _has(on_120.findings, "FTC003", 97, "akka.ask.timeout", "pekko.ask.timeout")
    # Unstated, the file's pre-1.13 keys (akka.watch.heartbeat.interval, slotmanager.taskmanager-timeout)
    # and its lack of pekko.* / state.backend.type put it before 1.17: no 1.18 deprecation flood.
    versions = {Path(v.file).name[:4]: v for v in corpus_result.versions}
    assert versions["011_"].source == "inferred" and versions["011_"].version < FlinkVersion(1, 17)
    assert not _has(_in(corpus_result, "011__"), "FTC003", 97, "akka.ask.timeout")


def test_nested_yaml_in_a_flat_file(corpus_result: LintResult) -> None:
    # 008 writes `env:` / `  java:` / `    -home: ...` in flink-conf.yaml, which Flink reads line by line.
    assert _has(_in(corpus_result, "008__"), "FTC023", 3)


def test_version_comes_from_the_manifest(corpus_result: LintResult) -> None:
    versions = {Path(v.file).name[:4]: (v.version, v.source) for v in corpus_result.versions}
    assert versions["062_"] == (FlinkVersion(1, 13), "file")           # spec.flinkVersion: v1_13
    assert versions["017_"] == (FlinkVersion(1, 20), "file")           # spec.flinkVersion: v1_20
    assert versions["003_"] == (FlinkVersion(1, 20), "default")


def test_flink_2_findings_are_version_aware() -> None:
    assert CORPUS is not None
    nexmark = [str(p) for p in CORPUS.glob("011__*")]
    on_120 = lint_paths(nexmark, LintOptions())
    on_20 = lint_paths(nexmark, LintOptions(flink_version=FlinkVersion(2, 0)))
    # Deprecated in 1.20 and removed in 2.0 (NettyShuffleEnvironmentOptions @1.20 says so; 2.0 release notes).
    key = "taskmanager.network.memory.floating-buffers-per-gate"
    assert not _has(on_120.findings, "FTC004", 61, key)
    assert _has(on_20.findings, "FTC004", 61, key)
    assert _has(on_20.findings, "FTC020")                           # Flink 2.x reads only config.yaml


# --- false positives that must not appear -----------------------------------------------------

def test_clean_controls_have_no_errors(corpus_result: LintResult) -> None:
    for prefix in ("038__", "052__", "024__"):
        errors = [f for f in _in(corpus_result, prefix) if f.severity == Severity.ERROR]
        assert errors == [], prefix


def test_well_known_keys_are_never_flagged(corpus_result: LintResult) -> None:
    real = {"jobmanager.rpc.address", "jobmanager.rpc.port", "taskmanager.numberOfTaskSlots",
            "parallelism.default", "rest.port", "taskmanager.memory.process.size",
            "jobmanager.memory.process.size",
            "taskmanager.memory.network.min", "taskmanager.memory.network.max", "blob.server.port"}
    wrong = [f for f in corpus_result.findings
             if f.code in ("FTC001", "FTC002", "FTC003", "FTC004") and f.location.key in real]
    assert wrong == []


def test_network_ranges_that_are_fine_are_not_flagged(corpus_result: LintResult) -> None:
    # 003: network min 1024m <= max 2048m; 026 restates the defaults (fraction 0.1, 64mb, 1gb).
    for prefix in ("003__", "026__", "047__"):
        assert not any(f.code in ("FTC011", "FTC012") for f in _in(corpus_result, prefix)), prefix
    # 017 runs parallelism 6 on 4 slots in a 2048m TaskManager: far from the buffer limit.
    assert not _has(_in(corpus_result, "017__"), "FTC030")
    # 032 sets execution.buffer-timeout 5 ms: a valid, positive flush interval.
    assert not any(f.code in ("FTC031", "FTC032", "FTC033") for f in _in(corpus_result, "032__"))
