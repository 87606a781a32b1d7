"""What an image reference and a jar's file name say about the Flink version, and what the official
image brings with it.

Sources (see ../shared/reference/deployment-facts.md):

- Tags of the official image (hub.docker.com/_/flink, also published as apache/flink): apache/flink-docker,
  ``<version>/scala_2.12-javaNN-ubuntu/release.metadata`` on master: ``X.Y.Z-scala_2.12-javaNN``,
  ``X.Y-javaNN``, ``X.Y`` ...; the tags without ``-javaNN`` (and ``latest``) are the java11 images for
  1.20 and the java17 images for 2.x; ``latest`` follows the newest release (2.x since 2.0.0).
- Jar names: Flink's own modules are versioned with Flink (``flink-s3-fs-hadoop-1.17.1.jar``); the
  externalized connectors append the Flink minor they are built for (``flink-connector-jdbc-3.1.0-1.17.jar``,
  ``flink-sql-connector-kafka-3.3.0-1.20.jar``); Iceberg, Paimon and Hudi name it in the artifact
  (``iceberg-flink-runtime-1.17``, ``paimon-flink-1.17``, ``hudi-flink1.17-bundle``).
"""

from __future__ import annotations

import re

# Repositories of the official image: library/flink (Docker Hub) and apache/flink, also through a
# registry mirror (my.registry/flink, mirror.gcr.io/library/flink). A job image (my-org/flink-job) is not.
_OFFICIAL = re.compile(r"^(?:[^\s/]+/)*?(?:library/|apache/)?flink$")
_TAG = re.compile(r"^(?P<version>\d+\.\d+)(?P<patch>\.\d+)?(?:-scala_\d+\.\d+)?(?:-java(?P<jdk>\d+))?$")
_MOVING_TAG = re.compile(r"^(?:latest|scala_\d+\.\d+(?:-java\d+)?|java\d+)$")


class ImageRef:
    """An image reference split into repository and tag, with what the official image's tag says."""

    __slots__ = ("jdk", "moving", "official", "patch", "reference", "repository", "tag", "version")

    def __init__(self, reference: str) -> None:
        text = reference.strip().strip("\"'")
        self.reference = text
        base = text.split("@", 1)[0]
        repository, tag = base, None
        last = base.rsplit("/", 1)[-1]
        if ":" in last:
            repository, tag = base.rsplit(":", 1)
        self.repository = repository
        self.tag = tag
        self.official = bool(_OFFICIAL.match(repository.lower())) and "${" not in text and "{{" not in text
        self.version: str | None = None
        self.patch: str | None = None
        self.jdk: int | None = None
        self.moving = False
        if not self.official:
            return
        if tag is None or _MOVING_TAG.match(tag):
            self.moving = True
            java = re.search(r"java(\d+)", tag or "")
            self.jdk = int(java.group(1)) if java else None
            return
        match = _TAG.match(tag)
        if match is None:
            return
        self.version = match.group("version")
        self.patch = self.version + match.group("patch") if match.group("patch") else None
        self.jdk = int(match.group("jdk")) if match.group("jdk") else default_jdk(self.version)


def default_jdk(version: str | None) -> int | None:
    """The JDK of the official image tag without ``-javaNN``: 8 up to 1.14, 11 for 1.15-1.20, 17 for 2.x
    (release.metadata of each version folder in apache/flink-docker)."""
    if version is None:
        return None
    major, minor = (int(part) for part in version.split(".")[:2])
    if major >= 2:
        return 17
    return 11 if minor >= 15 else 8


def parse_image(reference: str | None) -> ImageRef | None:
    if not reference or not reference.strip():
        return None
    return ImageRef(reference)


# Jar names ------------------------------------------------------------------------------------------

# Flink's own modules released with Flink 2.x carry Flink's version too; only these names are taken as
# such for a 2.x version (connectors of other projects use 2.x/3.x versions of their own: mysql-cdc 2.4.1).
_CORE_MODULES = re.compile(
    r"^flink-(?:s3-fs-(?:hadoop|presto)|azure-fs-hadoop|gs-fs-hadoop|oss-fs-hadoop|metrics-[a-z]+|avro|json|csv"
    r"|parquet|orc|python|table-[a-z-]+|connector-files|connector-datagen|state-processor-api|cep|dist"
    r"|sql-avro|sql-parquet|sql-orc|sql-gateway|statebackend-[a-z]+|queryable-state-[a-z]+|runtime-web"
    r"|streaming-java|clients|core|runtime|hadoop-fs)(?:_2\.1[12])?$")
_FLINK_MODULE = re.compile(
    r"^(?P<name>flink-[a-z0-9-]+?(?:_2\.1[12])?)-(?P<v>\d+\.\d+)(?:\.\d+)?(?:-SNAPSHOT)?\.jar$")
_EXTERNALIZED = re.compile(r"^flink-[a-z0-9-]+-\d+\.\d+(?:\.\d+)?-(?P<v>\d+\.\d+)\.jar$")
_ECOSYSTEM = re.compile(
    r"^(?:iceberg-flink(?:-runtime)?-(?P<a>\d+\.\d+)-|paimon-flink-(?P<b>\d+\.\d+)-|hudi-flink(?P<c>\d+\.\d+)-"
    r"|flink-sql-connector-hive-[0-9.]+_2\.1[12]-(?P<d>\d+\.\d+))")


def jar_flink_version(name: str) -> str | None:
    """The Flink minor version a jar was built for, from its file name (null when the name does not say)."""
    base = name.rsplit("/", 1)[-1]
    if "shaded" in base or "cdc" in base:
        return None
    found = _EXTERNALIZED.match(base)
    if found:
        return found.group("v")
    found = _ECOSYSTEM.match(base)
    if found:
        return next(group for group in found.groups() if group)
    found = _FLINK_MODULE.match(base)
    if found:
        version = found.group("v")
        if version.startswith("1.") or _CORE_MODULES.match(found.group("name")):
            return version
    return None


# The filesystems Flink loads only as plugins (docs: deployment/filesystems/overview, "Pluggable File
# Systems": flink-s3-fs-hadoop/presto, azure, gs and oss "must be used as plugins").
_PLUGIN_ONLY = re.compile(r"^flink-(?:s3-fs-(?:hadoop|presto)|azure-fs-hadoop|gs-fs-hadoop|oss-fs-hadoop)-")


def plugin_only_jar(name: str) -> bool:
    return bool(_PLUGIN_ONLY.match(name.rsplit("/", 1)[-1]))


# What the official image's conf folder holds before any user file (apache/flink-docker Dockerfile
# templates, which edit the distribution's default flink-conf.yaml / config.yaml: rest.address,
# rest.bind-address, jobmanager.bind-host and taskmanager.bind-host -> 0.0.0.0, taskmanager.host removed;
# the distribution's defaults: process sizes 1600m / 1728m, one slot, parallelism 1 - checked in the
# 1.20.5 and 2.3.0 distributions). jobmanager.rpc.address is set by the entrypoint on every start.
IMAGE_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("jobmanager.rpc.port", "6123"),
    ("jobmanager.memory.process.size", "1600m"),
    ("taskmanager.memory.process.size", "1728m"),
    ("taskmanager.numberOfTaskSlots", "1"),
    ("parallelism.default", "1"),
    ("jobmanager.execution.failover-strategy", "region"),
    ("rest.address", "0.0.0.0"),
    ("rest.bind-address", "0.0.0.0"),
    ("jobmanager.bind-host", "0.0.0.0"),
    ("taskmanager.bind-host", "0.0.0.0"),
)
