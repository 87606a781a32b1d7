"""Which ConfigMap a pod mounts, and which processes form one cluster, when a folder holds manifests of
several clusters.

Kubernetes facts: a pod's ``configMap`` volume names a ConfigMap of the pod's own namespace (core/v1
ConfigMapVolumeSource has no namespace field); a manifest whose metadata names no namespace lands in
the one ``kubectl apply`` targets. Each FlinkDeployment is a cluster of its own (the operator creates a
JobManager deployment and TaskManager pods per resource).
"""

from __future__ import annotations

from pathlib import Path

from flinktune.lint import LintOptions, lint_paths

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: flink-config
  namespace: flink
data:
  flink-conf.yaml: |
    jobmanager.rpc.address: flink-jobmanager
    state.checkpoints.dir: s3://bucket/checkpoints
"""


def _workload(role: str, mounted: bool = True) -> str:
    """A Deployment of namespace flink running the official 1.18 image as ``role``, with the ConfigMap
    flink-config as its conf folder when ``mounted``."""
    mount = ("          volumeMounts:\n            - {name: conf, mountPath: /opt/flink/conf}\n"
             "      volumes:\n        - name: conf\n          configMap: {name: flink-config}\n")
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: flink-{role}\n  namespace: flink\n"
            f"spec:\n  template:\n    spec:\n      containers:\n        - name: {role}\n"
            f"          image: flink:1.18-scala_2.12-java11\n          args: [\"{role}\"]\n"
            + (mount if mounted else ""))


DEPLOYMENT = "---\n".join([CONFIGMAP, _workload("jobmanager"), _workload("taskmanager")])

# Another project's ConfigMap of the same name, with no namespace: a folder of collected manifests.
OTHER = """apiVersion: v1
kind: ConfigMap
metadata:
  name: flink-config
data:
  flink-conf.yaml: |
    jobmanager.rpc.address: flink-jobmanager
    state.savepoints.dir: file:///opt/flink/savepoints
"""

OPERATOR = """apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: other-job
  namespace: flink
spec:
  image: flink:1.18
  flinkVersion: v1_18
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
  jobManager: {resource: {memory: 2048m, cpu: 1}}
  taskManager: {resource: {memory: 2048m, cpu: 1}}
"""


def test_a_configmap_declared_in_the_pods_namespace_is_the_one_it_mounts(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    other = tmp_path / "other-configmap.yaml"
    other.write_text(OTHER, encoding="utf-8")
    result = lint_paths([str(other)], LintOptions())
    [version] = result.versions
    # Not read as the cluster's configuration: neither its image's version nor its volumes apply.
    assert version.source == "default", version
    assert not any(str(r).startswith(str(tmp_path / "cluster.yaml")) for f in result.findings
                   for r in f.related), [f.message for f in result.findings]
    # The cluster's own ConfigMap is.
    own = lint_paths([str(tmp_path / "cluster.yaml")], LintOptions())
    assert {(str(v.version), v.source) for v in own.versions} == {("1.18", "file")}


def test_a_configmap_that_names_no_namespace_is_still_mounted_when_it_is_the_only_one(tmp_path: Path) -> None:
    # Without the namespaced twin, the unnamespaced ConfigMap is the one `kubectl apply -n flink` creates.
    workloads = "---\n".join([_workload("jobmanager"), _workload("taskmanager")])
    (tmp_path / "cluster.yaml").write_text(workloads, encoding="utf-8")
    configmap = tmp_path / "configmap.yaml"
    configmap.write_text(OTHER, encoding="utf-8")
    result = lint_paths([str(configmap)], LintOptions())
    [version] = result.versions
    assert (str(version.version), version.source) == ("1.18", "file"), version


def test_a_flinkdeployment_beside_a_standalone_cluster_is_not_part_of_it(tmp_path: Path) -> None:
    # FTC117 (a checkpoint directory on some processes only) compares the processes of one cluster: the
    # FlinkDeployment's TaskManagers, which set no directory, are another cluster's.
    (tmp_path / "cluster.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    (tmp_path / "operator.yaml").write_text(OPERATOR, encoding="utf-8")
    result = lint_paths([str(tmp_path)], LintOptions())
    assert not [f for f in result.findings if f.code == "FTC117"], [f.message for f in result.findings]
    # The same JobManager with a TaskManager of its own that lacks the directory is reported.
    lacking = "---\n".join([CONFIGMAP, _workload("jobmanager"), _workload("taskmanager", mounted=False)])
    (tmp_path / "cluster.yaml").write_text(lacking, encoding="utf-8")
    result = lint_paths([str(tmp_path)], LintOptions())
    [finding] = [f for f in result.findings if f.code == "FTC117"]
    assert "flink-taskmanager" in finding.message and "other-job" not in finding.message
