"""Read a Helm chart: render its templates with the chart's own ``values.yaml`` well enough to read
the manifests, and find Flink configurations in values files.

The rendering is deliberately small (no Go template engine): ``{{ .Values.a.b }}`` with the ``default``,
``quote``, ``toYaml``, ``indent`` and ``nindent`` functions is filled in from values.yaml; control lines
(``if``/``else``/``end``/``range``/``with``, variable assignments, comments) are dropped, so both branches
of a conditional are read; anything else becomes ``<helm:...>`` and is treated as unknown. Each rendered
line keeps the template line it came from, so findings point into the template.

Flink configurations in values files: a ``flinkConfiguration`` (Ververica Platform, charts around the
Kubernetes operator) or ``flinkProperties`` mapping anywhere in the values, also inside a string value
that holds YAML (``globalDeploymentDefaults: |``).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from flinktune.config.types import HELM_TEMPLATE, HELM_VALUES, ConfigDocument, ConfigFormat
from flinktune.deployment.model import Found
from flinktune.errors import FlinktuneError
from flinktune.versions import OLDER_THAN_SUPPORTED, SUPPORTED

if TYPE_CHECKING:
    from flinktune.deployment.nodes import View
    from flinktune.deployment.readers import ReadContext

_EXPR = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.DOTALL)
_CONTROL = re.compile(r"^\s*(?:if|else|end|range|with|define|block|/\*|\$[A-Za-z_][A-Za-z0-9_]*\s*:?=)")
_CONFIG_KEYS = ("flinkConfiguration", "flinkProperties")


def _lookup(values: Any, path: str) -> Any:
    current = values
    for part in path.split("."):
        if not part:
            continue
        if isinstance(current, dict) and part in current:
            current = current[part]
        else:
            return None
    return current


def _literal(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1]
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    return text


def _to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        import yaml

        return yaml.safe_dump(value, default_flow_style=False, sort_keys=False).rstrip("\n")
    return str(value)


def _evaluate(expression: str, values: Any) -> str | None:
    """The text an action renders to, or None when this small renderer cannot tell."""
    stages = [stage.strip() for stage in expression.split("|")]
    head = stages[0].split()
    value: Any = None
    to_yaml = False
    if head and head[0] == "toYaml" and len(head) == 2 and head[1].startswith(".Values"):
        value, to_yaml = _lookup(values, head[1][len(".Values"):]), True
    elif len(head) == 1 and head[0].startswith(".Values"):
        value = _lookup(values, head[0][len(".Values"):])
    elif len(head) == 3 and head[0] == "default" and head[2].startswith(".Values"):
        value = _lookup(values, head[2][len(".Values"):])
        if value in (None, ""):
            value = _literal(head[1])
    else:
        return None
    text = _to_text(value)
    for stage in stages[1:]:
        words = stage.split(None, 1)
        if not words:
            continue
        if words[0] == "default" and len(words) == 2:
            if value in (None, "", {}, []):
                value = _literal(words[1])
                text = _to_text(value)
        elif words[0] == "quote":
            text = '"' + text.replace('"', '\\"') + '"'
        elif words[0] in ("indent", "nindent") and len(words) == 2 and words[1].isdigit():
            pad = " " * int(words[1])
            text = "\n".join(pad + line for line in text.splitlines())
            if words[0] == "nindent":
                text = "\n" + text
        elif words[0] == "toYaml":
            to_yaml = True
        elif words[0] in ("trim", "toString", "lower", "upper", "int", "int64"):
            text = {"lower": text.lower(), "upper": text.upper(), "trim": text.strip()}.get(words[0], text)
        else:
            return None
    del to_yaml
    if value is None:
        return None     # not in values.yaml and no default: unknown
    return text


def render(template: str, values: Any) -> tuple[str, tuple[int, ...]]:
    """(rendered text, template line of every rendered line)."""
    # Multi-line comments {{/* ... */}} first (keep their line count out of the output).
    out_lines: list[str] = []
    line_map: list[int] = []
    in_comment = False
    for number, line in enumerate(template.splitlines(), start=1):
        if in_comment:
            if "*/" in line:
                in_comment = False
            continue
        stripped = line.strip()
        if re.match(r"^\{\{-?\s*/\*", stripped) and "*/" not in stripped:
            in_comment = True
            continue
        actions = list(_EXPR.finditer(line))
        if actions and not _EXPR.sub("", line).strip() and all(_CONTROL.match(a.group(1)) for a in actions):
            continue    # a line of control actions only
        rendered = line

        def fill(match: re.Match[str]) -> str:
            inner = match.group(1)
            if _CONTROL.match(inner):
                return ""
            text = _evaluate(inner, values)
            return f"<helm:{inner.strip()}>" if text is None else text

        rendered = _EXPR.sub(fill, line)
        for part in rendered.split("\n"):
            out_lines.append(part)
            line_map.append(number)
    return "\n".join(out_lines) + "\n", tuple(line_map)


def load_values(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return {}


def safe_compose(text: str, file: str, first_line: int) -> list[Any]:
    """The YAML documents of ``text``, or none when it is not YAML (a template, a broken file)."""
    from flinktune.config.yaml_config import compose_documents
    from flinktune.errors import ConfigError

    try:
        return compose_documents(text, file=file, first_line=first_line)
    except ConfigError:
        return []


def values_documents(text: str, file: str) -> list[ConfigDocument]:
    """Flink configurations held in a values file (see the module docstring)."""
    from yaml.nodes import MappingNode, ScalarNode

    from flinktune.config.yaml_config import flatten_tree, tree_entries

    documents: list[ConfigDocument] = []

    def walk(node: Any, source: str, first_line: int, depth: int) -> None:
        if depth > 30:
            return
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, ScalarNode) and key.value in _CONFIG_KEYS and isinstance(value,
                                                                                            MappingNode):
                    tree = flatten_tree(value, file=file, first_line=first_line)
                    entries, issues = tree_entries(tree, source, file=file, first_line=first_line)
                    documents.append(ConfigDocument(path=file, format=ConfigFormat.YAML, entries=entries,
                                                    issues=issues, name=key.value, origin=HELM_VALUES))
                else:
                    walk(value, source, first_line, depth + 1)
        elif isinstance(node, ScalarNode) and node.style in ("|", ">") and any(
                key in node.value for key in _CONFIG_KEYS):
            inner_first = node.start_mark.line + 2 + first_line - 1
            for root in safe_compose(node.value, file, inner_first):
                walk(root, node.value, inner_first, depth + 1)
        elif hasattr(node, "value") and isinstance(node.value, list):
            for item in node.value:
                if not isinstance(item, tuple):
                    walk(item, source, first_line, depth + 1)

    roots = safe_compose(text, file, 1)
    for root in roots:
        walk(root, text, 1, 0)
    hint = _image_hint(roots, file)
    if hint is None:
        return documents
    from flinktune.record import replace

    version, source, jdk = hint
    return [replace(d, version_hint=version, version_hint_source=source, jdk_hint=jdk) for d in documents]


def _image_hint(roots: list[Any], file: str) -> tuple[str, str, int | None] | None:
    """(version, source, JDK) from the chart's top-level ``image`` (``repository`` and ``tag``, the usual
    Helm convention) when it names an official Flink image: the image the chart's Flink runs, and so the
    version its flinkConfiguration is for. Versions before 1.13 are judged as 1.13, the oldest flinktune
    knows."""
    from yaml.nodes import MappingNode, ScalarNode

    from flinktune.deployment.images import parse_image

    for root in roots:
        if not isinstance(root, MappingNode):
            continue
        for key, value in root.value:
            if not (isinstance(key, ScalarNode) and key.value == "image" and isinstance(value, MappingNode)):
                continue
            fields = {k.value: v.value for k, v in value.value
                      if isinstance(k, ScalarNode) and isinstance(v, ScalarNode)}
            repository, tag = fields.get("repository"), fields.get("tag")
            if not repository or not tag:
                return None
            reference = f"{repository}:{tag}"
            if fields.get("registry"):
                reference = f"{fields['registry']}/{reference}"
            ref = parse_image(reference)
            if ref is None or not ref.official or ref.version is None:
                return None
            source = f"image {reference} ({file}:{key.start_mark.line + 1})"
            major, minor = (int(part) for part in ref.version.split(".")[:2])
            oldest = SUPPORTED[0]
            if (major, minor) < (oldest.major, oldest.minor):
                return str(oldest), f"{source}, {OLDER_THAN_SUPPORTED}", ref.jdk
            return ref.version, source, ref.jdk
    return None


def _chart_values(template: str) -> Any:
    """The values.yaml of the chart a template belongs to (empty when there is none)."""
    from flinktune.config.textio import read_text_file

    chart = template.replace(os.sep, "/").rsplit("/templates/", 1)[0]
    values_path = os.path.join(chart, "values.yaml")
    return load_values(read_text_file(values_path).text) if os.path.isfile(values_path) else {}


def _views(text: str, path: str, line_map: tuple[int, ...]) -> list[View]:
    """The YAML documents of a rendered template; a document that does not parse (rendering failed
    there) is left out without losing the others."""
    from flinktune.deployment.nodes import View

    views: list[View] = []
    start, current = 0, []
    chunks: list[tuple[int, str]] = []
    for index, line in enumerate(text.split("\n")):
        if line.strip() == "---":
            chunks.append((start, "\n".join(current)))
            start, current = index + 1, []
        else:
            current.append(line)
    chunks.append((start, "\n".join(current)))
    for offset, chunk in chunks:
        if chunk.strip():
            views.extend(View(node, line_map[offset:]) for node in safe_compose(chunk, path, 1))
    return views


def _template_documents(path: str, rendered: str, line_map: tuple[int, ...]) -> list[ConfigDocument]:
    """The ConfigMaps and FlinkDeployments of a rendered template as configuration documents, every line
    pointing back into the template; options whose value the small renderer could not fill in
    (``<helm:...>``) are left out rather than judged."""
    from flinktune.config.k8s import read_manifest_text
    from flinktune.record import replace

    if "kind: ConfigMap" not in rendered and "FlinkDeployment" not in rendered:
        return []

    def back(line: int) -> int:
        return line_map[line - 1] if 0 < line <= len(line_map) else line

    try:
        found = read_manifest_text(rendered, path)
    except FlinktuneError:
        return []
    out = []
    for document in found:
        entries = tuple(replace(e, line=back(e.line)) for e in document.entries if "<helm:" not in e.raw)
        issues = tuple(replace(i, line=back(i.line)) for i in document.issues)
        out.append(replace(document, entries=entries, issues=issues, origin=HELM_TEMPLATE))
    return out


def read(path: str, text: str, context: ReadContext) -> Found:
    """The reader of ``readers.READERS``: a values file holds Flink configurations; a template is
    rendered with its chart's values and read as Kubernetes manifests."""
    from flinktune.deployment.kubernetes import read_views
    from flinktune.record import replace

    if "/templates/" not in path.replace(os.sep, "/"):
        return Found(documents=tuple(values_documents(text, path)))
    rendered, line_map = render(text, _chart_values(path))
    found = read_views(path, _views(rendered, path, line_map), context)
    return replace(found, documents=found.documents + tuple(_template_documents(path, rendered, line_map)))
