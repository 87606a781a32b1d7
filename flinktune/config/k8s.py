"""Flink configuration inside Kubernetes manifests.

- ``FlinkDeployment`` / ``FlinkSessionJob`` (Flink Kubernetes operator, ``flink.apache.org``):
  ``spec.flinkConfiguration`` is a map of option -> string; ``spec.flinkVersion`` (``v1_20``)
  becomes the document's ``version_hint``.
- ``ConfigMap``: ``data["flink-conf.yaml"]`` (legacy flat format) or ``data["config.yaml"]``
  (standard YAML) is parsed as that file; line numbers point into the manifest.
- The official Flink image a manifest runs (``image: flink:1.18-scala_2.12-java11``, also
  ``apache/flink:...`` and registry mirrors of either) names the Flink version and the JDK: a
  document without ``spec.flinkVersion`` takes the version from it (when every such image agrees),
  and the JDK tag tells which JVM options exist.

A file may hold several YAML documents (``---``); each Flink configuration found becomes one
``ConfigDocument``; other kinds (Namespace, Deployment, Service, ...) are skipped.
"""

from __future__ import annotations

import re

from yaml.nodes import MappingNode, Node, ScalarNode

from flinktune.config.flat import parse_flat_lines
from flinktune.config.textio import split_lines, strip_eol
from flinktune.config.types import ConfigDocument, ConfigFormat, ConfigIssue
from flinktune.config.yaml_config import (
    NULL_TAG,
    compose_documents,
    flatten_tree,
    mapping_get,
    node_line,
    read_yaml_text,
    tree_entries,
)
from flinktune.record import replace

FLINK_KINDS = ("FlinkDeployment", "FlinkSessionJob")
# The official image's tags (hub.docker.com/_/flink, apache/flink): X.Y[.Z][-scala_2.12][-javaNN].
# Only a repository named exactly "flink" counts: a job image (my-org/flink-job:1.0) or the operator
# (flink-kubernetes-operator:1.9.0) says nothing about the Flink version the job runs.
_FLINK_IMAGE = re.compile(
    r"^(?:[^\s/]+/)*flink:(?P<version>\d+\.\d+)(?:\.\d+)?(?:-scala_\d+\.\d+)?(?:-java(?P<jdk>\d+))?$")
# data keys of a ConfigMap that hold a Flink config file, and how Flink reads each.
EMBEDDED_FILES = {"flink-conf.yaml": ConfigFormat.FLAT, "config.yaml": ConfigFormat.YAML}


class ManifestTarget:
    """Where one Flink configuration sits in a manifest (shared by reader and writer)."""

    kind: str  # FlinkDeployment | FlinkSessionJob | ConfigMap
    name: str | None
    root: MappingNode
    spec_pair: tuple[Node, Node] | None  # spec key/value (deployments)
    conf_pair: tuple[Node, Node] | None  # flinkConfiguration key/value (deployments)
    version_hint: str | None
    data_key: str | None  # ConfigMap data key ("flink-conf.yaml")
    data_pair: tuple[Node, Node] | None  # ConfigMap data.<file> key/value
    version_hint_source: str | None  # "image flink:1.18" (None: spec.flinkVersion)
    jdk_hint: int | None

    def __init__(self, kind: str, name: str | None, root: MappingNode,
                 spec_pair: tuple[Node, Node] | None = None, conf_pair: tuple[Node, Node] | None = None,
                 version_hint: str | None = None, data_key: str | None = None,
                 data_pair: tuple[Node, Node] | None = None, version_hint_source: str | None = None,
                 jdk_hint: int | None = None) -> None:
        self.kind = kind
        self.name = name
        self.root = root
        self.spec_pair = spec_pair
        self.conf_pair = conf_pair
        self.version_hint = version_hint
        self.data_key = data_key
        self.data_pair = data_pair
        self.version_hint_source = version_hint_source
        self.jdk_hint = jdk_hint

    @property
    def format(self) -> ConfigFormat:
        return ConfigFormat.CONFIGMAP if self.kind == "ConfigMap" else ConfigFormat.DEPLOYMENT


def _scalar(node: Node | None) -> str | None:
    if isinstance(node, ScalarNode) and node.tag != NULL_TAG:
        return node.value
    return None


def is_manifest_root(node: Node) -> bool:
    return (isinstance(node, MappingNode) and mapping_get(node, "apiVersion") is not None
            and mapping_get(node, "kind") is not None)


def _images(node: Node) -> list[str]:
    """Every ``image:`` scalar anywhere below ``node`` (containers, podTemplates, spec.image)."""
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, MappingNode):
            for key, value in current.value:
                if _scalar(key) == "image" and _scalar(value):
                    found.append(str(_scalar(value)).strip())
                else:
                    stack.append(value)
        elif isinstance(current.value, list):
            stack.extend(item for item in current.value if isinstance(item, Node))
    return found


def image_hints(roots: list[Node]) -> tuple[str | None, str | None, int | None]:
    """(version, the image it came from, JDK) from the official Flink images the manifest runs; the
    version only when they all name the same one, the JDK likewise."""
    versions: dict[str, str] = {}
    jdks: set[int] = set()
    for root in roots:
        for image in _images(root):
            match = _FLINK_IMAGE.match(image)
            if match is None:
                continue
            versions.setdefault(match.group("version"), image)
            if match.group("jdk"):
                jdks.add(int(match.group("jdk")))
    version = next(iter(versions)) if len(versions) == 1 else None
    return version, versions.get(version) if version else None, next(iter(jdks)) if len(jdks) == 1 else None


