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
