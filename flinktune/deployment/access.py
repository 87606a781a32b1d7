"""The deployment as plain data for rule conditions (mappings, lists, strings, numbers), and the
questions rules ask of it: which mount holds a path, what a process runs a key with, what a host name
resolves to. Results are cached on the Deployment value (one lint run)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from flinktune.config.types import ConfigDocument
from flinktune.deployment.link import FLINK_PROPERTIES, Placement, entrypoint_writes, process_settings
from flinktune.deployment.model import Deployment, Mount, Process, Where


def _cache(deployment: Deployment) -> dict[str, Any]:
    cache = deployment.__dict__.get("_access_cache")
    if cache is None:
        cache = {}
        object.__setattr__(deployment, "_access_cache", cache)
    return cache


def _where(where: Where | None) -> dict[str, object]:
    if where is None:
        return {"file": None, "line": None, "note": ""}
    return {"file": where.file, "line": where.line, "note": where.note}


def _mount(mount: Mount) -> dict[str, object]:
    return {"path": mount.path, "kind": mount.kind, "source": mount.source, "shared": mount.shared_key,
            "read_only": mount.read_only, "access": mount.access, **_where(mount.where)}


def process_map(deployment: Deployment, process: Process) -> dict[str, object]:
    cache = _cache(deployment).setdefault("process", {})
    found = cache.get(process.name + "@" + process.where.file)
    if found is not None:
        return found
    image = _where(process.image_where)
    memory = _where(process.memory_limit_where)
    out = {
        "name": process.name, "role": process.role, "platform": process.platform,
        "file": process.where.file, "line": process.where.line, "note": process.where.note,
        "image": process.image, "image_file": image["file"], "image_line": image["line"],
        "version": process.flink_version, "patch": process.flink_patch,
        "version_source": process.version_source,
        "jdk": process.jdk, "moving": process.image_moving, "official": process.official,
        "official_image": process.image_official,
        "memory_limit": process.memory_limit_bytes, "memory_file": memory["file"],
        "memory_line": memory["line"],
        "replicas": process.replicas, "replicas_known": process.replicas_known,
        "hostnames": process.hostnames, "networks": process.networks, "namespace": process.namespace,
        "mounts": tuple(_mount(mount) for mount in process.mounts),
        "env": {var.name: var.value for var in process.env},
        "env_where": {var.name: _where(var.where) for var in process.env},
        "jars": tuple({"name": jar.name, "folder": jar.folder, "source": jar.source, **_where(jar.where)}
                      for jar in process.jars),
        "config": tuple({"how": source.how, "key": source.key, "path": source.container_path,
                         "configmap": source.configmap, "host_path": source.host_path,
                         "writable": source.writable, **_where(source.where)} for source in process.config),
        "command": process.command, "command_file": _where(process.command_where)["file"],
        "command_line": _where(process.command_where)["line"],
        "entrypoint_overridden": process.entrypoint_overridden, "dockerfile": process.dockerfile,
        "entrypoint": process.entrypoint, "intended_role": process.intended_role,
        "entrypoint_file": _where(process.entrypoint_where)["file"],
        "entrypoint_line": _where(process.entrypoint_where)["line"],
        "dockerfile_assumed": process.dockerfile_assumed,
        "writes": tuple({"key": key, "value": value, "applied": applied, "why": why, **_where(where)}
                        for key, value, where, applied, why in entrypoint_writes(process)),
        "overlay": _overlay(deployment, process),
    }
    cache[process.name + "@" + process.where.file] = out
    return out


def _overlay(deployment: Deployment, process: Process) -> tuple[dict[str, object], ...]:
    """The entries of the process's FLINK_PROPERTIES (key, value, file, line)."""
    name = f"{process.name} {FLINK_PROPERTIES}"
    for document in deployment.documents:
        if document.origin == FLINK_PROPERTIES and document.name == name and any(
                var.name == FLINK_PROPERTIES and var.where.file == document.path for var in process.env):
            return tuple({"key": e.key, "value": e.raw, "file": e.file, "line": e.line,
                          "note": "FLINK_PROPERTIES"}
                         for e in document.entries)
    return ()


def placement_map(placement: Placement) -> dict[str, object]:
    deployment = placement.deployment
    processes = []
    for reader in placement.readers:
        entry = dict(process_map(deployment, reader.process))
        source = reader.source
        entry["reads"] = None if source is None else {
            "how": source.how, "path": source.container_path, "writable": source.writable,
            **_where(source.where)}
        processes.append(entry)
    cluster = tuple(process_map(deployment, process) for process in placement.cluster)
    taskmanagers = [p for p in placement.cluster if p.role == "taskmanager"]
    return {
        "seen": placement.seen, "files": deployment.files, "completeness": placement.completeness,
        "completeness_detail": placement.completeness_detail, "version": placement.version,
        "processes": tuple(processes), "cluster": cluster,
        "taskmanagers": sum(p.replicas for p in taskmanagers),
        "taskmanagers_known": bool(taskmanagers) and all(p.replicas_known for p in taskmanagers),
        "services": tuple({"name": s.name, "namespace": s.namespace, "ports": s.ports, **_where(s.where)}
                          for s in deployment.services),
    }


def deployment_map(deployment: Deployment) -> dict[str, object]:
    cached = _cache(deployment).get("map")
    if cached is None:
        cached = {"files": deployment.files,
                  "processes": tuple(process_map(deployment, p) for p in deployment.processes),
                  "services": tuple({"name": s.name, "namespace": s.namespace, "ports": s.ports,
                                     **_where(s.where)} for s in deployment.services)}
        _cache(deployment)["map"] = cached
    return cached


