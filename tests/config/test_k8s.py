"""Flink configuration inside Kubernetes manifests.

FlinkDeployment / FlinkSessionJob: spec.flinkConfiguration and spec.flinkVersion are the Flink
Kubernetes operator's CRD fields (apache/flink-kubernetes-operator, examples/ and the CRD's
FlinkDeploymentSpec); ConfigMaps embedding flink-conf.yaml follow the Flink docs' standalone
Kubernetes setup (D:1.20:deployment/resource-providers/standalone/kubernetes).
"""

from __future__ import annotations

import pytest

from flinktune.config.k8s import read_manifest_text
from flinktune.config.types import ConfigFormat
from flinktune.errors import ConfigError

MULTI = """\
# leading comment
---
apiVersion: v1
kind: Namespace
metadata:
  name: flink
---
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: basic
spec:
  flinkVersion: v1_20
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
    taskmanager.network.memory.buffers-per-channel: 4
    state:
      backend.type: rocksdb
---
apiVersion: flink.apache.org/v1beta1
kind: FlinkSessionJob
metadata:
  name: job
spec:
  deploymentName: basic
  flinkConfiguration:
    parallelism.default: "8"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: flink-config
data:
  flink-conf.yaml: |+
    jobmanager.rpc.address: flink-jobmanager
    # comment
    taskmanager.numberOfTaskSlots: 2
    taskmanager.numberOfTaskSlots: 3
  config.yaml: |
    taskmanager:
      memory:
        process.size: 2g
  log4j-console.properties: |
    rootLogger.level = INFO
"""


def test_multi_document_manifest() -> None:
    docs = read_manifest_text(MULTI, "all.yaml")
    assert [(d.format, d.name) for d in docs] == [
        (ConfigFormat.DEPLOYMENT, "basic"), (ConfigFormat.DEPLOYMENT, "job"),
        (ConfigFormat.CONFIGMAP, "flink-config"), (ConfigFormat.CONFIGMAP, "flink-config")]
    deployment, session_job = docs[0], docs[1]
    assert deployment.version_hint == "v1_20" and session_job.version_hint is None
    assert [(e.key, e.value, e.line) for e in deployment.entries] == [
        ("taskmanager.numberOfTaskSlots", "2", 15),
        ("taskmanager.network.memory.buffers-per-channel", 4, 16),
        ("state.backend.type", "rocksdb", 18)]
    assert session_job.values() == {"parallelism.default": "8"}
    assert session_job.get("parallelism.default").line == 27


def test_configmap_embedded_files_map_lines_to_the_manifest() -> None:
    docs = read_manifest_text(MULTI, "all.yaml")
    flat_cm, yaml_cm = docs[2], docs[3]
    assert flat_cm.embedded is ConfigFormat.FLAT and yaml_cm.embedded is ConfigFormat.YAML
    lines = MULTI.splitlines()
    for doc in (flat_cm, yaml_cm):
        for entry in doc.entries:
            # The manifest line holds the entry's last key segment.
            assert entry.key.rsplit(".", 1)[-1] in lines[entry.line - 1] or \
                entry.key.split(".")[0] in lines[entry.line - 1]
    assert flat_cm.get("taskmanager.numberOfTaskSlots").value == "3"
    assert flat_cm.get("taskmanager.numberOfTaskSlots").line == 38
    assert flat_cm.get("jobmanager.rpc.address").line == 35
    (dup,) = flat_cm.issues
    assert (dup.kind, dup.line) == ("duplicate-key", 38) and "line 37" in dup.message
    assert yaml_cm.get("taskmanager.memory.process.size").line == 42


def test_embedded_yaml_error_points_into_the_manifest() -> None:
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  config.yaml: |\n"
            "    a: 1\n    b: [\n")
    with pytest.raises(ConfigError) as err:
        read_manifest_text(text, "cm.yaml")
    assert err.value.line is not None and err.value.line >= 8


def test_folded_embedded_text_points_at_the_data_key() -> None:
    text = 'apiVersion: v1\nkind: ConfigMap\ndata:\n  flink-conf.yaml: "a: 1\\nb: 2\\n"\n'
    (doc,) = read_manifest_text(text, "cm.yaml")
    assert doc.values() == {"a": "1", "b": "2"}
    assert {e.line for e in doc.entries} == {4}


