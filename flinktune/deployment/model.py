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

from dataclasses import dataclass, field

from flinktune.config.types import ConfigDocument

# Where the official image keeps its configuration and jars (apache/flink-docker, Dockerfile templates:
# FLINK_HOME=/opt/flink).
FLINK_HOME = "/opt/flink"
CONF_DIR = FLINK_HOME + "/conf"
CONF_FILE_NAMES = ("flink-conf.yaml", "config.yaml")

JOBMANAGER = "jobmanager"
TASKMANAGER = "taskmanager"


@dataclass(frozen=True)
class Where:
    """A file and line a deployment value came from."""

    file: str
    line: int | None = None
    note: str = ""          # what is there, in words ("volume flink-checkpoints mounted at /flink")

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "note": self.note}


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str | None       # None: from a Secret/ConfigMap/field reference the files do not resolve
    where: Where
    # For FLINK_PROPERTIES: the manifest line of the value's first line when the value is a block, so
    # that the lines of the overlay document point into the file.
    first_line: int | None = None


@dataclass(frozen=True)
class Mount:
    """A volume, bind mount or baked file at ``path`` inside a container."""

    path: str               # path inside the container (no trailing slash)
    # bind | volume | tmpfs | emptyDir | pvc | configmap | secret | hostPath | image | anonymous
    kind: str
    source: str             # host path, volume / claim / ConfigMap name, or the Dockerfile
    shared_key: str | None  # equal keys: the same storage; None: private to this container (emptyDir, tmpfs)
    read_only: bool
    where: Where
    access: str = ""        # PVC access modes (ReadWriteMany ...), when known
    items: tuple[tuple[str, str], ...] = ()   # ConfigMap items: (key, path) pairs; empty: every key
    sub_path: str | None = None


@dataclass(frozen=True)
class Jar:
    """A jar the image or a mount puts into Flink's lib/ or plugins/ (or opt/)."""

    name: str
    folder: str             # lib | plugins/<dir> | opt | other
    where: Where
    source: str | None = None   # the path in the image it was copied from (cp /opt/flink/opt/x.jar ...)


@dataclass(frozen=True)
class ConfigSource:
    """How a process gets a configuration file: a mounted or baked file, or a ConfigMap."""

    host_path: str | None   # absolute path of the file on disk (compose bind, Dockerfile COPY), if any
    configmap: str | None   # ConfigMap name (Kubernetes), if any
    key: str | None         # ConfigMap data key or the file's name inside the conf folder
    container_path: str     # where the process sees it
    how: str                # bind-file | bind-dir | configmap | baked | operator | unknown
    writable: bool          # the image's entrypoint can rewrite it in place
    where: Where


@dataclass(frozen=True)
class Process:
    """One JobManager or TaskManager container (a compose service, a workload's container, the
    operator's JobManager/TaskManager pods)."""

    name: str
    role: str | None                    # jobmanager | taskmanager | None (not a Flink process we know)
    platform: str                       # compose | kubernetes | operator
    where: Where
    group: str                          # processes of one cluster share it (compose file, manifest folder)
    image: str | None = None
    image_where: Where | None = None
    flink_version: str | None = None    # "1.18" (major.minor) from the image tag or its Dockerfile
    flink_patch: str | None = None      # "1.18.1" when the tag pins it
    version_source: str = ""            # "image flink:1.18 (docker-compose.yml:30)"
    jdk: int | None = None
    image_moving: bool = False          # tagged latest / untagged
    official: bool = False              # runs the official image's entrypoint (docker-entrypoint.sh)
    image_official: bool = False        # the official Flink image, or an image built FROM it
    command: tuple[str, ...] = ()       # the arguments the entrypoint gets (compose command, k8s args)
    command_where: Where | None = None
    dynamic: tuple[tuple[str, str, Where], ...] = ()    # -Dkey=value in the command
    env: tuple[EnvVar, ...] = ()
    mounts: tuple[Mount, ...] = ()
    config: tuple[ConfigSource, ...] = ()
    jars: tuple[Jar, ...] = ()
    memory_limit_bytes: int | None = None
    memory_limit_where: Where | None = None
    replicas: int = 1
    replicas_where: Where | None = None
    replicas_known: bool = True         # False: templated or scaled at run time
    hostnames: tuple[str, ...] = ()     # names other containers reach it by (compose service, aliases)
    networks: tuple[str, ...] = ()      # compose networks ("host": network_mode host)
    labels: tuple[tuple[str, str], ...] = ()    # Kubernetes pod labels (for Service selectors)
    namespace: str | None = None
    dockerfile: str | None = None       # the Dockerfile it is built from, when known
    dockerfile_assumed: bool = False    # linked by being the only Flink Dockerfile beside the manifest
    entrypoint_overridden: bool = False
    # A Flink script the image or the container runs as its entrypoint instead of docker-entrypoint.sh
    # (ENTRYPOINT ["/opt/flink/bin/jobmanager.sh", "start-foreground"]): the arguments go to it.
    entrypoint: tuple[str, ...] = ()
    entrypoint_where: Where | None = None
    # The role the container's arguments or names ask for when that entrypoint runs the other one.
    intended_role: str | None = None

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


@dataclass(frozen=True)
class Service:
    """A Kubernetes Service: what a host name such as ``flink-jobmanager`` resolves to."""

    name: str
    namespace: str | None
    selector: tuple[tuple[str, str], ...]
    ports: tuple[int, ...]
    where: Where
    headless: bool = False


@dataclass(frozen=True)
class Found:
    """What one deployment file holds (what a reader returns)."""

    processes: tuple[Process, ...] = ()
    services: tuple[Service, ...] = ()
    documents: tuple[ConfigDocument, ...] = ()
    configmaps: tuple[tuple[str, str | None, str], ...] = ()    # (name, namespace, file)
    claims: tuple[tuple[str, str], ...] = ()                    # (PersistentVolumeClaim, access modes)


@dataclass(frozen=True)
class Deployment:
    """Everything the deployment files of one lint run describe."""

    processes: tuple[Process, ...] = ()
    services: tuple[Service, ...] = ()
    documents: tuple[ConfigDocument, ...] = ()   # Flink configurations inside deployment files
    files: tuple[str, ...] = ()                  # deployment files read
    # (file, why, line) deployment files that could not be read (line: where reading stopped, if known)
    skipped: tuple[tuple[str, str, int | None], ...] = ()
    configmaps: tuple[tuple[str, str | None, str], ...] = field(default=())   # (name, namespace, file)

    @property
    def seen(self) -> bool:
        return bool(self.processes)
