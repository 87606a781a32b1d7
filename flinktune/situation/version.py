"""Which Flink version a document is read as, and why.

In order, the first that says wins:
1. ``--flink-version`` on the command line (or a profile's ``flink-version``) -> ``flag`` / ``profile``;
2. the file's ``# flinktune: flink-version=1.17`` directive -> ``comment``;
3. a FlinkDeployment's ``spec.flinkVersion`` (``v1_20``) or another version the reader found in
   the file -> ``file``;
4. ``flink-version`` in the project config -> ``project``;
5. a version the file's comments name (``# settings for Flink 1.18``: ``mentioned_versions``), when
   they name one only and the content fits it -> ``inferred``;
6. inference from the content -> ``inferred`` (``infer_versions``): the file format (flat
   flink-conf.yaml: never 2.x; config.yaml: 1.19+), values only some versions accept, the versions
   that read most of the file's version-specific keys, and among those the ones in which none of its
   keys was deprecated yet (when the file sets no successor key); the newest left that is not newer
   than the default wins. Source ``config.yaml`` when the format alone narrowed it;
7. ``flinktune.versions.DEFAULT_VERSION`` (1.20) -> ``default``.
"""

from __future__ import annotations

import re

from flinktune.config.types import ConfigDocument, ConfigFormat
from flinktune.errors import FlinktuneError
from flinktune.record import Record, set_field
from flinktune.releases import CONFIG_YAML, LEGACY_STATE_BACKEND_NAMES, ONLY_CONFIG_YAML
from flinktune.situation.sourced import Sourced
from flinktune.versions import DEFAULT_VERSION, SUPPORTED, FlinkVersion, parse_version


def _parse(text: str | None) -> FlinkVersion | None:
    if not text:
        return None
    try:
        return parse_version(text)
    except FlinktuneError:
        # e.g. an unexpanded template placeholder such as ${FLINK_VERSION}: fall through.
        return None


# StateBackendLoader: 'jobmanager' and 'filesystem' are the pre-1.13 names (@Deprecated in 1.13-1.20);
# Flink 2.0's loader knows only hashmap, rocksdb and forst.
_LEGACY_STATE_BACKENDS = frozenset({"jobmanager", "filesystem"})
_STATE_BACKEND_KEYS = ("state.backend", "state.backend.type")


class Inference(Record):
    """The versions the content of a file fits and the evidence (a Record: lint imports this)."""

    __slots__ = _fields = ("versions", "chosen", "evidence")
    versions: tuple[FlinkVersion, ...]      # sorted
    chosen: FlinkVersion                    # the one the file is read as
    evidence: tuple[str, ...]               # short phrases: "flink-conf.yaml", "keys a, b", ...

    def __init__(self, versions: tuple[FlinkVersion, ...], chosen: FlinkVersion,
                 evidence: tuple[str, ...]) -> None:
        set_field(self, "versions", versions)
        set_field(self, "chosen", chosen)
        set_field(self, "evidence", evidence)

    def describe(self) -> str:
        span = (f"Flink {self.versions[0]}" if len(self.versions) == 1
                else f"Flink {self.versions[0]}-{self.versions[-1]}")
        return f"{span} from {'; '.join(self.evidence)}" if self.evidence else span


def _format_versions(document: ConfigDocument) -> tuple[tuple[FlinkVersion, ...], str]:
    """The versions that read the document's file format at all (GlobalConfiguration: up to 1.18
    only flink-conf.yaml; 1.19-1.20 either; 2.0+ only config.yaml - FLINK-33577, FLINK-33677). Every
    version for a configuration that is not itself the file Flink reads (``is_flink_file``)."""
    if not document.is_flink_file:
        return SUPPORTED, ""
    fmt = document.format
    if fmt is ConfigFormat.CONFIGMAP:
        fmt = document.embedded or fmt
    if fmt is ConfigFormat.FLAT:
        return tuple(v for v in SUPPORTED if not ONLY_CONFIG_YAML.applies(v)), "flink-conf.yaml"
    if fmt is ConfigFormat.YAML:
        return tuple(v for v in SUPPORTED if CONFIG_YAML.applies(v)), "config.yaml"
    return SUPPORTED, ""


def _keys(what: str, keys: list[str]) -> str:
    return f"{what} {', '.join(keys[:2])}{', ...' if len(keys) > 2 else ''}"


