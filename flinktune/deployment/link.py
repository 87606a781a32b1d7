"""Which processes run with a configuration document, and with what configuration each one runs.

A document is read by a process when a mount or the image puts it into Flink's conf folder (a compose
bind, a Dockerfile COPY, a ConfigMap volume), when it is the process's ``FLINK_PROPERTIES``, or when it
is the FlinkDeployment the operator runs. What a process finally runs with is, in order (later wins):
the configuration file it mounts (else the official image's default one), what the image's entrypoint
writes into it, its ``FLINK_PROPERTIES``, and ``-D`` dynamic properties in its command.

The entrypoint (apache/flink-docker ``docker-entrypoint.sh``) differs by release:

- up to 1.18 (dev-1.13 ... dev-1.18): ``set_config_option`` rewrites an existing key with ``sed -i`` (a
  rename: it fails on a single-file bind mount and on a read-only file) and appends a new one with
  ``echo >>`` (fails only when read-only); ``FLINK_PROPERTIES`` is appended with ``echo >>``; ``envsubst``
  over the file is written back with ``mv`` (fails on a single-file bind mount and when read-only);
- from 1.19 (dev-1.19, dev-1.20, dev-2.x): every option goes through ``config-parser-utils.sh``, which
  writes the whole file with ``echo >`` (fails only when read-only); each ``FLINK_PROPERTIES`` line loses
  all its whitespace and ``envsubst`` runs on its value only.

Both always set ``jobmanager.rpc.address`` (``$JOB_MANAGER_RPC_ADDRESS``, else ``hostname -f``),
``blob.server.port: 6124`` and ``query.server.port: 6125``, and ``taskmanager.numberOfTaskSlots`` from
``$TASK_MANAGER_NUMBER_OF_TASK_SLOTS`` when set (1.14+; 1.12/1.13 default it to 1).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from flinktune.config.types import FLINK_PROPERTIES, HELM_VALUES, ConfigDocument, ConfigFormat
from flinktune.deployment.images import IMAGE_DEFAULTS
from flinktune.deployment.model import JOBMANAGER, TASKMANAGER, ConfigSource, Deployment, Process, Where
from flinktune.record import Record, store


def _norm(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def _version_tuple(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        major, minor = text.split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return None


class Setting(Record):
    """One key as a process runs with it, and where that came from."""

    __slots__ = _fields = ("key", "value", "where", "origin")
    key: str
    value: str
    where: Where
    origin: str  # file | image default | entrypoint | FLINK_PROPERTIES | dynamic property

    def __init__(self, key: str, value: str, where: Where, origin: str) -> None:
        store(self, (key, value, where, origin))


class Reader(Record):
    """A process that runs with the document, and how the document reaches it."""

    __slots__ = _fields = ("process", "source")
    process: Process
    source: ConfigSource | None  # None for FLINK_PROPERTIES

    def __init__(self, process: Process, source: ConfigSource | None) -> None:
        store(self, (process, source))


class Placement(Record):
    """Where a configuration document runs."""

    __slots__ = _fields = ("document", "readers", "cluster", "seen", "deployment", "completeness",
                           "completeness_detail", "completeness_where", "base", "version", "version_source",
                           "jdk")
    document: ConfigDocument
    readers: tuple[Reader, ...]
    cluster: tuple[Process, ...]  # every JobManager and TaskManager of the same deployment
    seen: bool  # deployment files that run Flink were found beside the document
    deployment: Deployment
    completeness: str | None  # complete | overlay | None (nothing to say)
    completeness_detail: str
    completeness_where: Where | None
    base: tuple[Setting, ...]  # what an overlay is merged into
    version: str | None
    version_source: str
    jdk: int | None

    def __init__(self, document: ConfigDocument, readers: tuple[Reader, ...], cluster: tuple[Process, ...],
                 seen: bool, deployment: Deployment, completeness: str | None, completeness_detail: str,
                 completeness_where: Where | None, base: tuple[Setting, ...], version: str | None,
                 version_source: str, jdk: int | None) -> None:
        store(self, (document, readers, cluster, seen, deployment, completeness, completeness_detail,
                     completeness_where, base, version, version_source, jdk))

    @property
    def processes(self) -> tuple[Process, ...]:
        return tuple(reader.process for reader in self.readers)


def _configmap_matches(deployment: Deployment, process: Process, name: str, file: str) -> bool:
    """The ConfigMap ``name`` a process mounts is the one in ``file``: among the ConfigMaps of that name
    in the process's namespace, the ones nearest to the process's manifest (same folder, else the closest
    folder above) count. A pod mounts only a ConfigMap of its own namespace: where the pod's manifest and
    a ConfigMap both name one they must agree, and when some ConfigMap of that name is declared in the
    pod's namespace, one that names none (it lands wherever ``kubectl apply`` puts it) is not the one."""
    named = [(cm_ns, cm_file) for cm_name, cm_ns, cm_file in deployment.configmaps if cm_name == name]
    if process.namespace is not None:
        declared = [cm_file for cm_ns, cm_file in named if cm_ns == process.namespace]
        candidates = declared or [cm_file for cm_ns, cm_file in named if cm_ns is None]
    else:
        candidates = [cm_file for _ns, cm_file in named]
    if not candidates:
        return False
    folder = os.path.dirname(os.path.abspath(process.where.file))
    while True:
        near = [c for c in candidates if _norm(os.path.dirname(c)) == _norm(folder)
                or _norm(c).startswith(_norm(folder) + os.sep)]
        if near:
            return any(_norm(c) == _norm(file) for c in near)
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _readers(document: ConfigDocument, deployment: Deployment) -> list[Reader]:
    found: list[Reader] = []
    path = _norm(document.path)
    if document.origin == FLINK_PROPERTIES:
        for process in deployment.processes:
            if document.name == f"{process.name} {FLINK_PROPERTIES}" and (
                    _norm(process.where.file) == path or any(_norm(var.where.file) == path
                                                              for var in process.env
                                                              if var.name == FLINK_PROPERTIES)):
                found.append(Reader(process, None))
        return found
    if document.format is ConfigFormat.DEPLOYMENT:
        for process in deployment.processes:
            if process.platform == "operator" and _norm(process.where.file) == path and \
                    process.name.startswith(f"{document.name}/"):
                found.append(Reader(process, process.config[0] if process.config else None))
        return found
    if document.format is ConfigFormat.CONFIGMAP:
        key = "flink-conf.yaml" if document.embedded is ConfigFormat.FLAT else "config.yaml"
        for process in deployment.processes:
            for source in process.config:
                if source.configmap == document.name and source.key == key and document.name and \
                        _configmap_matches(deployment, process, document.name, document.path):
                    found.append(Reader(process, source))
                    break
        return found
    for process in deployment.processes:
        for source in process.config:
            if source.host_path is not None and _norm(source.host_path) == path:
                found.append(Reader(process, source))
                break
    return found


