"""The deployment around a Flink configuration, as frozen values.

A ``Deployment`` is what the readers (one module per format: ``compose``, ``kubernetes``, ``helm``,
``dockerfile``) found in the deployment files of a lint run: the Flink processes (JobManagers and
TaskManagers) with the image they run, where their configuration comes from, their environment,
volumes, memory limit and the names they are reachable under; the Kubernetes Services; and the
Flink configurations that live inside deployment files themselves (``FLINK_PROPERTIES``, Helm
values). Every value carries the file and line it was read from, so a finding can cite it.

Plain frozen dataclasses: this module is imported only when deployment files are present.
"""

from __future__ import annotations

from flinktune.config.types import ConfigDocument
from flinktune.record import Record, store

# Where the official image keeps its configuration and jars (apache/flink-docker, Dockerfile templates:
# FLINK_HOME=/opt/flink).
FLINK_HOME = "/opt/flink"
CONF_DIR = FLINK_HOME + "/conf"
CONF_FILE_NAMES = ("flink-conf.yaml", "config.yaml")

JOBMANAGER = "jobmanager"
TASKMANAGER = "taskmanager"


class Where(Record):
    """A file and line a deployment value came from."""

    __slots__ = _fields = ("file", "line", "note")
    file: str
    line: int | None
    note: str  # what is there, in words ("volume flink-checkpoints mounted at /flink")

    def __init__(self, file: str, line: int | None = None, note: str = "") -> None:
        store(self, (file, line, note))

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "note": self.note}


class EnvVar(Record):
    __slots__ = _fields = ("name", "value", "where", "first_line")
    name: str
    value: str | None  # None: from a Secret/ConfigMap/field reference the files do not resolve
    where: Where
    # For FLINK_PROPERTIES: the manifest line of the value's first line when the value is a block, so
    # that the lines of the overlay document point into the file.
    first_line: int | None

    def __init__(self, name: str, value: str | None, where: Where, first_line: int | None = None) -> None:
        store(self, (name, value, where, first_line))


class Mount(Record):
    """A volume, bind mount or baked file at ``path`` inside a container."""

    __slots__ = _fields = ("path", "kind", "source", "shared_key", "read_only", "where", "access", "items",
                           "sub_path")
    path: str  # path inside the container (no trailing slash)
    # bind | volume | tmpfs | emptyDir | pvc | configmap | secret | hostPath | image | anonymous
    kind: str
    source: str  # host path, volume / claim / ConfigMap name, or the Dockerfile
    shared_key: str | None  # equal keys: the same storage; None: private to this container (emptyDir, tmpfs)
    read_only: bool
    where: Where
    access: str  # PVC access modes (ReadWriteMany ...), when known
    items: tuple[tuple[str, str], ...]  # ConfigMap items: (key, path) pairs; empty: every key
    sub_path: str | None

    def __init__(self, path: str, kind: str, source: str, shared_key: str | None, read_only: bool,
                 where: Where, access: str = "", items: tuple[tuple[str, str], ...] = (),
                 sub_path: str | None = None) -> None:
        store(self, (path, kind, source, shared_key, read_only, where, access, items, sub_path))


class Jar(Record):
    """A jar the image or a mount puts into Flink's lib/ or plugins/ (or opt/)."""

    __slots__ = _fields = ("name", "folder", "where", "source")
    name: str
    folder: str  # lib | plugins/<dir> | opt | other
    where: Where
    source: str | None  # the path in the image it was copied from (cp /opt/flink/opt/x.jar ...)

    def __init__(self, name: str, folder: str, where: Where, source: str | None = None) -> None:
        store(self, (name, folder, where, source))


