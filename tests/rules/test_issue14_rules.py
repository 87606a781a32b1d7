"""Issue 14 rules on whole files (what the examples in the rule files cannot express): manifests whose
other parts matter, and the did-you-mean and family fixes, through the lint runner."""

from __future__ import annotations

from pathlib import Path

from flinktune.lint.model import LintOptions
from flinktune.lint.runner import lint_paths
from flinktune.versions import FlinkVersion

DEPLOYMENT = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: demo
spec:
  flinkVersion: v1_20
  flinkConfiguration:
    execution.checkpointing.dir: file:///flink-data/checkpoints
    execution.checkpointing.savepoint-dir: file:///opt/flink/savepoints
  podTemplate:
    spec:
      containers:
        - name: flink-main-container
          volumeMounts:
            - mountPath: /flink-data
              name: flink-volume
      volumes:
        - name: flink-volume
          persistentVolumeClaim:
            claimName: flink-data
  jobManager:
    resource: {memory: "2048m", cpu: 1}
  taskManager:
    resource: {memory: "2048m", cpu: 1}
"""


def _codes(path: Path, version: FlinkVersion | None = None) -> list[tuple[str, str | None]]:
    result = lint_paths([str(path)], LintOptions(flink_version=version))
    assert not result.problems, result.problems
    return [(f.code, f.location.key) for f in result.findings]


def test_a_checkpoint_dir_on_a_mounted_volume_is_not_local_to_the_container(tmp_path: Path) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT, encoding="utf-8")
    found = _codes(path)
    # /flink-data is a volume the manifest mounts; /opt/flink/savepoints is the container's own disk.
    assert ("FTC062", "execution.checkpointing.savepoint-dir") in found
    assert ("FTC062", "execution.checkpointing.dir") not in found


def test_did_you_mean_keeps_the_kind_of_value(tmp_path: Path) -> None:
    # rest.bind-host is an address: rest.bind-port (a port) must never be offered.
    path = tmp_path / "flink-conf.yaml"
    path.write_text("rest.bind-host: 0.0.0.0\n", encoding="utf-8")
    result = lint_paths([str(path)], LintOptions(flink_version=FlinkVersion(1, 20)))
    messages = [f.message for f in result.findings]
    assert any("did you mean 'rest.bind-address'" in m for m in messages), messages
    assert not any("rest.bind-port" in m for m in messages), messages


def test_connector_and_catalog_store_options_are_known(tmp_path: Path) -> None:
    path = tmp_path / "flink-conf.yaml"
    path.write_text("table.exec.hive.fallback-mapred-reader: true\ntable.catalog-store.kind: file\n"
                    "table.catalog-store.file.path: s3://bucket/catalogs\n", encoding="utf-8")
    assert [c for c, _ in _codes(path, FlinkVersion(1, 20)) if c in ("FTC001", "FTC002")] == []


def test_quoted_jvm_options_depend_on_the_version(tmp_path: Path) -> None:
    # bin/config.sh strips the double quotes up to 1.18; 1.19+ prepends env.java.default-opts first.
    path = tmp_path / "flink-conf.yaml"
    path.write_text('env.java.opts.taskmanager: "-XX:+UseG1GC"\n', encoding="utf-8")
    assert "FTC024" not in [c for c, _ in _codes(path, FlinkVersion(1, 18))]
    assert "FTC024" in [c for c, _ in _codes(path, FlinkVersion(1, 20))]


def test_a_missing_memory_size_is_reported_only_for_a_complete_file(tmp_path: Path) -> None:
    from flinktune.lint.project import load_project_config

    # The Docker entrypoint wrote blob.server.port into this live file: it is all Flink reads.
    path = tmp_path / "flink-conf.yaml"
    path.write_text("taskmanager.numberOfTaskSlots: 2\nblob.server.port: 6124\n", encoding="utf-8")
    assert {"FTC050", "FTC051"} <= {c for c, _ in _codes(path)}
    # A short file that shows nothing may be merged into the image's defaults.
    short = tmp_path / "short" / "flink-conf.yaml"
    short.parent.mkdir()
    short.write_text("taskmanager.numberOfTaskSlots: 2\n", encoding="utf-8")
    assert not {"FTC050", "FTC051"} & {c for c, _ in _codes(short)}
    # The project says what the files are.
    project = tmp_path / ".flinktune.yaml"
    for setting, expected in (("overlay", set()), ("complete", {"FTC050", "FTC051"})):
        project.write_text(f"completeness: {setting}\n", encoding="utf-8")
        loaded = load_project_config(project)
        assert loaded.completeness == setting
        result = lint_paths([str(short)], LintOptions(completeness=loaded.completeness))
        assert {f.code for f in result.findings} & {"FTC050", "FTC051"} == expected
        if expected:
            assert "set completeness: overlay in .flinktune.yaml" in result.findings[0].message
