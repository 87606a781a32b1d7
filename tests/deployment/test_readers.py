"""The deployment readers: one module per format, found through readers.READERS, each value with the file
and line it came from. Compose semantics: docs.docker.com/reference/compose-file/services; Kubernetes:
a ConfigMap volume is read-only, a PVC is shared when ReadWriteMany; FlinkDeployment: the operator's
FlinkConfigBuilder (memory limit = spec.<role>.resource.memory)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from flinktune.deployment.readers import READERS, read_deployment, recognise


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_reader_is_a_module_with_read() -> None:
    for reader in READERS:
        assert callable(importlib.import_module(reader.module).read), reader.name


@pytest.mark.parametrize(("name", "head", "kind"), [
    ("docker-compose.yml", "services:\n  jm:\n", "compose"),
    ("compose.prod.yaml", "services:\n", "compose"),
    ("Dockerfile", "", "dockerfile"),
    ("taskmanager.dockerfile", "", "dockerfile"),
    ("values.yaml", "flink:\n", "helm"),
    ("jm.yaml", "apiVersion: apps/v1\nkind: Deployment\n", "kubernetes"),
    ("flink-conf.yaml", "taskmanager.numberOfTaskSlots: 2\n", None),
    ("config.yaml", "services:\n  x: 1\napiVersion: v1\nkind: ConfigMap\n", "kubernetes"),
])
def test_recognise(name: str, head: str, kind: str | None) -> None:
    assert recognise(f"/p/{name}", head) == kind


COMPOSE = """\
services:
  jobmanager:
    image: flink:1.18.1-scala_2.12-java11
    command: jobmanager
    mem_limit: 1g
    environment:
      - |
        FLINK_PROPERTIES=
        jobmanager.rpc.address: jobmanager
        state.checkpoints.dir: file:///checkpoints
    volumes:
      - ./conf/flink-conf.yaml:/opt/flink/conf/flink-conf.yaml
      - checkpoints:/checkpoints
  taskmanager:
    image: flink:1.18.1-scala_2.12-java11
    command: taskmanager
    deploy:
      replicas: 2
      resources:
        limits:
          memory: 2048M
    volumes:
      - checkpoints:/checkpoints:ro
  kafka:
    image: bitnami/kafka
volumes:
  checkpoints:
"""


def test_compose_processes(tmp_path: Path) -> None:
    compose = _write(tmp_path, "docker-compose.yml", COMPOSE)
    _write(tmp_path, "conf/flink-conf.yaml", "parallelism.default: 2\n")
    deployment = read_deployment([(compose, "compose")], str(tmp_path))
    by_name = {p.name: p for p in deployment.processes}
    assert set(by_name) == {"jobmanager", "taskmanager"}    # kafka is not a Flink process
    jm, tm = by_name["jobmanager"], by_name["taskmanager"]
    assert (jm.role, tm.role) == ("jobmanager", "taskmanager")
    assert (jm.flink_version, jm.flink_patch, jm.jdk, jm.official) == ("1.18", "1.18.1", 11, True)
    assert jm.memory_limit_bytes == 1024 ** 3 and jm.memory_limit_where is not None
    assert jm.memory_limit_where.line == 5
    assert tm.memory_limit_bytes == 2048 * 1024 ** 2 and tm.replicas == 2
    [source] = jm.config
    assert (source.how, source.key, source.writable) == ("bind-file", "flink-conf.yaml", True)
    assert source.host_path == str(tmp_path / "conf" / "flink-conf.yaml")
    shared = {m.path: m for m in jm.mounts}["/checkpoints"]
    other = {m.path: m for m in tm.mounts}["/checkpoints"]
    assert shared.kind == "volume" and shared.shared_key == other.shared_key and other.read_only
    assert "jobmanager" in jm.hostnames
    # FLINK_PROPERTIES is a configuration document whose lines point into the compose file
    [overlay] = deployment.documents
    assert overlay.origin == "FLINK_PROPERTIES"
    assert [(e.key, e.line) for e in overlay.entries] == [("jobmanager.rpc.address", 9),
                                                          ("state.checkpoints.dir", 10)]


def test_compose_interpolation_and_build(tmp_path: Path) -> None:
    _write(tmp_path, "docker/Dockerfile", "ARG V=1.17\nFROM flink:${V}\n"
           "COPY flink-conf.yaml /opt/flink/conf/\n"
           "RUN wget -P /opt/flink/lib https://x/flink-s3-fs-hadoop-1.17.1.jar\n")
    compose = _write(tmp_path, "compose.yaml", "services:\n  tm:\n    build: ./docker\n"
                     "    image: ${IMAGE:-my/job}\n    command: taskmanager\n")
    deployment = read_deployment([(compose, "compose")], str(tmp_path))
    [tm] = deployment.processes
    assert tm.image == "my/job" and tm.flink_version == "1.17" and tm.image_official
    assert [(j.name, j.folder) for j in tm.jars] == [("flink-s3-fs-hadoop-1.17.1.jar", "lib")]
    [source] = tm.config
    assert source.how == "baked" and source.host_path == str(tmp_path / "docker" / "flink-conf.yaml")


MANIFESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: flink-taskmanager
spec:
  replicas: 3
  template:
    metadata:
      labels: {app: flink, component: taskmanager}
    spec:
      containers:
      - name: taskmanager
        image: apache/flink:1.20
        args: ["taskmanager"]
        resources:
          limits:
            memory: 2Gi
        volumeMounts:
        - name: flink-config-volume
          mountPath: /opt/flink/conf
        - name: state
          mountPath: /state
      volumes:
      - name: flink-config-volume
        configMap:
          name: flink-config
          items:
          - key: config.yaml
            path: config.yaml
      - name: state
        persistentVolumeClaim:
          claimName: flink-state
---
apiVersion: v1
kind: Service
metadata:
  name: flink-jobmanager
spec:
  selector: {app: flink, component: jobmanager}
  ports:
  - port: 6123
"""


