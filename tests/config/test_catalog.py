"""The versioned option catalog, cross-checked against Flink's sources.

Sources: [FACTS] = /work/shared/reference/flink-facts.md (§1.2 network options, §1.6 default matrix,
which reads NettyShuffleEnvironmentOptions / TaskManagerOptions / ExecutionOptions at each release
branch cut of apache/flink). The catalog itself is extracted from the jars of the newest patch
release of each minor version (docs/catalog.md), so where a change was backported to a patch
release the catalog follows the jar, and the test says so.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from flinktune.config.catalog import KINDS, KeyStatus, load_catalog
from flinktune.errors import CatalogError
from flinktune.versions import SUPPORTED, FlinkVersion

V = FlinkVersion
ONE_X = [V(1, m) for m in range(13, 21)]
TWO_X = [v for v in SUPPORTED if v.major == 2]
NSEO = "org.apache.flink.configuration.NettyShuffleEnvironmentOptions"
LONG_MAX = 2**63 - 1


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_every_supported_version_is_catalogued_with_its_exact_release(catalog):
    assert tuple(catalog.versions) == SUPPORTED
    assert catalog.releases[V(1, 20)].startswith("1.20.")
    assert catalog.releases[V(1, 13)] == "1.13.6"   # last 1.13 release on PyPI
    for version, release in catalog.releases.items():
        assert release.startswith(f"{version}."), (version, release)


def test_load_is_cached(catalog):
    assert load_catalog() is catalog


def test_catalog_covers_all_options_not_only_network(catalog):
    # A few keys from unrelated areas; unknown-key detection must not flag them.
    for key in ("parallelism.default", "state.backend.rocksdb.memory.managed", "kubernetes.cluster-id",
                "yarn.application.name", "table.exec.mini-batch.enabled", "rest.port",
                "pipeline.name", "python.executable", "high-availability.storageDir"):
        assert catalog.lookup(key, V(1, 20)).kind == "option", key
    assert len(catalog.option_keys(V(1, 20))) > 800


@pytest.mark.parametrize("key", [
    "taskmanager.network.memory.buffers-per-channel",
    "taskmanager.network.memory.floating-buffers-per-gate",
    "taskmanager.network.memory.max-buffers-per-channel",
])
def test_buffer_keys_exist_until_1_20_deprecated_in_1_20_removed_in_2_0(catalog, key):
    # [FACTS] §1.2 / §1.6: NSEO @M:1.20 marks them @Deprecated "removed in 2.0"; NSEC @M:2.0p
    # hard-codes them and the key is gone (2.0 release notes).
    for version in ONE_X:
        status = catalog.lookup(key, version)
        assert status.kind == "option", (key, version)
        assert status.spec is not None and status.spec.type == "Integer"
        assert status.deprecated == (version == V(1, 20)), (key, version)
    for version in TWO_X:
        status = catalog.lookup(key, version)
        assert status.kind == "removed"
        assert status.removed_in == V(2, 0)
        assert status.spec is None
    spec = catalog.spec(key, V(1, 20))
    assert (spec.since, spec.deprecated_since, spec.removed_in) == (V(1, 13), V(1, 20), V(2, 0))
    assert spec.declared_in == NSEO


def test_buffer_key_defaults(catalog):
    # [FACTS] §1.6 default matrix: 2 / 8 / 10 in every 1.x release.
    for version in ONE_X:
        assert catalog.spec("taskmanager.network.memory.buffers-per-channel", version).default == "2"
        assert catalog.spec("taskmanager.network.memory.floating-buffers-per-gate", version).default == "8"
        assert catalog.spec("taskmanager.network.memory.max-buffers-per-channel", version).default == "10"


def test_max_overdraft_buffers_per_gate_since_1_16(catalog):
    # [FACTS] §1.2: FLINK-26762, NSEO @M:1.16, default 5; deprecated 1.20; hard-coded (20) in 2.0.
    key = "taskmanager.network.memory.max-overdraft-buffers-per-gate"
    for version in (V(1, 13), V(1, 14), V(1, 15)):
        status = catalog.lookup(key, version)
        assert status.kind == "not-yet"
        assert status.since == V(1, 16)
    for version in (V(1, 16), V(1, 17), V(1, 18), V(1, 19), V(1, 20)):
        assert catalog.spec(key, version).default == "5"
    assert catalog.lookup(key, V(1, 20)).deprecated
    assert catalog.lookup(key, V(2, 0)).kind == "removed"


def test_network_max_default_1g_until_1_16_then_unbounded(catalog):
    # [FACTS] §1.6: TMO @M:1.16 `1g` vs @M:1.17 Long.MAX_VALUE bytes (FLINK-30472).
    key = "taskmanager.memory.network.max"
    for version in (V(1, 13), V(1, 14), V(1, 15), V(1, 16)):
        assert catalog.spec(key, version).default == "1gb"
    for version in [V(1, 17), V(1, 18), V(1, 19), V(1, 20), *TWO_X]:
        spec = catalog.spec(key, version)
        assert spec.type == "MemorySize"
        assert spec.default == f"{LONG_MAX}b"
    # The old key stays a deprecated alias, also in 2.x ([FACTS] §1.2, I: TMO).
    status = catalog.lookup("taskmanager.network.memory.max", V(2, 0))
    assert status.kind == "deprecated-alias"
    assert status.canonical_key == key
    assert status.replacement == key


def test_network_fraction_and_min(catalog):
    # [FACTS] §1.6: 0.1 / 64m in every version. §1.2: the old taskmanager.network.memory.* keys are
    # still declared (deprecated) in NSEO 1.13-1.20 and only aliases of the new keys in 2.x (I: TMO).
    for version in SUPPORTED:
        assert catalog.spec("taskmanager.memory.network.fraction", version).default == "0.1"
        assert catalog.spec("taskmanager.memory.network.min", version).default == "64mb"
        status = catalog.lookup("taskmanager.network.memory.fraction", version)
        assert status.replacement == "taskmanager.memory.network.fraction"
        if version.major == 1:
            assert status.kind == "option" and status.deprecated
        else:
            assert status.kind == "deprecated-alias"
            assert status.canonical_key == "taskmanager.memory.network.fraction"


def test_buffer_timeout_split(catalog):
    # [FACTS] §1.6 places .enabled/.interval at 1.18 (branch cut M:1.18). FLINK-32023 was also
    # backported to release-1.16 (apache/flink PR #22673, merged 2023-06) and release-1.17, so the
    # 1.16.3 and 1.17.2 jars the catalog is built from already carry them.
    for version in (V(1, 13), V(1, 14), V(1, 15)):
        status = catalog.lookup("execution.buffer-timeout", version)
        assert status.kind == "option"
        assert status.spec.type == "Duration" and status.spec.default == "100 ms"
        assert catalog.lookup("execution.buffer-timeout.interval", version).kind == "not-yet"
    for version in [V(1, 16), V(1, 17), V(1, 18), V(1, 19), V(1, 20), *TWO_X]:
        interval = catalog.spec("execution.buffer-timeout.interval", version)
        enabled = catalog.spec("execution.buffer-timeout.enabled", version)
        assert (interval.type, interval.default) == ("Duration", "100 ms")
        assert (enabled.type, enabled.default) == ("Boolean", "true")
        assert "execution.buffer-timeout" in interval.deprecated_keys
        status = catalog.lookup("execution.buffer-timeout", version)
        assert status.kind == "deprecated-alias"
        assert status.replacement == "execution.buffer-timeout.interval"
        assert status.spec == interval
    assert catalog.lookup("execution.buffer-timeout.enabled", V(1, 18)).since == V(1, 16)


def test_sort_shuffle_defaults(catalog):
    # [FACTS] §1.6: min-parallelism MAX_INT (1.13, 1.14) -> 1 (1.15+), deprecated 1.20, fixed in 2.0;
    # min-buffers 64 -> 512 at 1.15.
    parallelism = "taskmanager.network.sort-shuffle.min-parallelism"
    buffers = "taskmanager.network.sort-shuffle.min-buffers"
    for version in (V(1, 13), V(1, 14)):
        assert catalog.spec(parallelism, version).default == str(2**31 - 1)
        assert catalog.spec(buffers, version).default == "64"
    for version in (V(1, 15), V(1, 16), V(1, 17), V(1, 18), V(1, 19), V(1, 20)):
        assert catalog.spec(parallelism, version).default == "1"
        assert catalog.spec(buffers, version).default == "512"
    assert catalog.lookup(parallelism, V(1, 20)).deprecated
    assert catalog.lookup(parallelism, V(2, 0)).kind == "removed"
    assert catalog.spec(buffers, V(2, 0)).default == "512"


def test_segment_sizes(catalog):
    # [FACTS] §1.6: segment-size 32kb everywhere; min-segment-size 1kb in 1.14, 256 bytes from 1.15;
    # starting-segment-size (FLINK-36556) only from 2.0, 1024 bytes.
    for version in SUPPORTED:
        assert catalog.spec("taskmanager.memory.segment-size", version).default == "32kb"
    assert catalog.lookup("taskmanager.memory.min-segment-size", V(1, 13)).kind == "not-yet"
    assert catalog.spec("taskmanager.memory.min-segment-size", V(1, 14)).default == "1kb"
    assert catalog.spec("taskmanager.memory.min-segment-size", V(1, 15)).default == "256b"
    assert catalog.lookup("taskmanager.memory.starting-segment-size", V(1, 20)).kind == "not-yet"
    assert catalog.spec("taskmanager.memory.starting-segment-size", V(2, 0)).default == "1kb"


def test_debloat_and_batch_shuffle_defaults(catalog):
    # [FACTS] §1.6: debloat period 500ms (1.14) -> 200ms; threshold 50 -> 25;
    # framework.off-heap.batch-shuffle.size 32m -> 64m at 1.15.
    assert catalog.lookup("taskmanager.network.memory.buffer-debloat.enabled", V(1, 13)).kind == "not-yet"
    assert catalog.spec("taskmanager.network.memory.buffer-debloat.period", V(1, 14)).default == "500 ms"
    assert catalog.spec("taskmanager.network.memory.buffer-debloat.period", V(1, 15)).default == "200 ms"
    assert catalog.spec("taskmanager.network.memory.buffer-debloat.threshold-percentages",
                        V(1, 14)).default == "50"
    assert catalog.spec("taskmanager.network.memory.buffer-debloat.threshold-percentages",
                        V(1, 15)).default == "25"
    batch_shuffle = "taskmanager.memory.framework.off-heap.batch-shuffle.size"
    assert catalog.spec(batch_shuffle, V(1, 14)).default == "32mb"
    assert catalog.spec(batch_shuffle, V(1, 15)).default == "64mb"


def test_number_of_buffers_and_compression(catalog):
    # [FACTS] §1.2: numberOfBuffers deprecated long before 1.13, removed in 2.0 (FLINK-33750);
    # blocking-shuffle.compression.enabled an option until 1.15 (default true from 1.15),
    # alias of batch-shuffle.compression.enabled 1.16-1.20, gone in 2.0.
    status = catalog.lookup("taskmanager.network.numberOfBuffers", V(1, 20))
    assert status.kind == "option" and status.deprecated and status.spec.default == "2048"
    assert catalog.lookup("taskmanager.network.numberOfBuffers", V(2, 0)).kind == "removed"
    old = "taskmanager.network.blocking-shuffle.compression.enabled"
    assert catalog.spec(old, V(1, 14)).default == "false"
    assert catalog.spec(old, V(1, 15)).default == "true"
    alias = catalog.lookup(old, V(1, 16))
    assert alias.kind == "deprecated-alias"
    assert alias.canonical_key == "taskmanager.network.batch-shuffle.compression.enabled"
    assert catalog.lookup(old, V(2, 0)).kind == "removed"
    # compression.codec became an enum accepting NONE in 1.20 ([FACTS] §1.6).
    codec = catalog.spec("taskmanager.network.compression.codec", V(1, 20))
    assert codec.type == "Enum" and "NONE" in codec.enum_values and codec.default == "LZ4"


def test_renamed_metric_scope_keys(catalog):
    # [FACTS] §4.1: metrics.scope.tm-job since 1.17 with alias metrics.scope.tm.job (FLINK-29372).
    assert catalog.lookup("metrics.scope.tm-job", V(1, 16)).kind == "not-yet"
    status = catalog.lookup("metrics.scope.tm.job", V(1, 17))
    assert status.kind == "deprecated-alias" and status.canonical_key == "metrics.scope.tm-job"
    assert catalog.lookup("metrics.scope.tm.job", V(1, 16)).kind == "option"


def test_invented_key_is_unknown_everywhere_with_a_suggestion(catalog):
    # `taskmanager.memory.network.size` never existed ([FACTS] §1.2 lists .fraction/.min/.max only).
    for version in SUPPORTED:
        status = catalog.lookup("taskmanager.memory.network.size", version)
        assert status.kind == "unknown"
        assert not status.is_known
        suggestions = catalog.suggest("taskmanager.memory.network.size", version)
        assert suggestions, version
        assert all(s in catalog.option_keys(version) for s in suggestions)
        assert any(s.startswith("taskmanager.memory.network.") for s in suggestions), suggestions


@pytest.mark.parametrize(("typo", "expected"), [
    ("taskmanager.numberOfTaskSlot", "taskmanager.numberOfTaskSlots"),
    ("taskmanger.memory.process.size", "taskmanager.memory.process.size"),
    ("parallelism.defualt", "parallelism.default"),
    ("taskmanager.network.memory.buffer-per-channel", "taskmanager.network.memory.buffers-per-channel"),
    ("jobmanagr.rpc.adress", "jobmanager.rpc.address"),
])
def test_did_you_mean(catalog, typo, expected):
    suggestions = catalog.suggest(typo, V(1, 20))
    assert suggestions[0] == expected
    assert len(suggestions) <= 3
    assert catalog.suggest(typo, V(1, 20), limit=1) == [expected]


def test_a_fallback_key_is_an_option_not_deprecated_and_without_replacement(catalog):
    # RestOptions.ADDRESS ("rest.address") declares .withFallbackKeys(JobManagerOptions.ADDRESS.key()),
    # and JobManagerOptions.ADDRESS ("jobmanager.rpc.address") is not @Deprecated in any release
    # (flink-core/src/main/java/org/apache/flink/configuration/{RestOptions,JobManagerOptions}.java,
    # release-1.13 to release-2.1). A fallback is read when rest.address is unset; it renames nothing.
    for version in SUPPORTED:
        status = catalog.lookup("jobmanager.rpc.address", version)
        assert status.kind == "option", version
        assert not status.deprecated
        assert status.replacement is None
        assert status.deprecated_since is None
        assert "jobmanager.rpc.address" in catalog.spec("rest.address", version).fallback_keys
    # A real deprecated key keeps its replacement (checked in test_network_fraction_and_min too).
    assert catalog.lookup("taskmanager.network.memory.fraction", V(1, 20)).replacement == \
        "taskmanager.memory.network.fraction"


def test_suggestions_are_version_aware(catalog):
    # The 2.0 suggestions never include a key 2.0 no longer has.
    for suggestion in catalog.suggest("taskmanager.network.memory.buffer-per-channel", V(2, 0)):
        assert catalog.lookup(suggestion, V(2, 0)).kind in ("option", "deprecated-alias", "fallback-alias")


def test_nothing_close_gives_no_suggestion(catalog):
    assert catalog.suggest("zzz", V(1, 20)) == []


@pytest.mark.parametrize(("key", "version", "why"), [
    ("metrics.reporter.prom.foo-bar", V(1, 20), "metrics.reporter."),
    ("containerized.master.env.JAVA_HOME", V(1, 13), "JobManager"),
    ("containerized.taskmanager.env.LD_PRELOAD", V(2, 0), "TaskManager"),
    ("kubernetes.operator.savepoint.history.max.count", V(1, 20), "operator"),
    ("fs.s3a.connection.maximum", V(1, 18), "filesystem"),
    ("s3.access-key", V(2, 1), "S3"),
    ("kubernetes.jobmanager.annotations.prometheus.io/scrape", V(1, 20), "Map option"),
    ("pipeline.global-job-parameters.foo", V(1, 17), "Map option"),
])
def test_open_ended_families_are_known(catalog, key, version, why):
    status = catalog.lookup(key, version)
    assert status.kind == "family"
    assert status.is_known
    assert why in status.family_reason


def test_templated_options_resolve_to_their_spec(catalog):
    # MetricOptions.REPORTER_INTERVAL: metrics.reporter.<name>.interval, Duration, default 10 s.
    status = catalog.lookup("metrics.reporter.prom.interval", V(1, 20))
    assert status.kind == "option"
    assert status.spec.key == "metrics.reporter.<name>.interval"
    assert (status.spec.type, status.spec.default) == ("Duration", "10 s")
    # metrics.reporter.<name>.class was deprecated for factory.class (1.16) and removed in 2.0.
    assert catalog.lookup("metrics.reporter.jmx.class", V(1, 16)).deprecated
    assert catalog.lookup("metrics.reporter.jmx.class", V(2, 0)).kind == "removed"


def test_renamed_keys_are_deprecated_aliases_in_2_x(catalog):
    # [FACTS] §3: FLINK-29372 (1.17) renamed leaf-and-prefix keys; the old ones stay aliases.
    for old, new in (("state.backend", "state.backend.type"),
                     ("high-availability", "high-availability.type"),
                     ("restart-strategy", "restart-strategy.type"),
                     ("env.java.opts", "env.java.opts.all")):
        assert catalog.lookup(old, V(1, 16)).kind == "option"
        status = catalog.lookup(old, V(1, 17))
        assert status.kind == "deprecated-alias", old
        assert status.replacement == new


def test_table_ddl_options_are_not_config_keys(catalog):
    # `connector` / `format` belong in a table's WITH clause (FactoryUtil), not in flink-conf.yaml.
    assert catalog.lookup("connector", V(1, 20)).kind == "unknown"
    assert catalog.lookup("format", V(1, 20)).kind == "unknown"


def test_versions_outside_the_catalog_use_the_nearest(catalog):
    assert catalog.resolve_version(V(9, 9)) == catalog.versions[-1]
    assert catalog.lookup("taskmanager.memory.segment-size", V(9, 9)).kind == "option"


def test_statuses_are_frozen_values(catalog):
    status = catalog.lookup("parallelism.default", V(1, 20))
    assert isinstance(status, KeyStatus) and status.kind in KINDS
    with pytest.raises(AttributeError):
        status.kind = "unknown"  # type: ignore[misc]
    assert catalog.spec("parallelism.default", V(1, 20)).default == "1"


def test_data_file_records_generation_source():
    data = json.loads(resources.files("flinktune").joinpath("data", "flink_options.json").read_text())
    assert "apache-flink-libraries" in data["source"]
    assert set(data["releases"]) == {str(v) for v in SUPPORTED}
    families = json.loads(resources.files("flinktune").joinpath("data", "option_families.json").read_text())
    for family in families["families"]:
        assert family["pattern"] and family["reason"], family


def test_malformed_data_raises_catalog_error(monkeypatch):
    import flinktune.config.catalog as module

    monkeypatch.setattr(module, "_read_json", lambda name: {"versions": ["1.20"]})
    module.load_catalog.cache_clear()
    try:
        with pytest.raises(CatalogError):
            module.load_catalog()
    finally:
        monkeypatch.undo()
        module.load_catalog.cache_clear()


def test_request_timeout_rename_and_netty_keys(catalog):
    # [FACTS] §1.2: exclusive-buffers-request-timeout-ms (Long ms, 30000) deprecated in 1.20 and an
    # alias of taskmanager.network.memory.buffers-request-timeout (Duration) in 2.x; the netty
    # tuning keys and max-num-tcp-connections (since 1.15) are deprecated in 1.20, gone in 2.0.
    old = "taskmanager.network.memory.exclusive-buffers-request-timeout-ms"
    assert catalog.spec(old, V(1, 19)).default == "30000"
    assert catalog.lookup(old, V(1, 20)).deprecated
    status = catalog.lookup(old, V(2, 0))
    assert status.kind == "deprecated-alias"
    assert status.canonical_key == "taskmanager.network.memory.buffers-request-timeout"
    assert (status.spec.type, status.spec.default) == ("Duration", "30 s")
    for key in ("taskmanager.network.netty.num-arenas", "taskmanager.network.netty.server.numThreads",
                "taskmanager.network.netty.client.numThreads", "taskmanager.network.netty.transport",
                "taskmanager.network.max-num-tcp-connections", "taskmanager.network.blocking-shuffle.type"):
        assert catalog.lookup(key, V(1, 20)).deprecated, key
        assert catalog.lookup(key, V(2, 0)).kind == "removed", key
    assert catalog.lookup("taskmanager.network.max-num-tcp-connections", V(1, 14)).kind == "not-yet"
    # Pre-1.10 spellings stay deprecated aliases while their option lives.
    alias = catalog.lookup("taskmanager.net.num-arenas", V(1, 17))
    assert alias.kind == "deprecated-alias" and alias.canonical_key == "taskmanager.network.netty.num-arenas"
    # read-buffer.required-per-gate.max: 1.17+, no default ([FACTS] §1.2, FLINK-30473).
    read_max = "taskmanager.network.memory.read-buffer.required-per-gate.max"
    assert catalog.lookup(read_max, V(1, 16)).kind == "not-yet"
    assert catalog.spec(read_max, V(2, 0)).default is None


def test_keys_per_version_and_map_families_equal_a_full_decode():
    # The per-version key lists and the Map / open-ended families are built reading only each entry's
    # "present" runs or its text, not every entry whole (issue 26): a plain json.loads of the whole
    # file must give the same. A fresh catalog, so that no entry is decoded yet.
    import re

    fresh = load_catalog.__wrapped__()
    data = json.loads(resources.files("flinktune").joinpath("data", "flink_options.json").read_text("utf-8"))
    index = {v: i for i, v in enumerate(data["versions"])}
    placeholder = re.compile(r"<[^<>.]+>")

    def present(runs, i):
        return any(index[a] <= i <= index[b] for a, b, *_ in runs)

    for i, version in enumerate(fresh.versions):
        options = tuple(k for k, e in data["options"].items() if present(e["present"], i))
        assert fresh.option_keys(version) == options
        aliases = tuple(k for k, runs in data["aliases"].items() if present(runs, i))
        assert fresh.alias_keys(version) == aliases
        expected = []
        for key in options:
            open_ended = placeholder.search(key.rsplit(".", 1)[-1]) is not None
            spec = fresh.spec(key, version)
            if spec is not None and spec.type == "Map":
                expected.append(key + ".*")
            elif spec is not None and open_ended:
                expected.append(key)
        assert [f.pattern for f in fresh._map_and_open_templates(version)] == expected
