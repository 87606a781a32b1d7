"""Editing a user's config in place: byte-preserving edits and an atomic file write.

``apply_changes`` is pure (text in, text out) and touches only the lines a change needs:
every other byte (comments, blank lines, trailing whitespace, order, line endings) stays.

- flink-conf.yaml: ``set`` replaces the value inside its line (a trailing comment stays) or
  appends ``key: value`` at the end of the file; ``delete`` removes every line of the key;
  ``rename`` rewrites the key in place on its effective line.
- config.yaml: ``set`` replaces the scalar in place (by the YAML node's character offsets);
  a new key goes into the deepest existing nested block whose path prefixes it, written with the
  rest of the key dotted (``taskmanager: memory: ...`` gets ``network.max: 1gb``), else it is
  appended at the end of the top-level mapping as a flat dotted key. ``delete`` removes the
  key's line(s), and a parent mapping it leaves empty.
- FlinkDeployment / FlinkSessionJob: the same inside ``spec.flinkConfiguration`` (created under
  ``spec`` when missing); values that YAML would not read as strings are quoted, because the
  operator expects string values. A field of the spec itself (a change with target ``spec``,
  e.g. ``spec.taskManager.resource.memory``) is set only where the manifest already has it.
- ConfigMap: the embedded flink-conf.yaml / config.yaml (a literal ``|`` block) is edited as its
  own format and put back with the block's indentation.

Every result is read back before it is returned: the edited keys must have their new values and
every other key its old one, or a ``WriteError`` is raised and nothing is written.

``write_file_atomic`` writes through a temporary file in the same directory, fsync and
``os.replace``, keeping a backup and the file mode.

Over 500 lines: byte-preserving edits for the three formats Flink reads (flat, config.yaml,
FlinkDeployment) share the line model and the atomic write.
"""

from __future__ import annotations

import contextlib
import difflib
import math
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

from flinktune.change import Applicability, Change
from flinktune.config.flat import FlatLine, parse_flat_line
from flinktune.config.k8s import EMBEDDED_FILES, ManifestTarget, find_targets
from flinktune.config.reader import read_config_text
from flinktune.config.textio import (
    dominant_eol,
    line_ending,
    read_text_file,
    split_lines,
    strip_eol,
)
from flinktune.config.types import ConfigDocument, ConfigFormat, ConfigValue
from flinktune.config.yaml_config import (
    NULL_TAG,
    FlinkYamlLoader,
    YamlTree,
    compose_documents,
    flatten_tree,
    resolve_plain,
)
from flinktune.errors import ConfigError, FlinktuneError, WriteError

_MANIFEST_FORMATS = (ConfigFormat.DEPLOYMENT, ConfigFormat.CONFIGMAP)


# ---------------------------------------------------------------------------------------------
# Entry point


def apply_changes(text: str, document: ConfigDocument, changes: Iterable[Change]) -> str:
    """``text`` with ``changes`` (flinktune.change) applied to ``document`` (which must have been read
    from ``text``). Which changes to apply is the caller's decision (``flinktune.change.writable``);
    a manual change here is a WriteError. A FlinkDeployment spec field (target ``spec``) is set in
    place (``set_spec_scalar``) before the Flink options are edited."""
    changes = list(changes)
    for change in changes:
        if change.applicability is Applicability.MANUAL:
            raise WriteError(f"{change.key}: a change to make by hand cannot be written", file=document.path)
        if change.target == "spec" and change.action != "set":
            raise WriteError(f"{change.key}: only setting an existing FlinkDeployment field is written; "
                             f"{change.action} it by hand", file=document.path)
    for change in changes:
        # First, while ``document`` still matches the text (a one-line scalar edit moves no line).
        if change.target == "spec":
            text = set_spec_scalar(text, document, change.spec_path, change.value or "")
    options = [change for change in changes if change.target == "config"]
    return _apply_options(text, document, options) if options else text


def _apply_options(text: str, document: ConfigDocument, edits: list[Change]) -> str:
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom):]
    fmt = ConfigFormat.DEPLOYMENT if document.format in _MANIFEST_FORMATS else document.format
    before = _read(body, document.path, fmt)
    index = _locate(before, document)
    result = body
    for edit in edits:
        result = _apply(result, fmt, index, edit, document.path)
    after = _read(result, document.path, fmt)
    _verify(before[index], after[index] if index < len(after) else None, edits, document.path)
    return bom + result