def test_deployment_without_configuration_and_other_kinds() -> None:
    text = ("apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata:\n  name: d\n"
            "spec:\n  image: x\n")
    (doc,) = read_manifest_text(text, "d.yaml")
    assert doc.entries == () and doc.name == "d"
    assert read_manifest_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n", "s.yaml") == []


def test_flink_configuration_not_a_mapping_is_an_issue() -> None:
    text = "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nspec:\n  flinkConfiguration: [a]\n"
    (doc,) = read_manifest_text(text, "d.yaml")
    assert [i.kind for i in doc.issues] == ["malformed-manifest"]


# The official Flink image names the version and the JDK (hub.docker.com/_/flink tags:
# X.Y[.Z][-scala_2.12][-javaNN]); a ConfigMap beside a Deployment running it is read at that version.
IMAGE_MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: flink-config
data:
  flink-conf.yaml: |
    state.backend: filesystem
    env.java.opts.taskmanager: -XX:+UseConcMarkSweepGC
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: flink-taskmanager
spec:
  template:
    spec:
      initContainers:
        - name: wait
          image: busybox:1.36
      containers:
        - name: taskmanager
          image: {image}
"""


@pytest.mark.parametrize(("image", "version", "jdk"), [
    ("flink:1.18-scala_2.12-java11", "1.18", 11),
    ("flink:1.17.2", "1.17", None),
    ("docker.io/apache/flink:1.19.1-scala_2.12-java17", "1.19", 17),
    ("registry.example.com:5000/mirror/flink:2.0-java21", "2.0", 21),
    # Not the official image: a job image, the operator, a tag that is not a version.
    ("my-org/flink-job:1.18", None, None),
    ("ghcr.io/apache/flink-kubernetes-operator:1.9.0", None, None),
    ("flink:latest", None, None),
])
def test_the_official_image_names_version_and_jdk(image: str, version: str | None, jdk: int | None) -> None:
    (doc,) = read_manifest_text(IMAGE_MANIFEST.format(image=image), "k8s.yaml")
    assert doc.version_hint == version and doc.jdk_hint == jdk
    assert doc.version_hint_source == (f"image {image}" if version else None)


def test_images_that_disagree_name_no_version() -> None:
    text = IMAGE_MANIFEST.format(image="flink:1.18-java11") + IMAGE_MANIFEST.split("---\n")[1].format(
        image="flink:1.17-java17").join(["---\n", ""])
    (doc,) = read_manifest_text(text, "k8s.yaml")
    assert doc.version_hint is None and doc.jdk_hint is None


def test_spec_flink_version_wins_over_the_image() -> None:
    text = ("apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata:\n  name: job\nspec:\n"
            "  image: flink:1.18-java17\n  flinkVersion: v1_19\n  flinkConfiguration:\n"
            "    taskmanager.numberOfTaskSlots: \"2\"\n")
    (doc,) = read_manifest_text(text, "deploy.yaml")
    assert doc.version_hint == "v1_19" and doc.version_hint_source is None and doc.jdk_hint == 17


def test_lint_reads_the_manifest_at_the_image_version_and_jdk(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from flinktune.lint import LintOptions, lint_paths

    path = tmp_path / "k8s.yaml"
    path.write_text(IMAGE_MANIFEST.format(image="flink:1.13-scala_2.12-java8") + "", encoding="utf-8")
    result = lint_paths([str(path)], LintOptions())
    assert [(str(v.version), v.source, v.detail) for v in result.versions] == [
        ("1.13", "file", "image flink:1.13-scala_2.12-java8")]
    # CMS exists in JDK 8: not a removed flag there; state.backend is not deprecated in 1.13.
    assert {f.code for f in result.findings}.isdisjoint({"FTC072", "FTC003"})
    path.write_text(IMAGE_MANIFEST.format(image="flink:1.18-scala_2.12-java17"), encoding="utf-8")
    result = lint_paths([str(path)], LintOptions())
    codes = {f.code for f in result.findings}
    assert "FTC072" in codes and "FTC003" in codes