class ConfigSource(Record):
    """How a process gets a configuration file: a mounted or baked file, or a ConfigMap."""

    __slots__ = _fields = ("host_path", "configmap", "key", "container_path", "how", "writable", "where")
    host_path: str | None  # absolute path of the file on disk (compose bind, Dockerfile COPY), if any
    configmap: str | None  # ConfigMap name (Kubernetes), if any
    key: str | None  # ConfigMap data key or the file's name inside the conf folder
    container_path: str  # where the process sees it
    how: str  # bind-file | bind-dir | configmap | baked | operator | unknown
    writable: bool  # the image's entrypoint can rewrite it in place
    where: Where

    def __init__(self, host_path: str | None, configmap: str | None, key: str | None, container_path: str,
                 how: str, writable: bool, where: Where) -> None:
        store(self, (host_path, configmap, key, container_path, how, writable, where))


class Process(Record):
    """One JobManager or TaskManager container (a compose service, a workload's container, the
    operator's JobManager/TaskManager pods)."""

    __slots__ = _fields = ("name", "role", "platform", "where", "group", "image", "image_where",
                           "flink_version", "flink_patch", "version_source", "jdk", "image_moving",
                           "official", "image_official", "command", "command_where", "dynamic", "env",
                           "mounts", "config", "jars", "memory_limit_bytes", "memory_limit_where", "replicas",
                           "replicas_where", "replicas_known", "hostnames", "networks", "labels", "namespace",
                           "dockerfile", "dockerfile_assumed", "entrypoint_overridden", "entrypoint",
                           "entrypoint_where", "intended_role")
    name: str
    role: str | None  # jobmanager | taskmanager | None (not a Flink process we know)
    platform: str  # compose | kubernetes | operator
    where: Where
    group: str  # processes of one cluster share it (compose file, manifest folder)
    image: str | None
    image_where: Where | None
    flink_version: str | None  # "1.18" (major.minor) from the image tag or its Dockerfile
    flink_patch: str | None  # "1.18.1" when the tag pins it
    version_source: str  # "image flink:1.18 (docker-compose.yml:30)"
    jdk: int | None
    image_moving: bool  # tagged latest / untagged
    official: bool  # runs the official image's entrypoint (docker-entrypoint.sh)
    image_official: bool  # the official Flink image, or an image built FROM it
    command: tuple[str, ...]  # the arguments the entrypoint gets (compose command, k8s args)
    command_where: Where | None
    dynamic: tuple[tuple[str, str, Where], ...]  # -Dkey=value in the command
    env: tuple[EnvVar, ...]
    mounts: tuple[Mount, ...]
    config: tuple[ConfigSource, ...]
    jars: tuple[Jar, ...]
    memory_limit_bytes: int | None
    memory_limit_where: Where | None
    replicas: int
    replicas_where: Where | None
    replicas_known: bool  # False: templated or scaled at run time
    hostnames: tuple[str, ...]  # names other containers reach it by (compose service, aliases)
    networks: tuple[str, ...]  # compose networks ("host": network_mode host)
    labels: tuple[tuple[str, str], ...]  # Kubernetes pod labels (for Service selectors)
    namespace: str | None
    dockerfile: str | None  # the Dockerfile it is built from, when known
    dockerfile_assumed: bool  # linked by being the only Flink Dockerfile beside the manifest
    entrypoint_overridden: bool
    # A Flink script the image or the container runs as its entrypoint instead of docker-entrypoint.sh
    # (ENTRYPOINT ["/opt/flink/bin/jobmanager.sh", "start-foreground"]): the arguments go to it.
    entrypoint: tuple[str, ...]
    entrypoint_where: Where | None
    # The role the container's arguments or names ask for when that entrypoint runs the other one.
    intended_role: str | None

    def __init__(self, name: str, role: str | None, platform: str, where: Where, group: str,
                 image: str | None = None, image_where: Where | None = None, flink_version: str | None = None,
                 flink_patch: str | None = None, version_source: str = "", jdk: int | None = None,
                 image_moving: bool = False, official: bool = False, image_official: bool = False,
                 command: tuple[str, ...] = (), command_where: Where | None = None,
                 dynamic: tuple[tuple[str, str, Where], ...] = (), env: tuple[EnvVar, ...] = (),
                 mounts: tuple[Mount, ...] = (), config: tuple[ConfigSource, ...] = (),
                 jars: tuple[Jar, ...] = (), memory_limit_bytes: int | None = None,
                 memory_limit_where: Where | None = None, replicas: int = 1,
                 replicas_where: Where | None = None, replicas_known: bool = True,
                 hostnames: tuple[str, ...] = (), networks: tuple[str, ...] = (),
                 labels: tuple[tuple[str, str], ...] = (), namespace: str | None = None,
                 dockerfile: str | None = None, dockerfile_assumed: bool = False,
                 entrypoint_overridden: bool = False, entrypoint: tuple[str, ...] = (),
                 entrypoint_where: Where | None = None, intended_role: str | None = None) -> None:
        store(self, (name, role, platform, where, group, image, image_where, flink_version, flink_patch,
                     version_source, jdk, image_moving, official, image_official, command, command_where,
                     dynamic, env, mounts, config, jars, memory_limit_bytes, memory_limit_where, replicas,
                     replicas_where, replicas_known, hostnames, networks, labels, namespace, dockerfile,
                     dockerfile_assumed, entrypoint_overridden, entrypoint, entrypoint_where, intended_role))

    def env_value(self, name: str) -> str | None:
        for var in self.env:
            if var.name == name:
                return var.value
        return None

    def env_var(self, name: str) -> EnvVar | None:
        for var in self.env:
            if var.name == name:
                return var
        return None