def find_targets(roots: list[Node]) -> list[ManifestTarget]:
    """Every Flink configuration in the documents, in file order."""
    image_version, image, jdk = image_hints(roots)
    from_image = f"image {image}" if image else None
    targets: list[ManifestTarget] = []
    for root in roots:
        if not isinstance(root, MappingNode):
            continue
        kind_pair = mapping_get(root, "kind")
        kind = _scalar(kind_pair[1]) if kind_pair else None
        metadata = mapping_get(root, "metadata")
        name_pair = mapping_get(metadata[1], "name") if metadata else None
        name = _scalar(name_pair[1]) if name_pair else None
        if kind in FLINK_KINDS:
            spec = mapping_get(root, "spec")
            conf = mapping_get(spec[1], "flinkConfiguration") if spec else None
            version = mapping_get(spec[1], "flinkVersion") if spec else None
            stated = _scalar(version[1]) if version else None
            targets.append(ManifestTarget(kind=kind, name=name, root=root, spec_pair=spec, conf_pair=conf,
                                          version_hint=stated or image_version,
                                          version_hint_source=None if stated else from_image, jdk_hint=jdk))
        elif kind == "ConfigMap":
            data = mapping_get(root, "data")
            if data is None or not isinstance(data[1], MappingNode):
                continue
            for data_key in EMBEDDED_FILES:
                pair = mapping_get(data[1], data_key)
                if pair is not None:
                    targets.append(ManifestTarget(kind="ConfigMap", name=name, root=root,
                                                  data_key=data_key, data_pair=pair,
                                                  version_hint=image_version, version_hint_source=from_image,
                                                  jdk_hint=jdk))
    return targets


def embedded_first_line(value_node: ScalarNode) -> int | None:
    """1-based manifest line of the embedded text's first line, for literal block scalars only.

    A literal block (``|``) keeps every line break, so inner line i is manifest line first+i-1.
    Folded or quoted scalars fold lines, so no such mapping exists (None).
    """
    if value_node.style == "|":
        return value_node.start_mark.line + 2
    return None


def _read_deployment(target: ManifestTarget, text: str, file: str) -> ConfigDocument:
    issues: list[ConfigIssue] = []
    entries: tuple = ()
    if target.conf_pair is not None:
        conf_key, conf_value = target.conf_pair
        if isinstance(conf_value, MappingNode):
            tree = flatten_tree(conf_value, file=file)
            entries, tree_issues = tree_entries(tree, text, file=file)
            issues.extend(tree_issues)
        elif not (isinstance(conf_value, ScalarNode) and conf_value.tag == NULL_TAG):
            issues.append(ConfigIssue("malformed-manifest",
                                      "spec.flinkConfiguration is not a mapping of option: value",
                                      file, node_line(conf_key)))
    return ConfigDocument(path=file, format=ConfigFormat.DEPLOYMENT, entries=entries,
                          issues=tuple(issues), name=target.name, version_hint=target.version_hint,
                          version_hint_source=target.version_hint_source, jdk_hint=target.jdk_hint)


def _read_configmap(target: ManifestTarget, file: str) -> ConfigDocument:
    assert target.data_pair is not None and target.data_key is not None
    key_node, value_node = target.data_pair
    inner_format = EMBEDDED_FILES[target.data_key]
    key_line = node_line(key_node)
    if not isinstance(value_node, ScalarNode) or value_node.tag == NULL_TAG:
        issue = ConfigIssue("malformed-manifest", f"data.{target.data_key} is not a text block", file,
                            key_line)
        return ConfigDocument(path=file, format=ConfigFormat.CONFIGMAP, entries=(), issues=(issue,),
                              name=target.name, embedded=inner_format, version_hint=target.version_hint,
                              version_hint_source=target.version_hint_source, jdk_hint=target.jdk_hint)
    inner = value_node.value
    first = embedded_first_line(value_node)
    start = first if first is not None else key_line
    if inner_format is ConfigFormat.FLAT:
        entries, issues = parse_flat_lines((strip_eol(line) for line in split_lines(inner)), file,
                                           first_line=start)
    else:
        doc = read_yaml_text(inner, file, first_line=start, fmt=ConfigFormat.CONFIGMAP)
        entries, issues = doc.entries, doc.issues
    if first is None:
        # Folded or quoted text: point everything at the data key's line.
        entries = tuple(replace(e, line=key_line) for e in entries)
        issues = tuple(replace(i, line=key_line) for i in issues)
    return ConfigDocument(path=file, format=ConfigFormat.CONFIGMAP, entries=entries, issues=issues,
                          name=target.name, embedded=inner_format, version_hint=target.version_hint,
                          version_hint_source=target.version_hint_source, jdk_hint=target.jdk_hint)


# The targets of the last manifest composed: the situation (flinktune.situation.deployment) reads
# the operator's spec fields of the file the reader just parsed; one entry keeps memory bounded.
_LAST_MANIFEST: tuple[str, str, list[ManifestTarget]] | None = None


def manifest_targets(text: str, file: str) -> list[ManifestTarget]:
    """``find_targets(compose_documents(text))``, parsed once per manifest text (read-only nodes)."""
    global _LAST_MANIFEST
    last = _LAST_MANIFEST
    if last is not None and last[0] == file and last[1] == text:
        return last[2]
    targets = find_targets(compose_documents(text, file=file))
    _LAST_MANIFEST = (file, text, targets)
    return targets


def read_manifest_text(text: str, file: str) -> list[ConfigDocument]:
    """Every Flink configuration in a (multi-document) Kubernetes manifest; [] if it has none."""
    documents: list[ConfigDocument] = []
    for target in manifest_targets(text, file):
        if target.kind == "ConfigMap":
            documents.append(_read_configmap(target, file))
        else:
            documents.append(_read_deployment(target, text, file))
    return documents
