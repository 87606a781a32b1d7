"""The bundled rules over every real config in the corpus: no crash, and spot-checked findings are true.

Each spot check below was verified by hand against the file and Flink's behaviour (see comments).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from testkit import shared_dir

from flinktune.config.reader import read_config_file
from flinktune.errors import ConfigError
from flinktune.rules import evaluate_document, load_rules
from flinktune.versions import FlinkVersion

CORPUS = shared_dir() / "corpus" / "flink-configs"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="config corpus not available")
RULES = load_rules()
V120, V20 = FlinkVersion(1, 20), FlinkVersion(2, 0)


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.is_file() and not p.name.endswith(".tsv"))


def findings(name_prefix: str, version: FlinkVersion = V120) -> list:  # type: ignore[type-arg]
    path = next(p for p in corpus_files() if p.name.startswith(name_prefix))
    out = []
    for document in read_config_file(path):
        out.extend(evaluate_document(RULES, document, version))
    return out


@pytest.mark.parametrize("version", [FlinkVersion(1, 13), FlinkVersion(1, 17), V120, V20])
def test_whole_corpus_evaluates(version: FlinkVersion) -> None:
    total = 0
    for path in corpus_files():
        try:
            documents = read_config_file(path)
        except ConfigError:
            continue
        for document in documents:
            total += len(evaluate_document(RULES, document, version))
    assert total > 100


def test_jobmanager_512m_is_refused() -> None:
    # 036: config.yaml with jobmanager.memory.process.size 512m. Overhead max(51.2m, 192m) + metaspace
    # 256m leaves 64m of Total Flink Memory, less than the 128m JM off-heap default
    # (JobManagerFlinkMemoryUtils: "The configured Total Flink Memory ... is less than ... Off-heap").
    found = [f for f in findings("036__") if f.code == "FTC051"]
    assert len(found) == 1 and "less than the configured Off-heap Memory" in found[0].message
    assert found[0].location.key == "jobmanager.memory.process.size"


def test_fine_grained_sizes_leave_overhead_below_its_minimum() -> None:
    # 041: process 1728m with task heap 512m, managed 512m, network 64m: Flink memory 1344m + 256m
    # metaspace leaves 128m of JVM overhead, below the 192m minimum (ProcessMemoryUtils).
    found = [f for f in findings("041__") if f.code == "FTC050"]
    assert len(found) == 1 and "Derived JVM Overhead size (128.000mb" in found[0].message


def test_small_task_heap_per_slot() -> None:
    # 055: process 1g, 5 slots: 1024 - 256 metaspace - 192 overhead = 576m Flink memory; managed 230.4m,
    # network 64m (min), framework 256m => 25.6m task heap, 5.1m per slot.
    found = [f for f in findings("055__") if f.code == "FTC052"]
    assert len(found) == 1 and "only 5.1mb per slot" in found[0].message


def test_invalid_value_and_typo_and_removed_key() -> None:
    # 005: taskmanager.network.numberOfBuffers is an Integer option; "300mb" cannot be parsed.
    assert any(f.code == "FTC010" and "300mb" in f.message for f in findings("005__"))
    # 049: jobmanager.rpc.ardress is one swap away from jobmanager.rpc.address.
    assert any(f.code == "FTC001" and "did you mean 'jobmanager.rpc.address'" in f.message
               for f in findings("049__"))
    # 011 (nexmark): floating-buffers-per-gate was removed in Flink 2.0 (2.0 release notes).
    assert any(f.code == "FTC004" and "floating-buffers-per-gate" in f.message
               for f in findings("011__", V20))


def test_no_false_positives_on_templates_and_plugin_parameters() -> None:
    # 013: the Prometheus reporter's port takes a range ("9250-9260"); 018/040: ${VAR} placeholders
    # filled in by a template tool. None of these is an invalid value.
    for prefix in ("013__", "018__", "040__"):
        assert not [f for f in findings(prefix) if f.code == "FTC010"], prefix


def _codes_at(prefix: str, version: FlinkVersion = V120) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for finding in findings(prefix, version):
        out.setdefault(finding.code, []).append(finding)
    return out


def test_issue14_values_spot_checked() -> None:
    # 060: state.backend: filesystem is the deprecated name of the HashMapStateBackend (StateBackendLoader).
    assert any("'filesystem' is deprecated" in f.message for f in _codes_at("060__")["FTC061"])
    # 026: checkpoints and savepoints under file:///tmp in a Docker setup (FTC081 since issue 29: /tmp is
    # emptied whatever the deployment, so it needs no deployment files to be a warning).
    assert {f.location.key for f in _codes_at("026__")["FTC081"]} == {"state.checkpoints.dir",
                                                                       "state.savepoints.dir"}
    # 059: the entrypoint appended to a file without a final newline; the savepoint dir swallowed the
    # next "jobmanager.rpc.address: ..." line (FTC121, any key of a flat file).
    assert any("a line break is missing" in f.message for f in _codes_at("059__")["FTC121"])
    # 023 (operator example): /flink-data is a volume the pod template mounts - not the container's disk.
    assert "FTC062" not in _codes_at("023__")
    # 011: the docs' example path file:///path/to/checkpoint was never filled in.
    assert any("/path/to/" in f.message for f in _codes_at("011__")["FTC064"])
    # 061: ${TARGETARCH} is a Docker build argument; "interval: 10" is 10 ms.
    assert {f.location.key for f in _codes_at("061__")["FTC064"]} == {"env.java.home", "env.java.opts"}
    assert "10 milliseconds" in _codes_at("061__")["FTC065"][0].message


def test_issue14_ignored_settings_spot_checked() -> None:
    # 013 / 060: reporters configured only by .class are not started since 1.17 (ReporterSetup).
    for prefix in ("013__", "060__"):
        assert _codes_at(prefix)["FTC070"][0].severity.value == "error", prefix
    # ... but on 1.16 the same line only is deprecated.
    assert "FTC070" not in _codes_at("013__", FlinkVersion(1, 16))
    # 050 has the factory too: only the redundant .class line is reported, as info.
    assert "FTC070" not in _codes_at("050__")
    # 011: JDK 8 GC-logging flags (gone in JDK 9, JEP 158/271).
    assert len(_codes_at("011__")["FTC072"]) == 3
    # 004 / 037 / 043: S3 secret keys committed in plaintext.
    for prefix in ("004__", "037__", "043__"):
        assert [f.location.key for f in _codes_at(prefix)["FTC073"]] == ["s3.secret-key"], prefix


def test_issue14_memory_without_size_only_where_the_file_is_complete() -> None:
    # 043: the Docker entrypoint appended jobmanager.rpc.address again and again to this very file, so it
    # is what Flink reads - and it sets no memory size (Flink 1.11+ refuses to start).
    assert "FTC050" in _codes_at("043__") and "FTC051" in _codes_at("043__")
    # 010: six keys that may as well be merged into the image's defaults: no refusal asserted.
    assert "FTC050" not in _codes_at("010__")
