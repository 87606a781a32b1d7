"""Which Flink version a document is checked against.

In order, the first that says wins:
1. ``--flink-version`` on the command line;
2. the file itself: a FlinkDeployment's ``spec.flinkVersion`` (``v1_20``) or another version the
   reader found in the file, else a ``# flinktune: flink-version=1.17`` comment;
3. ``flink-version`` in the project config;
4. the format: a standard-YAML ``config.yaml`` is read only by Flink 1.19 and later, so it is
   checked against the default version if that is 1.19+, else against 1.19;
5. ``flinktune.versions.DEFAULT_VERSION`` (1.20).
"""

from __future__ import annotations

from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.errors import FlinktuneError
from flinktune.versions import DEFAULT_VERSION, FlinkVersion, parse_version

_CONFIG_YAML_FIRST = FlinkVersion(1, 19)


def _parse(text: str | None) -> FlinkVersion | None:
    if not text:
        return None
    try:
        return parse_version(text)
    except FlinktuneError:
        # e.g. an unexpanded template placeholder such as ${FLINK_VERSION}: fall through.
        return None


def detect_version(
    document: ConfigDocument,
    *,
    flag: FlinkVersion | None = None,
    directive: str | None = None,
    project: FlinkVersion | None = None,
) -> tuple[FlinkVersion, str]:
    """(version, where it came from: flag | file | comment | project | config.yaml | default)."""
    if flag is not None:
        return flag, "flag"
    hinted = _parse(document.version_hint)
    if hinted is not None:
        return hinted, "file"
    commented = _parse(directive)
    if commented is not None:
        return commented, "comment"
    if project is not None:
        return project, "project"
    if document.format == ConfigFormat.YAML:
        return max(DEFAULT_VERSION, _CONFIG_YAML_FIRST), "config.yaml"
    return DEFAULT_VERSION, "default"