def test_kubernetes_workloads_services_and_claims(tmp_path: Path) -> None:
    manifest = _write(tmp_path, "k8s/taskmanager.yaml", MANIFESTS)
    # the claim is declared in another file of the run
    claim = _write(tmp_path, "k8s/pvc.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n"
                   "  name: flink-state\nspec:\n  accessModes: [ReadWriteMany]\n")
    deployment = read_deployment([(manifest, "kubernetes"), (claim, "kubernetes")], str(tmp_path))
    [tm] = deployment.processes
    assert (tm.role, tm.platform, tm.replicas, tm.flink_version, tm.jdk) == ("taskmanager", "kubernetes", 3,
                                                                               "1.20", 11)
    assert tm.memory_limit_bytes == 2 * 1024 ** 3
    [source] = tm.config
    assert (source.how, source.configmap, source.key, source.writable) == ("configmap", "flink-config",
                                                                           "config.yaml", False)
    state = {m.path: m for m in tm.mounts}["/state"]
    assert state.kind == "pvc" and state.access == "ReadWriteMany"
    [service] = deployment.services
    assert service.name == "flink-jobmanager" and service.ports == (6123,)


FLINK_DEPLOYMENT = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: basic
spec:
  image: flink:2.0
  flinkVersion: v2_0
  flinkConfiguration:
    taskmanager.numberOfTaskSlots: "2"
  jobManager:
    resource:
      memory: "2048m"
      cpu: 1
  taskManager:
    resource:
      memory: "4g"
      cpu: 1
"""


def test_flink_deployment_runs_operator_processes(tmp_path: Path) -> None:
    manifest = _write(tmp_path, "basic.yaml", FLINK_DEPLOYMENT)
    deployment = read_deployment([(manifest, "kubernetes")], str(tmp_path))
    by_role = {p.role: p for p in deployment.processes}
    assert set(by_role) == {"jobmanager", "taskmanager"}
    assert by_role["jobmanager"].platform == "operator"
    assert by_role["jobmanager"].memory_limit_bytes == 2048 * 1024 ** 2
    assert by_role["taskmanager"].memory_limit_bytes == 4 * 1024 ** 3
    assert by_role["taskmanager"].flink_version == "2.0"


def test_helm_template_rendered_with_chart_values(tmp_path: Path) -> None:
    _write(tmp_path, "chart/Chart.yaml", "name: flink\n")
    values = _write(tmp_path, "chart/values.yaml", "image:\n  tag: \"1.19\"\nmemory: 3Gi\n"
                    "flinkConfiguration:\n  taskmanager.numberOfTaskSlots: 4\n")
    template = _write(tmp_path, "chart/templates/tm.yaml", """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-tm
spec:
  template:
    spec:
      containers:
      - name: taskmanager
        image: "flink:{{ .Values.image.tag }}"
        args: [taskmanager]
        resources:
          limits:
            memory: {{ .Values.memory | default "1Gi" }}
