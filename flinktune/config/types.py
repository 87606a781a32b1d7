"""What the config readers produce: every key with its file and line."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

# A value as the file gives it: the legacy flat file only has strings; config.yaml and
# manifests give YAML-typed scalars, lists and maps.
ConfigValue = str | int | float | bool | None | list[object] | dict[str, object]


class ConfigFormat(StrEnum):
    FLAT = "flink-conf.yaml"          # legacy line format (GlobalConfiguration.loadLegacyYAMLResource)
    YAML = "config.yaml"              # standard YAML, Flink 1.19+ and 2.x
    DEPLOYMENT = "FlinkDeployment"    # spec.flinkConfiguration of a FlinkDeployment / FlinkSessionJob
    CONFIGMAP = "ConfigMap"           # a ConfigMap embedding flink-conf.yaml or config.yaml


@dataclass(frozen=True)
class ConfigEntry:
    key: str                 # the flattened, dotted key
    value: ConfigValue       # typed as Flink would see it before option conversion
    raw: str                 # the value text as written (for messages and byte-exact rewrites)
    file: str
    line: int                # 1-based line in ``file``


@dataclass(frozen=True)
class ConfigIssue:
    """Something the reader noticed that Flink would warn about or reject (not fatal to reading)."""

    kind: str                # duplicate-key | malformed-line | empty-value | nested-in-flat | ...
    message: str
    file: str
    line: int
    key: str | None = None


@dataclass(frozen=True)
class ConfigDocument:
    """One Flink configuration: a file, or one manifest inside a multi-document file."""

    path: str
    format: ConfigFormat
    entries: tuple[ConfigEntry, ...]
    issues: tuple[ConfigIssue, ...] = ()
    name: str | None = None                  # manifest metadata.name, when there is one
    version_hint: str | None = None          # e.g. FlinkDeployment spec.flinkVersion "v1_20"
    # For a ConfigMap: the format of the embedded file (FLAT for flink-conf.yaml, YAML for config.yaml).
    embedded: ConfigFormat | None = None
    # Where version_hint came from when not spec.flinkVersion ("image flink:1.18-java11"), and the
    # JDK major version the manifest's official Flink image tag names (-java11, -java17).
    version_hint_source: str | None = None
    jdk_hint: int | None = None
    # Where a configuration that is not a file of its own came from: "FLINK_PROPERTIES" (an environment
    # variable of a compose service or container, merged by the image's entrypoint into the image's
    # configuration), "helm values". None for config files and manifests.
    origin: str | None = None

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
