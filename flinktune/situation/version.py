"""Which Flink version a document is read as, and why.

In order, the first that says wins:
1. ``--flink-version`` on the command line (or a profile's ``flink-version``) -> ``flag`` / ``profile``;
2. the file's ``# flinktune: flink-version=1.17`` directive -> ``comment``;
3. a FlinkDeployment's ``spec.flinkVersion`` (``v1_20``) or another version the reader found in
   the file -> ``file``;
4. ``flink-version`` in the project config -> ``project``;
5. inference from the content -> ``inferred``: the keys the file sets that only some supported
   versions read (introduced later, removed since: the option catalog knows) narrow the versions
   down; the one nearest the default wins. A standard-YAML ``config.yaml`` is read only by Flink
   1.19 and later, which narrows it the same way (source ``config.yaml`` when that is all);
6. ``flinktune.versions.DEFAULT_VERSION`` (1.20) -> ``default``.
Values are not used for inference (yet): keys alone already separate 1.x from 2.x files.
"""

from __future__ import annotations

import re

from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.errors import FlinktuneError
from flinktune.situation.sourced import Sourced
from flinktune.versions import DEFAULT_VERSION, SUPPORTED, FlinkVersion, parse_version

CONFIG_YAML_FIRST = FlinkVersion(1, 19)


def _parse(text: str | None) -> FlinkVersion | None:
    if not text:
        return None
    try:
        return parse_version(text)
    except FlinktuneError:
        # e.g. an unexpanded template placeholder such as ${FLINK_VERSION}: fall through.
        return None


def readable_versions(document: ConfigDocument, catalog: object | None = None) -> tuple[FlinkVersion, ...]:
    """The supported versions that read every version-specific key of ``document`` (all of them when
    no key is version-specific or the keys contradict each other)."""
    if catalog is None:
        from flinktune.config.catalog import load_catalog

        catalog = load_catalog()
    candidates = set(SUPPORTED)
    if document.format is ConfigFormat.YAML:
        candidates = {v for v in candidates if v >= CONFIG_YAML_FIRST}
    for key in dict.fromkeys(entry.key for entry in document.entries):   # file order: deterministic
        readers = set(catalog.versions_with(key)) & set(SUPPORTED)  # type: ignore[attr-defined]
        if not readers or len(readers) == len(SUPPORTED):
            continue       # unknown everywhere (a typo, a plugin) or read everywhere: says nothing
        narrowed = candidates & readers
        if narrowed:
            candidates = narrowed
    return tuple(sorted(candidates))


def _nearest_default(versions: tuple[FlinkVersion, ...]) -> FlinkVersion:
    if DEFAULT_VERSION in versions:
        return DEFAULT_VERSION
    below = [v for v in versions if v < DEFAULT_VERSION]
    return max(below) if below else min(versions)


def resolve_version(document: ConfigDocument, *, flag: FlinkVersion | None = None, flag_source: str = "flag",
                    directive: str | None = None, project: FlinkVersion | None = None,
                    catalog: object | None = None, infer: bool = True) -> Sourced[FlinkVersion]:
    """The version ``document`` is read as, with its source (see the module docstring)."""
    if flag is not None:
        detail = "--flink-version" if flag_source == "flag" else "flink-version"
        return Sourced(flag, flag_source, detail=detail)
    commented = _parse(directive)
    if commented is not None:
        return Sourced(commented, "comment", document.path, detail="# flinktune: flink-version")
    hinted = _parse(document.version_hint)
    if hinted is not None:
        return Sourced(hinted, "file", document.path,
                       detail="spec.flinkVersion" if document.format is ConfigFormat.DEPLOYMENT else "")
    if project is not None:
        return Sourced(project, "project", detail="flink-version")
    if infer:
        versions = readable_versions(document, catalog)
        if len(versions) < len(SUPPORTED):
            chosen = _nearest_default(versions)
            only_format = document.format is ConfigFormat.YAML and versions == tuple(
                v for v in SUPPORTED if v >= CONFIG_YAML_FIRST)
            if chosen != DEFAULT_VERSION or only_format:
                return Sourced(chosen, "config.yaml" if only_format else "inferred", document.path,
                               detail=f"keys read only by Flink {versions[0]}..{versions[-1]}"
                               if not only_format else "config.yaml is read by Flink 1.19+")
    elif document.format is ConfigFormat.YAML:
        return Sourced(max(DEFAULT_VERSION, CONFIG_YAML_FIRST), "config.yaml", document.path)
    return Sourced(DEFAULT_VERSION, "default")


def detect_version(document: ConfigDocument, *, flag: FlinkVersion | None = None,
                   directive: str | None = None, project: FlinkVersion | None = None
                   ) -> tuple[FlinkVersion, str]:
    """(version, source): the tuple form ``lint`` reports (``FileVersion.source``)."""
    found = resolve_version(document, flag=flag, directive=directive, project=project)
    return found.value, found.source


_VERSION_DIRECTIVE = re.compile(r"#.*?\bflinktune:\s*flink-version\s*=\s*(?P<value>[A-Za-z0-9_.]+)")


def version_directive(text: str) -> tuple[str, int] | None:
    """The file's last ``# flinktune: flink-version=X`` comment (value, line), as lint reads it."""
    if "flinktune:" not in text:
        return None
    found = None
    for number, line in enumerate(text.splitlines(), start=1):
        if "flinktune:" in line:
            match = _VERSION_DIRECTIVE.search(line)
            if match is not None:
                found = (match.group("value"), number)
    return found