def _home(process: Process) -> str:
    return _norm(os.path.dirname(process.where.file))


def _seen(document: ConfigDocument, deployment: Deployment, readers: list[Reader]) -> bool:
    """Deployment files that run this configuration were found: processes read it, or a compose file
    beside it (or above it) runs Flink. Kubernetes workloads beside a file do not count: they read
    ConfigMaps, often generated from such a file (kubectl create configmap --from-file)."""
    if readers:
        return True
    folder = _norm(os.path.dirname(document.path))
    return any(process.platform == "compose" and (folder == _home(process) or folder.startswith(
        _home(process) + os.sep)) for process in deployment.processes)


def _cluster(deployment: Deployment, readers: list[Reader]) -> tuple[Process, ...]:
    """The JobManagers and TaskManagers that work together with the readers: the same compose file; the
    same FlinkDeployment; Kubernetes workloads of the same folder and namespace that read the same
    ConfigMap or no configuration lint can see (an init container's copy, the image's own)."""
    processes = [reader.process for reader in readers]
    configmaps = {reader.source.configmap for reader in readers if reader.source is not None}
    out: list[Process] = []
    for process in deployment.processes:
        if process.role not in (JOBMANAGER, TASKMANAGER):
            continue
        if process in processes:
            out.append(process)
            continue
        for reader in readers:
            near = reader.process
            if near.group != process.group or near.platform != process.platform:
                continue
            if process.platform == "compose":
                out.append(process)
                break
            if process.platform == "kubernetes" and process.namespace == near.namespace and (
                    not [c for c in process.config if c.how != "unknown"]
                    or any(c.configmap in configmaps for c in process.config if c.configmap)):
                out.append(process)
                break
    return tuple(out)


