"""What the config readers produce: every key with its file and line."""

from __future__ import annotations

from enum import StrEnum

from flinktune.record import Record, store

# A value as the file gives it: the legacy flat file only has strings; config.yaml and
# manifests give YAML-typed scalars, lists and maps.
ConfigValue = str | int | float | bool | None | list[object] | dict[str, object]


class ConfigFormat(StrEnum):
    FLAT = "flink-conf.yaml"          # legacy line format (GlobalConfiguration.loadLegacyYAMLResource)
    YAML = "config.yaml"              # standard YAML, Flink 1.19+ and 2.x
    DEPLOYMENT = "FlinkDeployment"    # spec.flinkConfiguration of a FlinkDeployment / FlinkSessionJob
    CONFIGMAP = "ConfigMap"           # a ConfigMap embedding flink-conf.yaml or config.yaml


class ConfigEntry(Record):
    __slots__ = _fields = ("key", "value", "raw", "file", "line")
    key: str  # the flattened, dotted key
    value: ConfigValue  # typed as Flink would see it before option conversion
    raw: str  # the value text as written (for messages and byte-exact rewrites)
    file: str
    line: int  # 1-based line in ``file``

    def __init__(self, key: str, value: ConfigValue, raw: str, file: str, line: int) -> None:
        store(self, (key, value, raw, file, line))


class ConfigIssue(Record):
    """Something the reader noticed that Flink would warn about or reject (not fatal to reading)."""

    __slots__ = _fields = ("kind", "message", "file", "line", "key")
    kind: str  # duplicate-key | malformed-line | empty-value | nested-in-flat | ...
    message: str
    file: str
    line: int
    key: str | None

    def __init__(self, kind: str, message: str, file: str, line: int, key: str | None = None) -> None:
        store(self, (kind, message, file, line, key))


# ConfigDocument.origin of configurations that are not a file of their own.
FLINK_PROPERTIES = "FLINK_PROPERTIES"   # an environment variable the official image's entrypoint merges
HELM_VALUES = "helm values"             # a flinkConfiguration in a chart's or a platform's values
HELM_TEMPLATE = "helm template"         # a manifest rendered from a chart's template


class ConfigDocument(Record):
    """One Flink configuration: a file, or one manifest inside a multi-document file."""

    __slots__ = _fields = ("path", "format", "entries", "issues", "name", "version_hint", "embedded",
                           "version_hint_source", "jdk_hint", "origin")
    path: str
    format: ConfigFormat
    entries: tuple[ConfigEntry, ...]
    issues: tuple[ConfigIssue, ...]
    name: str | None  # manifest metadata.name, when there is one
    version_hint: str | None  # e.g. FlinkDeployment spec.flinkVersion "v1_20"
    # For a ConfigMap: the format of the embedded file (FLAT for flink-conf.yaml, YAML for config.yaml).
    embedded: ConfigFormat | None
    # Where version_hint came from when not spec.flinkVersion ("image flink:1.18-java11"), and the
    # JDK major version the manifest's official Flink image tag names (-java11, -java17).
    version_hint_source: str | None
    jdk_hint: int | None
    # Where a configuration that is not a file of its own came from: "FLINK_PROPERTIES" (an environment
    # variable of a compose service or container, merged by the image's entrypoint into the image's
    # configuration), "helm values". None for config files and manifests.
    origin: str | None

    def __init__(self, path: str, format: ConfigFormat, entries: tuple[ConfigEntry, ...],
                 issues: tuple[ConfigIssue, ...] = (), name: str | None = None,
                 version_hint: str | None = None, embedded: ConfigFormat | None = None,
                 version_hint_source: str | None = None, jdk_hint: int | None = None,
                 origin: str | None = None) -> None:
        store(self, (path, format, entries, issues, name, version_hint, embedded, version_hint_source,
                     jdk_hint, origin))

    @property
    def is_flink_file(self) -> bool:
        """Whether Flink reads this document as the file it is, so that its format limits the versions
        that read it. A FLINK_PROPERTIES overlay is merged by the image's entrypoint into whichever file
        the image's Flink reads, and a Helm values flinkConfiguration is written out by its chart or
        platform the same way: their YAML or flat form says nothing about the version."""
        return self.origin not in (FLINK_PROPERTIES, HELM_VALUES)

    def get(self, key: str) -> ConfigEntry | None:
        """The effective entry for ``key``: the last one wins, as in Flink."""
        found = None
        for entry in self.entries:
            if entry.key == key:
                found = entry
        return found

    def values(self) -> dict[str, ConfigValue]:
        """Effective key -> value map (last occurrence wins)."""
        return {entry.key: entry.value for entry in self.entries}