def infer_versions(document: ConfigDocument, catalog: object | None = None) -> Inference:
    """Which supported versions the content fits, from Flink's facts alone (deterministic: file
    order and sorted versions, no set iteration decides anything):

    1. the file format (a flat flink-conf.yaml is never read by 2.x; config.yaml only by 1.19+);
    2. values only some versions accept (state.backend: filesystem / jobmanager: 1.x only);
    3. the versions that read the most of the file's version-specific keys (catalog since/removed);
    4. among those, the ones in which the fewest of the file's keys were already deprecated while
       the file sets none of their successors: a file written before a deprecation does not know it.
    The chosen version is the newest of what is left that is not newer than the default."""
    if catalog is None:
        from flinktune.config.catalog import load_catalog

        catalog = load_catalog()
    candidates, format_name = _format_versions(document)
    evidence: list[str] = [format_name] if format_name and len(candidates) < len(SUPPORTED) else []
    keys = tuple(dict.fromkeys(entry.key for entry in document.entries))   # file order
    present = set(keys)
    for entry in document.entries:
        value = str(entry.raw).strip().strip("'\"").lower()
        if entry.key in _STATE_BACKEND_KEYS and value in _LEGACY_STATE_BACKENDS:
            narrowed = tuple(v for v in candidates if not LEGACY_STATE_BACKEND_NAMES.applies(v))
            if narrowed and narrowed != candidates:
                candidates = narrowed
                evidence.append(f"{entry.key}: {entry.raw.strip()}")
    # 3. most version-specific keys read
    readers: dict[str, frozenset[FlinkVersion]] = {}
    for key in keys:
        found = frozenset(catalog.versions_with(key)).intersection(SUPPORTED)  # type: ignore[attr-defined]
        if found and len(found) < len(SUPPORTED):
            readers[key] = found
    if readers:
        score = {v: sum(1 for found in readers.values() if v in found) for v in candidates}
        best = max(score.values())
        if best:
            kept = tuple(v for v in candidates if score[v] == best)
            telling = [k for k, found in readers.items() if not set(candidates) <= found and
                       all(v in found for v in kept)]
            if kept != candidates:
                candidates = kept
                if telling:
                    evidence.append(_keys("keys", telling))
    # 4. fewest keys already deprecated (without their successor in the file)
    deprecated_since: dict[str, FlinkVersion] = {}
    for key in keys:
        since, successors = catalog.deprecation(key)  # type: ignore[attr-defined]
        if since is not None and not any(s in present for s in successors):
            deprecated_since[key] = since
    ancient = [k for k, since in deprecated_since.items() if since <= SUPPORTED[0]]
    if ancient:
        # Only a file that already uses keys deprecated before the oldest supported version (the
        # pre-1.10 heap / buffer / akka keys) shows it was written for an old Flink; a 1.17- or 1.20-
        # era deprecation alone is as likely a 1.20 file that kept an old key.
        stale = {v: sum(1 for since in deprecated_since.values() if since <= v) for v in candidates}
        fewest = min(stale.values())
        kept = tuple(v for v in candidates if stale[v] == fewest)
        if kept != candidates:
            later = [k for k, since in deprecated_since.items() if kept[-1] < since <= candidates[-1]]
            candidates = kept
            evidence.append(_keys("legacy keys", ancient))
            if later:
                evidence.append(_keys(f"keys deprecated after {kept[-1]}", later))
    return Inference(candidates, _nearest_default(candidates), tuple(evidence))


def readable_versions(document: ConfigDocument, catalog: object | None = None) -> tuple[FlinkVersion, ...]:
    """The supported versions the content of ``document`` fits (see ``infer_versions``)."""
    return infer_versions(document, catalog).versions


def _nearest_default(versions: tuple[FlinkVersion, ...]) -> FlinkVersion:
    if DEFAULT_VERSION in versions:
        return DEFAULT_VERSION
    below = [v for v in versions if v < DEFAULT_VERSION]
    return max(below) if below else min(versions)


# "Flink 1.18", "flink-1.17.2", "Flink v1.20" inside a comment.
_MENTION = re.compile(r"\bflink[\s:_-]*v?(?P<version>\d+\.\d+)(?:\.\d+)?(?![\d.]*\d)", re.IGNORECASE)


def mentioned_versions(text: str) -> tuple[tuple[FlinkVersion, int], ...]:
    """The supported Flink versions the text's comments name, with the line of the first mention
    (the ``# flinktune:`` directive aside): what the author wrote the file for, when they say so."""
    found: dict[FlinkVersion, int] = {}
    if "#" not in text:
        return ()
    for number, line in enumerate(text.splitlines(), start=1):
        hash_at = line.find("#")
        if hash_at < 0 or "flinktune:" in line:
            continue
        for match in _MENTION.finditer(line, hash_at):
            version = _parse(match.group("version"))
            if version is not None and version in SUPPORTED:
                found.setdefault(version, number)
    return tuple(found.items())


def resolve_version(document: ConfigDocument, *, flag: FlinkVersion | None = None, flag_source: str = "flag",
                    directive: str | None = None, project: FlinkVersion | None = None,
                    catalog: object | None = None, infer: bool = True,
                    mentioned: tuple[tuple[FlinkVersion, int], ...] = ()) -> Sourced[FlinkVersion]:
    """The version ``document`` is read as, with its source (see the module docstring);
    ``mentioned``: ``mentioned_versions`` of the file's text."""
    if flag is not None:
        detail = "--flink-version" if flag_source == "flag" else "flink-version"
        return Sourced(flag, flag_source, detail=detail)
    commented = _parse(directive)
    if commented is not None:
        return Sourced(commented, "comment", document.path, detail="# flinktune: flink-version")
    hinted = _parse(document.version_hint)
    if hinted is not None:
        detail = document.version_hint_source or (
            "spec.flinkVersion" if document.format is ConfigFormat.DEPLOYMENT else "")
        return Sourced(hinted, "file", document.path, detail=detail)
    if project is not None:
        return Sourced(project, "project", detail="flink-version")
    if infer:
        inference = infer_versions(document, catalog)
        if len(mentioned) == 1 and mentioned[0][0] in inference.versions:
            named, line = mentioned[0]
            return Sourced(named, "inferred", document.path, line,
                           detail=f"a comment names Flink {named} (line {line})")
        format_only = _format_versions(document)[0]
        if inference.chosen != _nearest_default(format_only):
            return Sourced(inference.chosen, "inferred", document.path, detail=inference.describe())
        if document.format is ConfigFormat.YAML and document.is_flink_file:
            return Sourced(inference.chosen, "config.yaml", document.path,
                           detail="config.yaml is read by Flink 1.19+")
    elif document.format is ConfigFormat.YAML and document.is_flink_file:
        return Sourced(max(DEFAULT_VERSION, CONFIG_YAML.since), "config.yaml", document.path)
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