def image_defaults(process: Process) -> tuple[Setting, ...]:
    where = process.image_where or process.where
    note = Where(where.file, where.line, f"the default configuration of {process.image or 'the image'}")
    return tuple(Setting(key, value, note, "image default") for key, value in IMAGE_DEFAULTS)


def _agree(values: list[object]) -> object:
    unique = {value for value in values if value is not None}
    return next(iter(unique)) if len(unique) == 1 else None


def place(document: ConfigDocument, deployment: Deployment,
          document_at: Callable[[str], ConfigDocument | None] | None = None) -> Placement:
    """The placement of ``document`` in ``deployment``. ``document_at(path)`` gives the configuration
    document read from a file, for the base of a FLINK_PROPERTIES overlay."""
    readers = _readers(document, deployment)
    processes = [reader.process for reader in readers]
    cluster = _cluster(deployment, readers)
    completeness, detail, where = None, "", None
    base: tuple[Setting, ...] = ()
    if document.origin == FLINK_PROPERTIES and processes:
        completeness = "overlay"
        process = processes[0]
        base = base_settings(process, document_at, deployment)
        var = process.env_var(FLINK_PROPERTIES)
        where = var.where if var is not None else process.where
        detail = (f"FLINK_PROPERTIES of {process.name}: the image's entrypoint merges it into "
                  + ("the configuration file it mounts" if any(s.origin == "file" for s in base)
                     else "the image's default configuration"))
    elif document.origin == HELM_VALUES:
        completeness = "overlay"
        detail = "a flinkConfiguration in Helm values, merged into the platform's defaults"
    else:
        complete = [reader for reader in readers if reader.source is not None
                    and reader.source.how in ("bind-file", "bind-dir", "baked", "configmap")]
        if complete:
            source = complete[0].source
            assert source is not None
            completeness = "complete"
            where = source.where
            how = {"bind-file": "mounted", "bind-dir": "mounted with its folder",
                   "baked": "copied into the image",
                   "configmap": f"mounted from ConfigMap {source.configmap}"}[source.how]
            detail = f"{how} at {source.container_path} ({source.where.file}:{source.where.line})"
    version = _agree([process.flink_version for process in processes])
    sources = {process.version_source for process in processes if process.flink_version == version}
    jdk = _agree([process.jdk for process in processes])
    return Placement(document=document, readers=tuple(readers), cluster=cluster,
                     seen=_seen(document, deployment, readers), deployment=deployment,
                     completeness=completeness, completeness_detail=detail, completeness_where=where,
                     base=base, version=version if isinstance(version, str) else None,
                     version_source=", ".join(sorted(sources)) if version else "",
                     jdk=jdk if isinstance(jdk, int) else None)


def _mounted_file(process: Process) -> ConfigSource | None:
    """The configuration file the process reads from its conf folder (flink-conf.yaml wins over
    config.yaml in 1.19/1.20, 2.x reads config.yaml only)."""
    version = _version_tuple(process.flink_version)
    names = ("config.yaml",) if version is not None and version >= (2, 0) else ("flink-conf.yaml",
                                                                                "config.yaml")
    for name in names:
        for source in reversed(process.config):
            if source.key == name and source.how != "unknown" and (
                    source.host_path is None or os.path.isfile(source.host_path)):
                return source
    return None


