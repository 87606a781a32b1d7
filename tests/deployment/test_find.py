"""Finding the deployment files beside the configurations a lint run was given, and what an image tag or a
jar name says about the Flink version (tags: apache/flink-docker release.metadata; jar names: Maven
artifacts of Flink and the externalized connectors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinktune.deployment.find import beside
from flinktune.deployment.images import default_jdk, jar_flink_version, parse_image, plugin_only_jar


def _touch(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_compose_above_and_manifests_in_a_sibling_folder(tmp_path: Path) -> None:
    config = _touch(tmp_path / "flink" / "conf" / "flink-conf.yaml", "parallelism.default: 1\n")
    compose = _touch(tmp_path / "docker-compose.yml", "services:\n  jm:\n    image: flink\n")
    manifest = _touch(tmp_path / "kubernetes" / "jm.yaml", "apiVersion: apps/v1\nkind: Deployment\n")
    other = _touch(tmp_path / "flink" / "conf" / "log-settings.yaml", "apiVersion: v1\nkind: ConfigMap\n")
    found = beside([config], [])
    assert found[compose] == "compose" and found[manifest] == "kubernetes"
    # the folder with the compose file is a project root, searched whole (bounded): that also reaches
    # manifests beside the configuration
    assert found[other] == "kubernetes"


def test_nothing_beside_a_lone_file(tmp_path: Path) -> None:
    config = _touch(tmp_path / "a" / "b" / "c" / "d" / "e" / "flink-conf.yaml", "parallelism.default: 1\n")
    _touch(tmp_path / "a" / "notes.yaml", "services:\n  x: 1\n")      # not compose-named, too far up
    assert beside([config], []) == {}


def test_named_manifest_finds_workloads_beside_it(tmp_path: Path) -> None:
    configmap = _touch(tmp_path / "k8s" / "cm.yaml", "apiVersion: v1\nkind: ConfigMap\n")
    workload = _touch(tmp_path / "k8s" / "tm.yaml", "apiVersion: apps/v1\nkind: Deployment\n")
    assert beside([configmap], [], (configmap,))[workload] == "kubernetes"
    assert workload not in beside([configmap], [])


@pytest.mark.parametrize(("reference", "official", "version", "patch", "jdk", "moving"), [
    ("flink:1.18.1-scala_2.12-java11", True, "1.18", "1.18.1", 11, False),
    ("apache/flink:1.20", True, "1.20", None, 11, False),
    ("flink:2.0-java21", True, "2.0", None, 21, False),
    ("flink:1.14", True, "1.14", None, 8, False),
    ("mirror.gcr.io/library/flink:1.17", True, "1.17", None, 11, False),
    ("flink", True, None, None, None, True),
    ("flink:latest", True, None, None, None, True),
    ("flink:scala_2.12-java17", True, None, None, 17, True),
    ("my-org/flink-job:1.18", False, None, None, None, False),
    ("flink:${FLINK_VERSION}", False, None, None, None, False),
])
def test_image_tags(reference: str, official: bool, version: str | None, patch: str | None, jdk: int | None,
                    moving: bool) -> None:
    ref = parse_image(reference)
    assert ref is not None
    expected = (official, version, patch, jdk, moving)
    assert (ref.official, ref.version, ref.patch, ref.jdk, ref.moving) == expected


def test_default_jdk_by_release() -> None:
    assert [default_jdk(v) for v in ("1.13", "1.15", "1.20", "2.1")] == [8, 11, 11, 17]


@pytest.mark.parametrize(("name", "version"), [
    ("flink-s3-fs-hadoop-1.17.1.jar", "1.17"),
    ("flink-sql-connector-kafka-3.3.0-1.20.jar", "1.20"),
    ("flink-connector-jdbc-3.1.0-1.17.jar", "1.17"),
    ("iceberg-flink-runtime-1.18-1.5.0.jar", "1.18"),
    ("flink-sql-connector-mysql-cdc-2.4.1.jar", None),
    ("flink-shaded-hadoop-2-uber-2.8.3-10.0.jar", None),
    ("flink-metrics-prometheus-2.0.0.jar", "2.0"),
    ("kafka-clients-2.8.0.jar", None),
])
def test_jar_versions(name: str, version: str | None) -> None:
    assert jar_flink_version(name) == version


def test_plugin_only_filesystems() -> None:
    assert plugin_only_jar("flink-s3-fs-presto-1.18.0.jar")
    assert not plugin_only_jar("flink-connector-files-1.18.0.jar")
