"""Rule functions that read the deployment around a configuration (flinktune.deployment): general data
access, no one-rule logic. Values are plain data (mappings, lists), so conditions filter them with list
comprehensions: ``[p for p in deployment().cluster if p.role == "taskmanager"]``.

- ``deployment()``: the placement of the document (config/key scope) or the whole deployment (process
  scope): ``seen`` (deployment files that run Flink were found beside the document), ``processes`` (the
  ones that run with this document), ``cluster`` (every JobManager/TaskManager of the same deployment),
  ``taskmanagers`` (replicas), ``completeness``, ``files``, ``services``.
- ``mount_at(process, path)``: the volume or bind mount that holds ``path`` in the process's container.
- ``setting(process, key)``: the value a process runs with and where it came from (file, image default,
  entrypoint, FLINK_PROPERTIES, dynamic property).
- ``host(name, process)``: what a host name resolves to from that process.
- ``jar_version(name)``, ``plugin_only(name)``: what a jar's file name says.
- ``jm_memory(component)``: the derived JobManager memory (heap, off_heap, metaspace, overhead, process).
- ``operator()``: what a FlinkDeployment's spec says outside flinkConfiguration (kind, mode, has_job,
  upgrade_mode and its line, parallelism, replicas, memory).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flinktune.rules.general_functions import function as _f
from flinktune.rules.lang import Function, to_value

_NO_DEPLOYMENT: Mapping[str, object] = to_value({  # type: ignore[assignment]
    "seen": False, "files": (), "completeness": None, "completeness_detail": "", "version": None,
    "processes": (), "cluster": (), "taskmanagers": 0, "taskmanagers_known": False, "services": (),
})


def _placement(ctx: Any) -> Any:
    situation = ctx.__dict__.get("situation")
    return getattr(situation, "deployed", None) if situation is not None else None


def _deployment_value(ctx: Any) -> Any:
    deployment = getattr(ctx, "deployment", None)
    if deployment is not None:
        return deployment
    placement = _placement(ctx)
    return None if placement is None else placement.deployment


def _deployment(ctx: Any) -> object:
    process = getattr(ctx, "process", None)
    if process is not None:
        from flinktune.deployment.access import deployment_map, in_cluster, process_map

        deployment = ctx.deployment
        cluster = in_cluster(deployment, process)
        taskmanagers = [p for p in cluster if p.role == "taskmanager"]
        return {**_NO_DEPLOYMENT, **deployment_map(deployment), "seen": True,
                "processes": (process_map(deployment, process),),
                "cluster": tuple(process_map(deployment, p) for p in cluster),
                "taskmanagers": sum(p.replicas for p in taskmanagers),
                "taskmanagers_known": bool(taskmanagers) and all(p.replicas_known for p in taskmanagers)}
    placement = _placement(ctx)
    if placement is None:
        return _NO_DEPLOYMENT

    def compute() -> object:
        from flinktune.deployment.access import placement_map

        return to_value(placement_map(placement))   # converted once, read by many rules

    return ctx.memo(("deployment", None), compute)


def _process_of(ctx: Any, value: object) -> Any:
    if not isinstance(value, Mapping):
        return None
    deployment = _deployment_value(ctx)
    if deployment is None:
        return None
    from flinktune.deployment.access import find_process

    return find_process(deployment, value.get("name"), value.get("file"))


def _mount_at(ctx: Any, process: object, path: object) -> object:
    found = _process_of(ctx, process)
    if found is None or not isinstance(path, str):
        return None
    from flinktune.deployment.access import mount_at

    return mount_at(_deployment_value(ctx), found, path)


def _setting(ctx: Any, process: object, key: object) -> object:
    found = _process_of(ctx, process)
    if found is None or not isinstance(key, str):
        return None
    from flinktune.deployment.access import setting

    return setting(_deployment_value(ctx), found, key, getattr(ctx, "document_at", None))


def _host(ctx: Any, name: object, process: object = None) -> object:
    if not isinstance(name, str):
        return None
    deployment = _deployment_value(ctx)
    if deployment is None:
        return _plain_host(name)
    from flinktune.deployment.access import resolve_host

    return resolve_host(deployment, name, _process_of(ctx, process))


def _plain_host(name: str) -> dict[str, object]:
    """What a host name is without any deployment to resolve it in (kept import-free: most lints have no
    deployment files): loopback, wildcard, an IP address, a placeholder, else unknown."""
    host = name.strip().strip("\"'").lower()
    if host.count(":") == 1:
        host = host.split(":", 1)[0]
    kind = "unknown"
    if host in ("localhost", "localhost.localdomain", "ip6-localhost", "::1") or host.startswith("127."):
        kind = "loopback"
    elif host in ("0.0.0.0", "::"):
        kind = "wildcard"
    elif host and all(part.isdigit() for part in host.split(".")) and host.count(".") == 3:
        kind = "ip"
    elif "$" in host or "<" in host or "{" in host:
        kind = "placeholder"
    elif not host:
        kind = "empty"
    return {"name": name, "kind": kind, "processes": (), "roles": (), "ports": (), "file": None, "line": None}


def _jar_version(_ctx: Any, name: object) -> object:
    if not isinstance(name, str):
        return None
    from flinktune.deployment.images import jar_flink_version

    return jar_flink_version(name)


def _plugin_only(_ctx: Any, name: object) -> object:
    if not isinstance(name, str):
        return None
    from flinktune.deployment.images import plugin_only_jar

    return plugin_only_jar(name)


_JM_COMPONENTS = ("process", "flink", "heap", "off_heap", "jvm_metaspace", "jvm_overhead")


def _jm_memory(ctx: Any, component: object) -> object:
    from flinktune.errors import ConditionError
    from flinktune.rules.functions import _jm_derivation

    if component not in _JM_COMPONENTS:
        raise ConditionError(f"unknown JobManager memory component '{component}' (one of "
                             + ", ".join(_JM_COMPONENTS) + ")")
    derived, _error = _jm_derivation(ctx)
    if derived is None:
        return None
    attr = {"process": "total_process_bytes", "flink": "total_flink_bytes"}.get(str(component),
                                                                               f"{component}_bytes")
    value = getattr(derived, attr, None)
    return None if value is None else int(value)


def _operator(ctx: Any) -> object:
    spec = getattr(ctx.situation, "spec", None) if ctx.document is not None else None
    fields = getattr(spec, "_fields", ())
    return {name: getattr(spec, name) for name in fields}


DEPLOYMENT_FUNCTIONS: dict[str, Function] = {fn.name: fn for fn in (
    _f("deployment", (0, 0), _deployment,
       "deployment(): where the document runs: seen (deployment files that run Flink were found beside it), "
       "processes (those that run with it: name, role, image, version, jdk, memory_limit, replicas, mounts, "
       "env, jars, config, writes, file, line), cluster (every JobManager/TaskManager of that deployment), "
       "taskmanagers (replicas), completeness, files, services"),
    _f("mount_at", (2, 2), _mount_at,
       "mount_at(process, path): the mount holding path (a plain path or file:// URI) in the process's "
       "container (path, kind, source, shared, read_only, access, file, line), or null"),
    _f("setting", (2, 2), _setting,
       "setting(process, key): the value the process runs with (value, origin, file, line): its "
       "configuration file or the image's defaults, the entrypoint, FLINK_PROPERTIES, -D arguments"),
    _f("host", (1, 2), _host,
       "host(name, process): what a host name resolves to from the process: kind (loopback, wildcard, ip, "
       "container, service, placeholder, unknown), processes, roles, ports, file, line"),
    _f("jar_version", (1, 1), _jar_version,
       "jar_version(name): the Flink minor version a jar's file name says it was built for, or null"),
    _f("plugin_only", (1, 1), _plugin_only,
       "plugin_only(name): the jar is a file system Flink loads only as a plugin (S3, Azure, GCS, OSS)"),
    _f("jm_memory", (1, 1), _jm_memory,
       "jm_memory(component): derived JobManager memory in bytes (process, flink, heap, off_heap, "
       "jvm_metaspace, jvm_overhead), or null"),
    _f("operator", (0, 0), _operator,
       "operator(): the FlinkDeployment's spec outside flinkConfiguration (kind, mode, has_job, "
       "upgrade_mode, upgrade_mode_line, parallelism, taskmanager_replicas, *_memory_bytes); empty for other "
       "documents"),
)}