def base_settings(process: Process, document_at: Callable[..., ConfigDocument | None] | None,
                  deployment: Deployment | None = None) -> tuple[Setting, ...]:
    """The configuration file a process starts from: the one it mounts or bakes in (a file, or a
    ConfigMap of the deployment), else the official image's default configuration (nothing when neither
    is known). ``document_at(path, name=None)`` reads a file (the ConfigMap ``name`` in a manifest)."""
    source = _mounted_file(process)
    mounted = None
    if source is not None and document_at is not None:
        if source.host_path is not None:
            mounted = document_at(source.host_path)
        elif source.configmap is not None and deployment is not None:
            for name, _namespace, file in deployment.configmaps:
                if name == source.configmap and _configmap_matches(deployment, process, name, file):
                    mounted = document_at(file, name)
                    if mounted is not None:
                        break
    if mounted is not None:
        return tuple(Setting(entry.key, entry.raw, Where(entry.file, entry.line), "file")
                     for entry in mounted.entries)
    if source is None and process.official:
        return image_defaults(process)
    return ()


def _host_override(process: Process) -> Setting | None:
    """The JobManager's address given on its command line: ``jobmanager <host>`` (the entrypoint passes it
    to jobmanager.sh, which turns it into --host) or ``--host <host>`` (standalone-job)."""
    words = list(process.command)
    where = process.command_where or process.where
    if process.role != JOBMANAGER or not words:
        return None
    if words[0] == "jobmanager" and len(words) > 1 and not words[1].startswith("-"):
        return Setting("jobmanager.rpc.address", words[1], where, "command line")
    for index, word in enumerate(words[:-1]):
        if word in ("--host", "-h") and process.official:
            return Setting("jobmanager.rpc.address", words[index + 1], where, "command line")
    return None


def entrypoint_writes(process: Process) -> list[tuple[str, str, Where, bool, str]]:
    """(key, value, where, applied, why not) of what the official entrypoint writes into the process's
    configuration file on start (module docstring)."""
    if not process.official or process.platform == "operator":
        return []
    source = _mounted_file(process)
    version = _version_tuple(process.flink_version)
    modern = version is not None and version >= (1, 19)
    read_only = source is not None and not source.writable
    single_file = source is not None and source.how == "bind-file"
    address_var = process.env_var("JOB_MANAGER_RPC_ADDRESS")
    writes: list[tuple[str, str, Where]] = []
    if address_var is not None and address_var.value:
        writes.append(("jobmanager.rpc.address", address_var.value, address_var.where))
    else:
        writes.append(("jobmanager.rpc.address", "$(hostname -f)",
                       Where(process.where.file, process.where.line, "the container's own host name")))
    slots = process.env_var("TASK_MANAGER_NUMBER_OF_TASK_SLOTS")
    if slots is not None and slots.value:
        writes.append(("taskmanager.numberOfTaskSlots", slots.value, slots.where))
    out = []
    for key, value, where in writes:
        if read_only:
            out.append((key, value, where, False, "the configuration file is read-only"))
        elif single_file and not modern:
            out.append((key, value, where, False, "sed -i cannot replace a single-file bind mount"))
        else:
            out.append((key, value, where, True, ""))
    return out


def process_settings(process: Process, document_at: Callable[..., ConfigDocument | None] | None,
                     overlays: dict[str, ConfigDocument], deployment: Deployment | None = None
                     ) -> dict[str, Setting]:
    """Key -> what the process runs with (the module docstring's order); ``overlays`` maps process names
    to their FLINK_PROPERTIES documents."""
    settings: dict[str, Setting] = {s.key: s for s in base_settings(process, document_at, deployment)}
    for key, value, where, applied, _why in entrypoint_writes(process):
        if applied:
            settings[key] = Setting(key, value, where, "entrypoint")
    overlay = overlays.get(process.name)
    source = _mounted_file(process)
    writable = source is None or source.writable
    if overlay is not None and process.official and writable:
        for entry in overlay.entries:
            settings[entry.key] = Setting(entry.key, entry.raw, Where(entry.file, entry.line),
                                          FLINK_PROPERTIES)
    for key, value, where in process.dynamic:
        settings[key] = Setting(key, value, where, "dynamic property")
    host = _host_override(process)
    if host is not None:
        settings[host.key] = host
    return settings