def find_process(deployment: Deployment, name: object, file: object = None) -> Process | None:
    for process in deployment.processes:
        if process.name == name and (file is None or process.where.file == file):
            return process
    return None


def local_path(path: str) -> str | None:
    """The container path of a file:// URI or a plain absolute path (None for other schemes)."""
    text = path.strip()
    if text.startswith("file://"):
        text = text[len("file://"):]
        if text and not text.startswith("/"):
            text = "/" + text.split("/", 1)[-1] if "/" in text else "/"
    elif re.match(r"^[A-Za-z][A-Za-z0-9+.-]+:", text):
        return None
    return text if text.startswith("/") else None


def mount_at(deployment: Deployment, process: Process, path: str) -> dict[str, object] | None:
    """The mount that holds ``path`` inside the process's container (the deepest one), or None."""
    local = local_path(path)
    if local is None:
        return None
    local = local.rstrip("/") or "/"
    best: Mount | None = None
    for mount in process.mounts:
        inside = local == mount.path or local.startswith(mount.path.rstrip("/") + "/")
        if inside and (best is None or len(mount.path) > len(best.path)):
            best = mount
    return None if best is None else _mount(best)


def settings_of(deployment: Deployment, process: Process,
                document_at: Callable[[str], ConfigDocument | None] | None) -> dict[str, Any]:
    cache = _cache(deployment).setdefault("settings", {})
    key = process.name + "@" + process.where.file
    found = cache.get(key)
    if found is None:
        overlays = {doc.name.rsplit(" ", 1)[0]: doc for doc in deployment.documents
                    if doc.origin == FLINK_PROPERTIES and doc.name}
        found = process_settings(process, document_at, overlays, deployment)
        cache[key] = found
    return found


def setting(deployment: Deployment, process: Process, key: str,
            document_at: Callable[[str], ConfigDocument | None] | None) -> dict[str, object] | None:
    found = settings_of(deployment, process, document_at).get(key)
    if found is None:
        return None
    return {"value": found.value, "origin": found.origin, **_where(found.where)}


_LOOPBACK = ("localhost", "localhost.localdomain", "ip6-localhost")


def resolve_host(deployment: Deployment, name: str, near: Process | None) -> dict[str, object]:
    """What a host name resolves to among the deployment's containers: loopback, wildcard (0.0.0.0), an
    IP address, a compose service / container (its processes), a Kubernetes Service (the processes it
    selects, its ports), or unknown (an external host, or a name the files do not define)."""
    text = name.strip().strip("\"'").lower().split(",", 1)[0].strip()    # a list: its first host
    if "://" in text:    # a URL (an S3 endpoint): its host
        text = text.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
    host = text.split(":", 1)[0] if text.count(":") == 1 else text
    base = {"name": name, "processes": (), "roles": (), "ports": (), "file": None, "line": None}
    if not host:
        return {**base, "kind": "empty"}
    if host in _LOOPBACK:
        return {**base, "kind": "loopback"}
    try:
        address = ipaddress.ip_address(host)
        kind = "wildcard" if address.is_unspecified else "loopback" if address.is_loopback else "ip"
        return {**base, "kind": kind}
    except ValueError:
        pass
    if "$" in host or "<" in host or "{" in host:
        return {**base, "kind": "placeholder"}
    platform = near.platform if near is not None else None
    if platform in (None, "compose"):
        group = near.group if near is not None else None
        matched = [p for p in deployment.processes if p.platform == "compose"
                   and (group is None or p.group == group) and host in (h.lower() for h in p.hostnames)]
        if matched:
            return {**base, "kind": "container", "processes": tuple(p.name for p in matched),
                    "roles": tuple(p.role for p in matched), **_where(matched[0].where)}
    if platform in (None, "kubernetes"):
        parts = host.split(".")
        service_name = parts[0]
        namespace = parts[1] if len(parts) > 1 and parts[1] not in ("svc",) else None
        for service in deployment.services:
            if service.name.lower() != service_name:
                continue
            if namespace is not None and service.namespace is not None and service.namespace != namespace:
                continue
            selected = [p for p in deployment.processes if p.platform == "kubernetes" and service.selector
                        and all((k, v) in p.labels for k, v in service.selector)
                        and (service.namespace is None or p.namespace in (None, service.namespace))]
            return {**base, "kind": "service", "processes": tuple(p.name for p in selected),
                    "roles": tuple(p.role for p in selected), "ports": service.ports, **_where(service.where)}
    return {**base, "kind": "unknown"}


def in_cluster(deployment: Deployment, near: Process | None) -> tuple[Process, ...]:
    """The JobManagers and TaskManagers that form one cluster with ``near``: of the same folder and
    platform; for the operator, of the same FlinkDeployment (each is a cluster of its own); for plain
    Kubernetes workloads, of the same namespace where both name one."""
    if near is None:
        return ()

    def together(p: Process) -> bool:
        if p.group != near.group or p.platform != near.platform:
            return False
        if p.platform == "operator":
            return p.where.file == near.where.file and p.name.split("/")[0] == near.name.split("/")[0]
        if p.platform == "kubernetes":
            return p.namespace is None or near.namespace is None or p.namespace == near.namespace
        return True

    return tuple(p for p in deployment.processes if p.role in ("jobmanager", "taskmanager") and together(p))


__all__ = ["deployment_map", "find_process", "in_cluster", "local_path", "mount_at", "placement_map",
           "process_map", "resolve_host", "setting", "settings_of"]