def _read(text: str, file: str, fmt: ConfigFormat) -> list[ConfigDocument]:
    try:
        return read_config_text(text, file, fmt)
    except ConfigError as exc:
        raise WriteError(f"cannot edit: {exc.message}", file=exc.file, line=exc.line) from exc


def _locate(docs: list[ConfigDocument], document: ConfigDocument) -> int:
    same_kind = [i for i, d in enumerate(docs)
                 if (d.format, d.name, d.embedded) == (document.format, document.name, document.embedded)]
    exact = [i for i in same_kind if docs[i].entries == document.entries]
    if exact:
        return exact[0]
    # Earlier edits to other documents of the same file may have moved lines: match on content.
    wanted = [(e.key, e.raw) for e in document.entries]
    moved = [i for i in same_kind if [(e.key, e.raw) for e in docs[i].entries] == wanted]
    if moved:
        return moved[0]
    if len(same_kind) == 1:
        raise WriteError("the file changed since it was read; read it again before editing",
                         file=document.path)
    raise WriteError("the configuration to edit was not found in the text", file=document.path)


def _apply(text: str, fmt: ConfigFormat, index: int, edit: Change, file: str) -> str:
    if fmt is ConfigFormat.DEPLOYMENT:
        target = _target(text, index, file)
        if target.kind == "ConfigMap":
            return _edit_configmap(text, target, edit, file)
    doc = _read(text, file, fmt)[index]
    if edit.action == "set":
        return _set(text, fmt, index, edit.key, edit.value or "", file)
    if edit.action == "delete":
        return _delete(text, fmt, index, edit.key, file) if doc.get(edit.key) else text
    new_key = edit.new_key or ""
    old = doc.get(edit.key)
    if doc.get(new_key) is not None or old is None:
        if old is not None:
            text = _delete(text, fmt, index, edit.key, file)
        if edit.value is not None:
            text = _set(text, fmt, index, new_key, edit.value, file)
        return text
    value = edit.value if edit.value is not None else _value_text(old.value, old.raw)
    renamed = _rename_in_place(text, fmt, index, edit.key, new_key, edit.value, file)
    if renamed is not None:
        text = renamed
        if _read(text, file, fmt)[index].get(edit.key) is not None:
            text = _delete(text, fmt, index, edit.key, file)   # earlier spellings of the old key
        return text
    if isinstance(old.value, list | dict) and edit.value is None:
        # Re-writing a YAML list elsewhere as a scalar would change its type.
        raise WriteError(f"'{edit.key}' holds a list and cannot be moved to '{new_key}' automatically; "
                         "rename it by hand", file=file, line=old.line)
    text = _delete(text, fmt, index, edit.key, file)
    return _set(text, fmt, index, new_key, value, file)