""")
    deployment = read_deployment([(template, "helm"), (values, "helm")], str(tmp_path))
    [tm] = deployment.processes
    assert tm.flink_version == "1.19" and tm.memory_limit_bytes == 3 * 1024 ** 3
    assert tm.memory_limit_where is not None and tm.memory_limit_where.line == 14
    [document] = deployment.documents
    assert document.origin == "helm values"
    assert [(e.key, e.line) for e in document.entries] == [("taskmanager.numberOfTaskSlots", 5)]


def test_unreadable_file_is_skipped_not_raised(tmp_path: Path) -> None:
    broken = _write(tmp_path, "docker-compose.yml", "services: [\n")
    deployment = read_deployment([(broken, "compose")], str(tmp_path))
    # the parser stops at the end of the file, line 2, where the flow list is still open
    assert deployment.processes == ()
    assert [(path, line) for path, _why, line in deployment.skipped] == [(broken, 2)]


@pytest.mark.parametrize(("name", "text", "line"), [
    # compose: mem_limit is a byte value (docs.docker.com/reference/compose-file/extension, "byte value")
    ("docker-compose.yml", "services:\n  tm:\n    image: flink:1.20\n    command: taskmanager\n"
     "    mem_limit: lots\n", 5),
    # Kubernetes: limits are resource.Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go)
    ("tm.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: tm\nspec:\n  template:\n"
     "    spec:\n      containers:\n      - name: tm\n        image: flink:1.20\n"
     "        args: [taskmanager]\n"
     "        resources:\n          limits:\n            memory: two-gigs\n", 14),
])
def test_a_memory_limit_that_is_not_a_size_is_skipped_with_its_line(tmp_path: Path, name: str, text: str,
                                                                    line: int) -> None:
    path = _write(tmp_path, name, text)
    skipped = read_deployment([(path, recognise(path, text) or "")], str(tmp_path)).skipped
    assert [(file, found) for file, _why, found in skipped] == [(path, line)]
    assert "is not a memory size" in skipped[0][1]


@pytest.mark.parametrize(("text", "size"), [
    ("1Gi", 1024**3), ("2G", 2 * 10**9), ("1e9", 10**9), ("1Pi", 1024**5),
    ("${TM_MEMORY:-2g}", None), ("{{ .Values.m }}", None),
])
def test_memory_limits_read_as_the_platforms_do(text: str, size: int | None) -> None:
    from flinktune.deployment.common import memory_limit, quantity_bytes

    assert memory_limit(text, quantity_bytes, "f.yaml", 1, "limit") == size


def test_dockerfile_entrypoint_replaced(tmp_path: Path) -> None:
    dockerfile = _write(tmp_path, "Dockerfile", "FROM apache/flink:1.15-scala_2.12\n"
                        "COPY flink/flink-conf.yaml /opt/flink/conf/flink-conf.yaml\n"
                        'ENTRYPOINT ["/opt/flink/bin/jobmanager.sh", "start-foreground"]\n')
    manifest = _write(tmp_path, "kubernetes/jm.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n"
                      "  name: flink-jobmanager\nspec:\n  template:\n    spec:\n      containers:\n"
                      "      - name: jobmanager\n        image: gcr.io/me/flink-job:latest\n")
    deployment = read_deployment([(dockerfile, "dockerfile"), (manifest, "kubernetes")], str(tmp_path))
    [jm] = deployment.processes
    # the only Dockerfile FROM the official image above the manifest builds the image it runs
    assert jm.dockerfile_assumed and jm.flink_version == "1.15" and not jm.official
    assert jm.config[0].how == "baked"


def test_an_entrypoint_script_decides_the_role(tmp_path: Path) -> None:
    # Kubernetes appends args to the image's ENTRYPOINT; a Flink script there ignores them
    dockerfile = _write(tmp_path, "Dockerfile", "FROM flink:1.18\n"
                        'ENTRYPOINT ["/opt/flink/bin/jobmanager.sh", "start-foreground"]\n'
                        "RUN cp ./opt/flink-s3-fs-hadoop-1.18.1.jar ./plugins/s3/\n")
    manifest = _write(tmp_path, "tm.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                      "  name: flink-taskmanager\nspec:\n  template:\n    spec:\n      containers:\n"
                      "      - name: taskmanager\n        image: my/job:1\n        args: [taskmanager]\n")
    deployment = read_deployment([(dockerfile, "dockerfile"), (manifest, "kubernetes")], str(tmp_path))
    [process] = deployment.processes
    assert (process.role, process.intended_role) == ("jobmanager", "taskmanager")
    assert process.entrypoint_where is not None and process.entrypoint_where.line == 2
    # WORKDIR of the official image is /opt/flink: the jar comes from its opt/ folder
    [jar] = process.jars
    assert (jar.name, jar.folder, jar.source) == ("flink-s3-fs-hadoop-1.18.1.jar", "plugins/s3",
                                                  "/opt/flink/opt/flink-s3-fs-hadoop-1.18.1.jar")


def test_latest_is_judged_as_the_newest_release(tmp_path: Path) -> None:
    from flinktune.versions import SUPPORTED

    compose = _write(tmp_path, "docker-compose.yml",
                     "services:\n  jm:\n    image: flink\n    command: jobmanager\n")
    [jm] = read_deployment([(compose, "compose")], str(tmp_path)).processes
    assert jm.image_moving and jm.flink_version == f"{SUPPORTED[-1].major}.{SUPPORTED[-1].minor}"
    assert "the newest release" in jm.version_source


def test_helm_values_image_names_the_version_of_its_flink_configuration(tmp_path: Path) -> None:
    values = _write(tmp_path, "chart/values.yaml", "image:\n  repository: flink\n  tag: 1.9.3\n"
                    "flinkProperties:\n  taskmanager.numberOfTaskSlots: \"1\"\n")
    [document] = read_deployment([(values, "helm")], str(tmp_path)).documents
    assert document.version_hint == "1.13" and "older than 1.13" in (document.version_hint_source or "")
