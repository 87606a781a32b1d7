"""Which processes run a configuration and with what: the official image's entrypoint per release
(apache/flink-docker docker-entrypoint.sh: dev-1.18 rewrites with sed -i / mv, which fail on a single-file
bind mount; dev-1.19 and later write the whole file through config-parser-utils.sh), FLINK_PROPERTIES
over the file, -D dynamic properties over both."""

from __future__ import annotations

from pathlib import Path

import pytest

from flinktune.config.reader import read_config_file
from flinktune.deployment.access import local_path, mount_at, resolve_host
from flinktune.deployment.documents import DocumentCache
from flinktune.deployment.link import entrypoint_writes, place, process_settings
from flinktune.deployment.readers import read_deployment


def _compose(tmp_path: Path, image: str, conf_mount: str, extra: str = "") -> tuple[str, object]:
    (tmp_path / "conf").mkdir(exist_ok=True)
    (tmp_path / "conf" / "flink-conf.yaml").write_text("taskmanager.numberOfTaskSlots: 4\n"
                                                       "jobmanager.rpc.address: localhost\n")
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(f"""\
services:
  jobmanager:
    image: {image}
    command: jobmanager
    environment:
      - JOB_MANAGER_RPC_ADDRESS=jobmanager
      - |
        FLINK_PROPERTIES=
        taskmanager.numberOfTaskSlots: 8
    volumes:
      - {conf_mount}
{extra}""")
    return str(compose), read_deployment([(str(compose), "compose")], str(tmp_path))


@pytest.mark.parametrize(("image", "applied"), [("flink:1.18", False), ("flink:1.19", True),
                                                ("flink:2.0", True)])
def test_single_file_bind_and_the_entrypoint(tmp_path: Path, image: str, applied: bool) -> None:
    _file, deployment = _compose(tmp_path, image, "./conf/flink-conf.yaml:/opt/flink/conf/flink-conf.yaml")
    [jm] = deployment.processes
    writes = {key: (ok, why) for key, _value, _where, ok, why in entrypoint_writes(jm)}
    assert writes["jobmanager.rpc.address"][0] is applied
    if not applied:
        assert "sed -i" in writes["jobmanager.rpc.address"][1]


def test_read_only_mount_keeps_the_file(tmp_path: Path) -> None:
    _file, deployment = _compose(tmp_path, "flink:1.20", "./conf:/opt/flink/conf:ro")
    [jm] = deployment.processes
    settings = process_settings(jm, DocumentCache().document_at, {}, deployment)
    # nothing the entrypoint writes lands in a read-only file
    assert settings["jobmanager.rpc.address"].value == "localhost"
    assert settings["jobmanager.rpc.address"].origin == "file"


def test_settings_order(tmp_path: Path) -> None:
    _file, deployment = _compose(tmp_path, "flink:1.20", "./conf:/opt/flink/conf")
    [jm] = deployment.processes
    overlays = {d.name.rsplit(" ", 1)[0]: d for d in deployment.documents}
    settings = process_settings(jm, DocumentCache().document_at, overlays, deployment)
    assert (settings["jobmanager.rpc.address"].value, settings["jobmanager.rpc.address"].origin) == (
        "jobmanager", "entrypoint")
    assert (settings["taskmanager.numberOfTaskSlots"].value,
            settings["taskmanager.numberOfTaskSlots"].origin) == ("8", "FLINK_PROPERTIES")


def test_placement_of_file_and_overlay(tmp_path: Path) -> None:
    _file, deployment = _compose(tmp_path, "flink:1.20", "./conf:/opt/flink/conf")
    cache = DocumentCache()
    [config] = read_config_file(str(tmp_path / "conf" / "flink-conf.yaml"))
    placed = place(config, deployment, cache.document_at)
    assert placed.completeness == "complete" and placed.seen and placed.version == "1.20"
    [overlay] = deployment.documents
    placed = place(overlay, deployment, cache.document_at)
    assert placed.completeness == "overlay"
    assert {s.key for s in placed.base} >= {"taskmanager.numberOfTaskSlots", "jobmanager.rpc.address"}


def test_overlay_without_a_file_starts_from_the_image_defaults(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text("services:\n  tm:\n    image: flink:1.20\n    command: taskmanager\n"
                       "    environment:\n      FLINK_PROPERTIES: \"parallelism.default: 2\"\n")
    deployment = read_deployment([(str(compose), "compose")], str(tmp_path))
    [overlay] = deployment.documents
    placed = place(overlay, deployment, DocumentCache().document_at)
    base = {s.key: s for s in placed.base}
    assert base["taskmanager.memory.process.size"].value == "1728m"
    assert base["taskmanager.memory.process.size"].origin == "image default"


def test_dynamic_property_and_host_win(tmp_path: Path) -> None:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text("services:\n  jm:\n    image: flink:1.20\n"
                       "    command: jobmanager flink-jm -Dparallelism.default=3\n")
    deployment = read_deployment([(str(compose), "compose")], str(tmp_path))
    [jm] = deployment.processes
    settings = process_settings(jm, None, {}, deployment)
    assert (settings["parallelism.default"].value, settings["parallelism.default"].origin) == (
        "3", "dynamic property")
    assert settings["jobmanager.rpc.address"].value == "flink-jm"


def test_hosts_and_mounts(tmp_path: Path) -> None:
    _file, deployment = _compose(tmp_path, "flink:1.20", "./conf:/opt/flink/conf",
                                 "  taskmanager:\n    image: flink:1.20\n    command: taskmanager\n"
                                 "    volumes:\n      - ckpt:/data\n")
    jm, tm = deployment.processes
    assert resolve_host(deployment, "jobmanager", tm)["kind"] == "container"
    assert resolve_host(deployment, "jobmanager", tm)["roles"] == ("jobmanager",)
    assert resolve_host(deployment, "localhost", tm)["kind"] == "loopback"
    assert resolve_host(deployment, "0.0.0.0", tm)["kind"] == "wildcard"
    assert resolve_host(deployment, "flink.example.com", tm)["kind"] == "unknown"
    assert mount_at(deployment, tm, "file:///data/checkpoints")["kind"] == "volume"    # type: ignore[index]
    assert mount_at(deployment, jm, "file:///data/checkpoints") is None
    assert local_path("s3://bucket/x") is None and local_path("file:///a/b") == "/a/b"