def _value_text(value: ConfigValue, raw: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return raw if isinstance(value, float) else str(value)
    return raw


def _matches(value: ConfigValue, text: str) -> bool:
    if isinstance(value, str):
        return value == text
    if isinstance(value, bool):
        return text.lower() == ("true" if value else "false")
    if isinstance(value, int | float):
        parsed = resolve_plain(text)
        if isinstance(parsed, float) and isinstance(value, float) and math.isnan(parsed):
            return math.isnan(value)
        return not isinstance(parsed, bool) and parsed == value
    return False


def _verify(before: ConfigDocument, after: ConfigDocument | None, edits: Sequence[Change], file: str) -> None:
    """The round-trip property: edited keys have their new values, every other key is unchanged."""
    if after is None:
        raise WriteError("internal: the edited text lost the configuration; nothing written", file=file)
    expected: dict[str, str | None] = {}
    moved: dict[str, ConfigValue] = {}        # renamed keys keep their value as it was
    touched: set[str] = set()
    for edit in edits:
        touched.add(edit.key)
        if edit.action == "set":
            expected[edit.key] = edit.value
        elif edit.action == "delete":
            expected[edit.key] = None
        else:
            new_key = edit.new_key or ""
            touched.add(new_key)
            expected[edit.key] = None
            if edit.value is not None:
                expected[new_key] = edit.value
            elif new_key not in expected:
                old = before.get(edit.key)
                if before.get(new_key) is None and old is not None:
                    moved[new_key] = old.value
                    touched.add(new_key)
    for key, old_value in moved.items():
        entry = after.get(key)
        if key not in expected and (entry is None or not _same_value(entry.value, old_value)):
            raise WriteError(f"internal: '{key}' did not keep the renamed key's value; nothing written",
                             file=file)
    old_values, new_values = before.values(), after.values()
    for key, want in expected.items():
        entry = after.get(key)
        if want is None:
            if entry is not None:
                raise WriteError(f"internal: '{key}' is still set after the edit; nothing written", file=file)
        elif entry is None or not _matches(entry.value, want):
            raise WriteError(f"internal: '{key}' does not read back as '{want}'; nothing written", file=file)
    for key in set(old_values) | set(new_values):
        if key in touched:
            continue
        if old_values.get(key, _MISSING) != new_values.get(key, _MISSING) and not _both_nan(
                old_values.get(key), new_values.get(key)):
            raise WriteError(f"internal: the edit would change '{key}' too; nothing written", file=file)


_MISSING = object()


def _same_value(a: ConfigValue, b: ConfigValue) -> bool:
    """Equal, or the same scalar text (a manifest may quote what was a bare number: 4 vs "4")."""
    if a == b or _both_nan(a, b):
        return True
    if isinstance(a, list | dict) or isinstance(b, list | dict):
        return False

    def text(v: ConfigValue) -> str:
        return ("true" if v else "false") if isinstance(v, bool) else str(v)

    return text(a) == text(b)


def _both_nan(a: object, b: object) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


# ---------------------------------------------------------------------------------------------
# Primitive operations, per format


def _set(text: str, fmt: ConfigFormat, index: int, key: str, value: str, file: str) -> str:
    if fmt is ConfigFormat.FLAT:
        return _flat_set(text, key, value)
    if fmt is ConfigFormat.YAML:
        return _yaml_set(text, _yaml_scope(text, file), key, value, strings_only=False, file=file)
    target = _target(text, index, file)
    return _yaml_set(text, _deployment_scope(target, file), key, value, strings_only=True, file=file,
                     target=target)


def _delete(text: str, fmt: ConfigFormat, index: int, key: str, file: str) -> str:
    if fmt is ConfigFormat.FLAT:
        return _flat_delete(text, key)
    if fmt is ConfigFormat.YAML:
        return _yaml_delete(text, _yaml_scope(text, file), key, None, file)
    target = _target(text, index, file)
    return _yaml_delete(text, _deployment_scope(target, file), key, target.conf_pair, file)


def _rename_in_place(text: str, fmt: ConfigFormat, index: int, key: str, new_key: str,
                     value: str | None, file: str) -> str | None:
    if fmt is ConfigFormat.FLAT:
        return _flat_rename(text, key, new_key, value)
    if fmt is ConfigFormat.YAML:
        return _yaml_rename(text, _yaml_scope(text, file), key, new_key, value, strings_only=False, file=file)
    target = _target(text, index, file)
    return _yaml_rename(text, _deployment_scope(target, file), key, new_key, value, strings_only=True,
                        file=file)


# ---------------------------------------------------------------------------------------------
# flink-conf.yaml


def _check_flat(key: str, value: str | None) -> None:
    for what, text in (("key", key), ("value", value)):
        if text is None:
            continue
        if "#" in text or "\n" in text or "\r" in text:
            raise WriteError(f"{what} '{text[:60]}' cannot be written to flink-conf.yaml (contains '#' or a "
                             "line break, which the flat format cannot hold)")
        if text != text.strip() or not text.strip():
            raise WriteError(f"{what} '{text[:60]}' is empty or has leading/trailing whitespace, which "
                             "flink-conf.yaml drops")
    if ": " in key:
        raise WriteError(f"key '{key[:60]}' contains ': ', which flink-conf.yaml reads as the separator")


def _flat_lines(text: str) -> tuple[list[str], dict[str, list[tuple[int, FlatLine]]]]:
    lines = split_lines(text)
    where: dict[str, list[tuple[int, FlatLine]]] = {}
    for i, line in enumerate(lines):
        parsed = parse_flat_line(strip_eol(line))
        if isinstance(parsed, FlatLine):
            where.setdefault(parsed.key, []).append((i, parsed))
    return lines, where


def _replace_in_line(line: str, start: int, end: int, new: str) -> str:
    body = strip_eol(line)
    return body[:start] + new + body[end:] + line_ending(line)


def _append_line(text: str, new_line_body: str) -> str:
    eol = dominant_eol(text)
    if text and not text.endswith(("\n", "\r")):
        text += eol
    return text + new_line_body + eol


def _flat_set(text: str, key: str, value: str) -> str:
    _check_flat(key, value)
    lines, where = _flat_lines(text)
    if key not in where:
        return _append_line(text, f"{key}: {value}")
    i, parsed = where[key][-1]
    lines[i] = _replace_in_line(lines[i], parsed.value_start, parsed.value_end, value)
    return "".join(lines)


def _flat_delete(text: str, key: str) -> str:
    lines, where = _flat_lines(text)
    doomed = {i for i, _ in where.get(key, [])}
    return "".join(line for i, line in enumerate(lines) if i not in doomed)


def _flat_rename(text: str, key: str, new_key: str, value: str | None) -> str | None:
    _check_flat(new_key, value)
    lines, where = _flat_lines(text)
    if key not in where:
        return None
    i, parsed = where[key][-1]
    line = lines[i]
    if value is not None:
        line = _replace_in_line(line, parsed.value_start, parsed.value_end, value)
    lines[i] = _replace_in_line(line, parsed.key_start, parsed.key_end, new_key)
    return "".join(lines)


# ---------------------------------------------------------------------------------------------
# YAML: rendering scalars

_INDICATOR_START = set(",[]{}#&*!|>'\"%@`")
# YAML 1.1 implicit types (what Kubernetes' YAML library still applies): a manifest value that
# matches one of these must be quoted to stay a string.
_YAML11_SPECIAL = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|~|null|Null|NULL|[-+]?(?:0b[0-1_]+|0[0-7_]+|(?:0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+"
    r"|[1-9][0-9_]*(?::[0-5]?[0-9])+)"
    r"|[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|=|<<)$")


def _plain_ok(value: str, *, strings_only: bool, flow: bool) -> bool:
    if not value or value != value.strip() or len(value) > 4096:
        return False
    if any(ord(c) < 32 or ord(c) == 127 or c in "\u0085\u2028\u2029\ufeff" for c in value):
        return False
    first = value[0]
    if first in _INDICATOR_START or value[:2] in ("- ", "? ", ": ") or value in ("-", "?", ":"):
        return False
    if ": " in value or " #" in value or value.endswith(":") or value.startswith("---"):
        return False
    if flow and any(c in ",[]{}" for c in value):
        return False
    resolved = resolve_plain(value)
    if strings_only:
        if not isinstance(resolved, str) or _YAML11_SPECIAL.match(value):
            return False
    elif not isinstance(resolved, str):
        if isinstance(resolved, bool):
            ok = value in ("true", "false")
        elif isinstance(resolved, int):
            ok = str(resolved) == value
        elif isinstance(resolved, float):
            ok = not math.isnan(resolved) and not math.isinf(resolved) and repr(resolved) == value
        else:
            ok = False
        if not ok:
            return False
    # Final word from the parser itself.
    try:
        node = yaml.compose(f"k: {value}\n", Loader=FlinkYamlLoader)
    except (yaml.YAMLError, ConfigError):
        return False
    if not (isinstance(node, MappingNode) and len(node.value) == 1):
        return False
    parsed = node.value[0][1]
    return isinstance(parsed, ScalarNode) and parsed.value == value and parsed.style is None


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _yaml_printable(c: str) -> bool:
    o = ord(c)
    return (0x20 <= o <= 0x7E or 0xA0 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000) \
        and c not in "\u2028\u2029\ufeff"


def _double_quoted(value: str) -> str:
    """A YAML double-quoted scalar; anything YAML would not accept raw is escaped."""
    out = []
    for c in value:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif _yaml_printable(c):
            out.append(c)
        elif ord(c) <= 0xFF:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) <= 0xFFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def render_scalar(value: str, *, strings_only: bool, flow: bool = False, style: str | None = None) -> str:
    """``value`` as YAML text: plain when that reads back as the same value, else quoted.

    ``style`` keeps the quoting of the scalar being replaced ('"' or "'").
    """
    if style == "'" and all(ord(c) >= 32 for c in value) and "\u0085" not in value:
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return _double_quoted(value)
    if _plain_ok(value, strings_only=strings_only, flow=flow):
        return value
    return _double_quoted(value)


def render_key(key: str) -> str:
    if _plain_ok(key, strings_only=True, flow=False) and not key.startswith("."):
        return key
    return _double_quoted(key)


# ---------------------------------------------------------------------------------------------
# YAML: positions


def _line_start(text: str, index: int) -> int:
    return max(text.rfind("\n", 0, index), text.rfind("\r", 0, index)) + 1


def _line_end_incl(text: str, index: int) -> int:
    """Index just past the line break of the line containing ``index`` (or the text's end)."""
    n = len(text)
    i = index
    while i < n and text[i] not in "\r\n":
        i += 1
    if i < n:
        i += 2 if text.startswith("\r\n", i) else 1
    return i


def _content_end(text: str, node: Node) -> int:
    """Where a value's own text ends (comments and blank lines after a block excluded)."""
    if isinstance(node, ScalarNode):
        end = node.end_mark.index
        if node.style in ("|", ">"):
            while end > node.start_mark.index and text[end - 1] in " \t\r\n":
                end -= 1
        return end
    children = node.value
    if not children or node.flow_style:
        return node.end_mark.index
    last = children[-1]
    return _content_end(text, last[1] if isinstance(node, MappingNode) else last)


def _colon_after_key(text: str, key_node: Node) -> int:
    i = key_node.end_mark.index
    while i < len(text) and text[i] in " \t":
        i += 1
    if i >= len(text) or text[i] != ":":
        raise WriteError("cannot find the ':' after a key (complex YAML key?); edit this key by hand")
    return i


def _pair_range(text: str, key_node: Node, value_node: Node) -> tuple[int, int]:
    start = _line_start(text, key_node.start_mark.index)
    if text[start:key_node.start_mark.index].strip(" \t"):
        raise WriteError(f"key '{key_node.value}' does not start its line (inside a list item or flow "
                         "mapping?); edit it by hand", line=key_node.start_mark.line + 1)
    return start, _line_end_incl(text, _content_end(text, value_node))


def _insert_at_line_end(text: str, pos: int, lines: list[str]) -> str:
    eol = dominant_eol(text)
    prefix = ""
    if pos == len(text) and text and not text.endswith(("\n", "\r")):
        prefix = eol
    return text[:pos] + prefix + "".join(line + eol for line in lines) + text[pos:]


# ---------------------------------------------------------------------------------------------
# YAML: scopes (the mapping whose flattened keys are the config)


@dataclass
class _Scope:
    mapping: MappingNode | None
    tree: YamlTree


def _scope_of(mapping: Node | None, file: str) -> _Scope:
    if isinstance(mapping, MappingNode):
        try:
            return _Scope(mapping, flatten_tree(mapping, file=file))
        except ConfigError as exc:
            raise WriteError(f"cannot edit: {exc.message}", file=file, line=exc.line) from exc
    return _Scope(None, YamlTree())


def _compose(text: str, file: str) -> list[Node]:
    try:
        return compose_documents(text, file=file)
    except ConfigError as exc:
        raise WriteError(f"cannot edit: {exc.message}", file=file, line=exc.line) from exc


def _yaml_scope(text: str, file: str) -> _Scope:
    docs = _compose(text, file)
    return _scope_of(docs[0] if docs else None, file)


def _target(text: str, index: int, file: str) -> ManifestTarget:
    targets = find_targets(_compose(text, file))
    if index >= len(targets):
        raise WriteError("the manifest no longer holds the configuration being edited", file=file)
    return targets[index]


def _deployment_scope(target: ManifestTarget, file: str) -> _Scope:
    conf = target.conf_pair[1] if target.conf_pair else None
    return _scope_of(conf, file)


def _check_editable(scope: _Scope, leaf_key_node: Node, parent: MappingNode, key: str) -> None:
    if id(leaf_key_node) in scope.tree.reused_nodes or id(parent) in scope.tree.reused_nodes:
        raise WriteError(f"'{key}' is defined through a YAML alias; edit it by hand",
                         line=leaf_key_node.start_mark.line + 1)


def _yaml_set(text: str, scope: _Scope, key: str, value: str, *, strings_only: bool, file: str,
              target: ManifestTarget | None = None) -> str:
    leaves = [leaf for leaf in scope.tree.leaves if leaf.key == key]
    if leaves:
        leaf = leaves[-1]
        _check_editable(scope, leaf.key_node, leaf.parent, key)
        node = leaf.value_node
        flow = bool(leaf.parent.flow_style)
        if isinstance(node, ScalarNode) and node.style not in ("|", ">"):
            if node.start_mark.index == node.end_mark.index:      # "key:" with nothing after it
                rendered = render_scalar(value, strings_only=strings_only, flow=flow)
                at = _colon_after_key(text, leaf.key_node) + 1
                return text[:at] + " " + rendered + text[at:]
            style = node.style if node.style in ("'", '"') else None
            rendered = render_scalar(value, strings_only=strings_only, flow=flow, style=style)
            return text[:node.start_mark.index] + rendered + text[node.end_mark.index:]
        if flow:
            raise WriteError(f"'{key}' holds a collection inside a flow mapping; edit it by hand", file=file)
        rendered = render_scalar(value, strings_only=strings_only)
        colon = _colon_after_key(text, leaf.key_node)
        end = _content_end(text, node)
        return text[:colon + 1] + " " + rendered + text[end:]
    return _yaml_insert(text, scope, key, value, strings_only=strings_only, file=file, target=target)


def _yaml_insert(text: str, scope: _Scope, key: str, value: str, *, strings_only: bool, file: str,
                 target: ManifestTarget | None) -> str:
    best = None
    for info in scope.tree.mappings:
        if (info.node.value and not info.node.flow_style and key.startswith(info.prefix)
                and all(isinstance(k, ScalarNode) and k.end_mark.index > k.start_mark.index
                        for k, _ in info.node.value)
                and len(key) > len(info.prefix) and id(info.node) not in scope.tree.reused_nodes
                and (best is None or len(info.prefix) >= len(best.prefix))):
            best = info
    rendered = render_scalar(value, strings_only=strings_only)
    if best is not None:
        indent = best.node.value[0][0].start_mark.column
        pos = _line_end_incl(text, _content_end(text, best.node))
        line = " " * indent + render_key(key[len(best.prefix):]) + ": " + rendered
        return _insert_at_line_end(text, pos, [line])
    root_block = scope.mapping is not None and not scope.mapping.flow_style and target is None
    if scope.mapping is not None and (scope.mapping.value or target is None) and not root_block:
        # a flow mapping {...}, or only aliased or complex-keyed mappings
        raise WriteError(f"cannot add '{key}': the configuration is a flow mapping {{...}}; edit it by hand",
                         file=file)
    line = render_key(key) + ": " + rendered
    if root_block:                      # top-level keys the writer cannot line up with
        return _append_line(text, line)
    if target is None:                  # config.yaml with no mapping yet
        docs = _compose(text, file)
        if docs and not (isinstance(docs[0], ScalarNode) and docs[0].tag == NULL_TAG):
            raise WriteError("the file's top level is not a mapping", file=file)
        if docs and docs[0].end_mark.index > docs[0].start_mark.index:
            raise WriteError("the file's top level is an explicit null; edit it by hand", file=file)
        return _append_line(text, line)
    return _create_flink_configuration(text, target, line, file)


def _create_flink_configuration(text: str, target: ManifestTarget, line: str, file: str) -> str:
    """Add the first key of a FlinkDeployment's flinkConfiguration (creating the key if needed)."""
    if target.conf_pair is not None:
        key_node, value_node = target.conf_pair
        indent = key_node.start_mark.column + 2
        start, end = value_node.start_mark.index, value_node.end_mark.index
        empty_flow = isinstance(value_node, MappingNode) and value_node.flow_style and not value_node.value
        null = isinstance(value_node, ScalarNode) and value_node.tag == NULL_TAG
        if not (empty_flow or null):
            raise WriteError("spec.flinkConfiguration is not a mapping; edit it by hand", file=file)
        # Drop "{}" / "~" / "null" and the spaces before it, then add the block below the key line.
        colon = _colon_after_key(text, key_node)
        text = text[:colon + 1] + text[end:] if end > start else text
        pos = _line_end_incl(text, colon)
        return _insert_at_line_end(text, pos, [" " * indent + line])
    if target.spec_pair is None or not isinstance(target.spec_pair[1], MappingNode) \
            or target.spec_pair[1].flow_style or not target.spec_pair[1].value:
        raise WriteError(f"{target.kind} has no block 'spec' mapping to add flinkConfiguration to", file=file)
    spec = target.spec_pair[1]
    indent = spec.value[0][0].start_mark.column
    pos = _line_end_incl(text, _content_end(text, spec))
    return _insert_at_line_end(text, pos, [" " * indent + "flinkConfiguration:", " " * (indent + 2) + line])


def _yaml_delete(text: str, scope: _Scope, key: str, scope_pair: tuple[Node, Node] | None, file: str) -> str:
    leaves = [leaf for leaf in scope.tree.leaves if leaf.key == key]
    if not leaves or scope.mapping is None:
        return text
    doomed: set[int] = set()
    for leaf in leaves:
        _check_editable(scope, leaf.key_node, leaf.parent, key)
        if leaf.parent.flow_style:
            raise WriteError(f"'{key}' is inside a flow mapping {{...}}; edit it by hand", file=file,
                             line=leaf.key_node.start_mark.line + 1)
        doomed.add(id(leaf.key_node))

    def collect(mapping: MappingNode) -> tuple[bool, list[tuple[int, int]]]:
        ranges: list[tuple[int, int]] = []
        gone = 0
        for k_node, v_node in mapping.value:
            if id(k_node) in doomed:
                ranges.append(_pair_range(text, k_node, v_node))
                gone += 1
            elif isinstance(v_node, MappingNode) and v_node.value and not v_node.flow_style:
                all_gone, sub = collect(v_node)
                if all_gone:
                    ranges.append(_pair_range(text, k_node, v_node))
                    gone += 1
                else:
                    ranges.extend(sub)
        return bool(mapping.value) and gone == len(mapping.value), ranges

    all_gone, ranges = collect(scope.mapping)
    if all_gone and scope_pair is not None:
        ranges = [_pair_range(text, scope_pair[0], scope_pair[1])]
    for start, end in sorted(set(ranges), reverse=True):
        text = text[:start] + text[end:]
    return text


def _yaml_rename(text: str, scope: _Scope, key: str, new_key: str, value: str | None, *,
                 strings_only: bool, file: str) -> str | None:
    leaves = [leaf for leaf in scope.tree.leaves if leaf.key == key]
    if not leaves:
        return None
    leaf = leaves[-1]
    prefix = key[:len(key) - len(leaf.key_node.value)]
    if leaf.key_node.value != key[len(prefix):] or not new_key.startswith(prefix) or new_key == prefix:
        return None
    if leaf.parent.flow_style or leaf.key_node.style not in (None, "'", '"'):
        return None
    _check_editable(scope, leaf.key_node, leaf.parent, key)
    if value is not None:
        text = _yaml_set(text, scope, key, value, strings_only=strings_only, file=file)
    rendered = render_key(new_key[len(prefix):])
    k = leaf.key_node
    return text[:k.start_mark.index] + rendered + text[k.end_mark.index:]


# ---------------------------------------------------------------------------------------------
# ConfigMap: an embedded file in a literal block scalar


def set_spec_scalar(text: str, document: ConfigDocument, path: Sequence[str], value: str) -> str:
    """``text`` with the existing scalar ``spec.<path>`` of the FlinkDeployment ``document`` set to
    ``value`` (e.g. ``taskManager.resource.memory``, which the operator maps onto
    taskmanager.memory.process.size: FlinkConfigBuilder). Only an existing plain or quoted scalar is
    replaced, keeping its quoting and its kind (a plain number stays a plain number); anything else
    is a WriteError (edit it by hand)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom):]
    where = "spec." + ".".join(path)
    if document.format is not ConfigFormat.DEPLOYMENT:
        raise WriteError(f"{where} exists only in a FlinkDeployment", file=document.path)
    index = _locate(_read(body, document.path, ConfigFormat.DEPLOYMENT), document)
    target = _target(body, index, document.path)
    node: Node | None = target.spec_pair[1] if target.spec_pair is not None else None
    for key in path:
        pair = None
        if isinstance(node, MappingNode):
            for k_node, v_node in node.value:
                if isinstance(k_node, ScalarNode) and k_node.value == key:
                    pair = (k_node, v_node)
        if pair is None:
            raise WriteError(f"{where} is not in the manifest; add it by hand", file=document.path)
        node = pair[1]
    if not isinstance(node, ScalarNode) or node.style in ("|", ">") or \
            node.start_mark.index == node.end_mark.index:
        raise WriteError(f"{where} is not a plain scalar; edit it by hand", file=document.path,
                         line=(node.start_mark.line + 1) if node is not None else None)
    style = node.style if node.style in ("'", '"') else None
    # A field the CRD types as a number (spec.job.parallelism: 4) stays a number; strings stay strings.
    typed = node.style is None and not isinstance(resolve_plain(node.value), str)
    rendered = render_scalar(value, strings_only=not typed, style=style)
    return bom + body[:node.start_mark.index] + rendered + body[node.end_mark.index:]


def _edit_configmap(text: str, target: ManifestTarget, edit: Change, file: str) -> str:
    assert target.data_pair is not None and target.data_key is not None
    key_node, value_node = target.data_pair
    if not isinstance(value_node, ScalarNode) or (value_node.style != "|" and value_node.value):
        raise WriteError(f"data.{target.data_key} is not a literal block ('|'); edit it by hand", file=file,
                         line=key_node.start_mark.line + 1)
    inner_format = EMBEDDED_FILES[target.data_key]
    inner = value_node.value if value_node.style == "|" else ""
    inner_docs = _read(inner, file, inner_format)
    new_inner = _apply(inner, inner_format, 0, edit, file)
    _verify(inner_docs[0], _read(new_inner, file, inner_format)[0], [edit], file)
    if new_inner == inner:
        return text
    outer = split_lines(text)
    inner_old = [strip_eol(line) for line in split_lines(inner)]
    inner_new = [strip_eol(line) for line in split_lines(new_inner)]
    if value_node.style == "|":
        first = value_node.start_mark.line + 1                     # 0-based outer index of inner line 1
        region = outer[first:first + len(inner_old)]
        indent = next((len(strip_eol(o)) - len(i) for o, i in zip(region, inner_old, strict=False)
                       if i.strip()), key_node.start_mark.column + 2)
    else:
        # "flink-conf.yaml:" with an empty value: replace it with a literal block.
        colon = _colon_after_key(text, key_node)
        end = value_node.end_mark.index
        text = text[:colon + 1] + " |" + text[end:]
        outer = split_lines(text)
        first = key_node.start_mark.line + 1
        region = []
        indent = key_node.start_mark.column + 2
    eol = line_ending(region[0]) if region and line_ending(region[0]) else dominant_eol(text)
    rebuilt: list[str] = []
    matcher = difflib.SequenceMatcher(a=inner_old, b=inner_new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            rebuilt.extend(region[a0:a1])
        else:
            rebuilt.extend((" " * indent + line if line else "") + eol for line in inner_new[b0:b1])
    after = outer[first + len(inner_old):]
    head = outer[:first]
    if head and not line_ending(head[-1]):
        head[-1] += eol
    for i in range(len(rebuilt) - 1 if not after else len(rebuilt)):
        if not line_ending(rebuilt[i]):
            rebuilt[i] += eol
    return "".join(head + rebuilt + after)


# ---------------------------------------------------------------------------------------------
# Files


def write_file_atomic(path: str | os.PathLike[str], data: bytes, *, backup_suffix: str | None = ".bak",
                      follow_symlinks: bool = False) -> Path | None:
    """Replace ``path`` with ``data`` atomically; return the backup's path (None if no original).

    The data goes to a temporary file in the same directory, is fsynced, gets the original's
    mode, and replaces the original with ``os.replace``: a crash at any point leaves either the
    old file or the new one, never a mix. A symlink is written through only when it points into
    its own directory, unless ``follow_symlinks``.
    """
    link = Path(path)
    target = link
    if link.is_symlink():
        resolved = link.resolve()
        if resolved.parent != link.absolute().parent.resolve() and not follow_symlinks:
            raise WriteError(f"is a symlink to {resolved}, in another directory; refusing to write "
                             "through it (use --follow-symlinks)", file=str(link))
        target = resolved
    if target.exists() and not target.is_file():
        raise WriteError("is not a regular file; refusing to overwrite it", file=str(link))
    directory = target.parent
    backup: Path | None = None
    try:
        original = target.stat() if target.exists() else None
        if original is not None and backup_suffix:
            backup = target.with_name(target.name + backup_suffix)
            _write_replace(backup, target.read_bytes(), stat.S_IMODE(original.st_mode), directory)
        mode = stat.S_IMODE(original.st_mode) if original is not None else 0o644 & ~_umask()
        _write_replace(target, data, mode, directory)
        if original is not None:
            with contextlib.suppress(OSError):   # keep the owner when we may (running as root)
                os.chown(target, original.st_uid, original.st_gid)
    except OSError as exc:
        raise WriteError(f"cannot be written: {exc.strerror or exc}; the original is unchanged",
                         file=str(link)) from exc
    return backup


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _write_replace(target: Path, data: bytes, mode: int, directory: Path) -> None:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    with contextlib.suppress(OSError):      # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def edit_file(path: str | os.PathLike[str], document: ConfigDocument, changes: Iterable[Change], *,
              backup_suffix: str | None = ".bak", follow_symlinks: bool = False) -> Path | None:
    """Read ``path``, apply ``changes`` to ``document`` and write it back atomically (same encoding).

    Returns the backup path, or None when nothing changed (the file is then left untouched).
    """
    try:
        decoded = read_text_file(path)
    except ConfigError as exc:
        raise WriteError(exc.message, file=exc.file, line=exc.line) from exc
    new_text = apply_changes(decoded.text, document, changes)
    if new_text == decoded.text:
        return None
    try:
        data = decoded.encode(new_text)
    except FlinktuneError as exc:
        raise WriteError(exc.message, file=str(path)) from exc
    return write_file_atomic(path, data, backup_suffix=backup_suffix, follow_symlinks=follow_symlinks)


__all__ = [
    "apply_changes", "edit_file", "render_key", "render_scalar", "set_spec_scalar", "write_file_atomic",
]