class Service(Record):
    """A Kubernetes Service: what a host name such as ``flink-jobmanager`` resolves to."""

    __slots__ = _fields = ("name", "namespace", "selector", "ports", "where", "headless")
    name: str
    namespace: str | None
    selector: tuple[tuple[str, str], ...]
    ports: tuple[int, ...]
    where: Where
    headless: bool

    def __init__(self, name: str, namespace: str | None, selector: tuple[tuple[str, str], ...],
                 ports: tuple[int, ...], where: Where, headless: bool = False) -> None:
        store(self, (name, namespace, selector, ports, where, headless))


class Found(Record):
    """What one deployment file holds (what a reader returns)."""

    __slots__ = _fields = ("processes", "services", "documents", "configmaps", "claims")
    processes: tuple[Process, ...]
    services: tuple[Service, ...]
    documents: tuple[ConfigDocument, ...]
    configmaps: tuple[tuple[str, str | None, str], ...]  # (name, namespace, file)
    claims: tuple[tuple[str, str], ...]  # (PersistentVolumeClaim, access modes)

    def __init__(self, processes: tuple[Process, ...] = (), services: tuple[Service, ...] = (),
                 documents: tuple[ConfigDocument, ...] = (),
                 configmaps: tuple[tuple[str, str | None, str], ...] = (),
                 claims: tuple[tuple[str, str], ...] = ()) -> None:
        store(self, (processes, services, documents, configmaps, claims))


class Deployment(Record):
    """Everything the deployment files of one lint run describe."""

    _fields = ("processes", "services", "documents", "files", "skipped", "configmaps")
    processes: tuple[Process, ...]
    services: tuple[Service, ...]
    documents: tuple[ConfigDocument, ...]  # Flink configurations inside deployment files
    files: tuple[str, ...]  # deployment files read
    # (file, why, line) deployment files that could not be read (line: where reading stopped, if known)
    skipped: tuple[tuple[str, str, int | None], ...]
    configmaps: tuple[tuple[str, str | None, str], ...]  # (name, namespace, file)

    def __init__(self, processes: tuple[Process, ...] = (), services: tuple[Service, ...] = (),
                 documents: tuple[ConfigDocument, ...] = (), files: tuple[str, ...] = (),
                 skipped: tuple[tuple[str, str, int | None], ...] = (),
                 configmaps: tuple[tuple[str, str | None, str], ...] = ()) -> None:
        store(self, (processes, services, documents, files, skipped, configmaps))

    @property
    def seen(self) -> bool:
        return bool(self.processes)
