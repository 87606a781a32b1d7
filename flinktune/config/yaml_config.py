"""The standard-YAML ``config.yaml`` reader (Flink 1.19+ and 2.x), also used for manifests.

Flink parses config.yaml with snakeyaml-engine and the YAML 1.2 *core* schema
(``YamlParserUtils`` @1.19+, flink-facts.md §3). PyYAML implements YAML 1.1, whose implicit types
differ (``yes``/``on`` booleans, sexagesimal ``1:30``, octal ``017``, timestamps, ``=``), so the
loader below replaces PyYAML's resolvers with the 1.2 core ones and converts scalars itself.

Nested mappings are flattened to dotted keys as ``GlobalConfiguration.flatten`` does: document
order, later spellings of the same flattened key win. Every entry keeps the line of its key.

Hostile input is bounded: nesting depth, aliases to collections (snakeyaml-engine's default limit
of 50 stops "billion laughs"), and the number of nodes a document may expand to.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from flinktune.config.textio import line_of_index
from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigFormat, ConfigIssue, ConfigValue
from flinktune.errors import ConfigError

MAX_DEPTH = 100
MAX_COLLECTION_ALIASES = 50       # snakeyaml-engine LoadSettings.maxAliasesForCollections default
MAX_NODES = 200_000               # nodes visited while flattening one document (aliases included)

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
SEQ_TAG = "tag:yaml.org,2002:seq"
MAP_TAG = "tag:yaml.org,2002:map"

# YAML 1.2 core schema (snakeyaml-engine CoreScalarResolver).
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


class _Bounded:
    """The resource bounds of composing (a mixin before PyYAML's Composer)."""

    _depth = 0
    _collection_aliases = 0

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        if self.check_event(AliasEvent):  # type: ignore[attr-defined]
            event = self.peek_event()  # type: ignore[attr-defined]
            target = self.anchors.get(event.anchor)  # type: ignore[attr-defined]
            if isinstance(target, MappingNode | SequenceNode):
                self._collection_aliases += 1
                if self._collection_aliases > MAX_COLLECTION_ALIASES:
                    raise ConfigError(
                        f"more than {MAX_COLLECTION_ALIASES} aliases to collections (a YAML 'billion "
                        "laughs' bomb?); Flink's YAML parser refuses this too",
                        line=event.start_mark.line + 1)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise ConfigError(f"YAML is nested more than {MAX_DEPTH} levels deep",
                              line=self.peek_event().start_mark.line + 1)  # type: ignore[attr-defined]
        try:
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1


class FlinkYamlLoader(_Bounded, yaml.SafeLoader):
    """PyYAML's pure-Python composer with YAML 1.2 core resolvers and resource bounds.

    Only ``compose`` is used: scalars are converted by :func:`scalar_value`, never by PyYAML's
    1.1 constructors. Its marks are character offsets into the text, which the writer edits in place.
    """

    yaml_implicit_resolvers: dict = {}  # noqa: RUF012 - PyYAML's class-level registry


FlinkYamlLoader.add_implicit_resolver(BOOL_TAG, _BOOL, list("tTfF"))
FlinkYamlLoader.add_implicit_resolver(INT_TAG, _INT, list("-+0123456789"))
FlinkYamlLoader.add_implicit_resolver(FLOAT_TAG, _FLOAT, list("-+0123456789."))
FlinkYamlLoader.add_implicit_resolver(NULL_TAG, _NULL, ["~", "n", "N", ""])

try:
    from yaml._yaml import CParser
except ImportError:               # PyYAML built without libyaml: the pure-Python loader does it all
    CParser = None

if CParser is not None:
    class _LibyamlLoader(_Bounded, Composer, CParser, BaseResolver):  # type: ignore[misc,valid-type]
        """libyaml's scanner and parser under the same Python composer, resolvers and bounds: ten
        times faster on manifests. Its marks are the same character offsets, lines and columns; a
        plain scalar's style is '' where PyYAML's is None (set back below)."""

        yaml_implicit_resolvers = FlinkYamlLoader.yaml_implicit_resolvers

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            BaseResolver.__init__(self)

        empty_plain = False       # an empty plain scalar was composed (see _compose_fast)

        def compose_scalar_node(self, anchor):  # type: ignore[no-untyped-def]
            node = super().compose_scalar_node(anchor)
            if node.style == "":
                node.style = None
                if not node.value:
                    self.empty_plain = True
            return node


def _compose_fast(text: str) -> list[Node] | None:
    """The documents as libyaml reads them, or None to leave the text to the pure-Python loader: where
    libyaml is missing, where it finds a problem (the message must be PyYAML's), and for text on which
    the two may differ: a NUL ends libyaml's input; PyYAML refuses a tab after a colon and a '?' inside
    a plain scalar in a flow collection, where libyaml allows them; with a '?' key they mark the empty
    value on different lines, and an empty value in a flow collection one character apart)."""
    if CParser is None or "\x00" in text or "\t" in text or "?" in text:
        return None
    loader = None
    try:
        loader = _LibyamlLoader(text)
        docs: list[Node] = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                docs.append(node)
        if loader.empty_plain and ("{" in text or "[" in text):
            return None
        return docs
    except ConfigError:
        raise
    except Exception:             # a YAML error, a surrogate libyaml cannot encode: PyYAML says what
        return None
    finally:
        if loader is not None:
            loader.dispose()


def resolve_plain(text: str) -> ConfigValue:
    """What a plain (unquoted) scalar ``text`` means under the YAML 1.2 core schema."""
    for tag, pattern in ((BOOL_TAG, _BOOL), (INT_TAG, _INT), (FLOAT_TAG, _FLOAT), (NULL_TAG, _NULL)):
        if pattern.match(text):
            return _convert(tag, text)
    return text


def _convert(tag: str, text: str) -> ConfigValue:
    """Scalar text with a resolved tag -> Python value; ValueError if the text does not fit the tag."""
    if tag == STR_TAG:
        return text
    if tag == NULL_TAG:
        if not _NULL.match(text):
            raise ValueError("not a null")
        return None
    if tag == BOOL_TAG:
        if not _BOOL.match(text):
            raise ValueError("not a boolean")
        return text.lower() == "true"
    if tag == INT_TAG:
        if not _INT.match(text):
            raise ValueError("not an integer")
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)
    if tag == FLOAT_TAG:
        if not _FLOAT.match(text):
            raise ValueError("not a float")
        lowered = text.lower()
        if lowered.endswith(".inf"):
            return -math.inf if lowered.startswith("-") else math.inf
        if lowered == ".nan":
            return math.nan
        return float(text)
    raise KeyError(tag)


def node_line(node: Node, first_line: int = 1) -> int:
    return node.start_mark.line + first_line


class Leaf:
    """One flattened key and the nodes it came from (the writer edits through these)."""

    key: str
    key_node: ScalarNode
    value_node: Node
    parent: MappingNode

    def __init__(self, key: str, key_node: ScalarNode, value_node: Node, parent: MappingNode) -> None:
        self.key = key
        self.key_node = key_node
        self.value_node = value_node
        self.parent = parent


class MappingInfo:
    """A mapping reached while flattening, with its flattened prefix ('' or 'a.b.')."""

    prefix: str
    node: MappingNode
    key_node: Node | None  # the key whose value this mapping is (None for the root)
    parent: MappingNode | None

    def __init__(self, prefix: str, node: MappingNode, key_node: Node | None,
                 parent: MappingNode | None) -> None:
        self.prefix = prefix
        self.node = node
        self.key_node = key_node
        self.parent = parent


class YamlTree:
    """The flattened view of one mapping: leaves in document order, plus every mapping seen."""

    leaves: list[Leaf]
    mappings: list[MappingInfo]
    issues: list[ConfigIssue]
    reused_nodes: set[int]  # ids of nodes reached twice (aliases)

    def __init__(self) -> None:     # filled in by the walker
        self.leaves = []
        self.mappings = []
        self.issues = []
        self.reused_nodes = set()


class _Walker:
    def __init__(self, file: str, first_line: int) -> None:
        self.file = file
        self.first_line = first_line
        self.budget = MAX_NODES
        self.seen: set[int] = set()
        self.tree = YamlTree()

    def _spend(self, node: Node) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise ConfigError(f"YAML expands to more than {MAX_NODES} nodes (aliases?)", file=self.file,
                              line=node_line(node, self.first_line))
        if id(node) in self.seen:
            self.tree.reused_nodes.add(id(node))
        self.seen.add(id(node))

    def issue(self, kind: str, message: str, node: Node, key: str | None = None) -> None:
        self.tree.issues.append(ConfigIssue(kind, message, self.file, node_line(node, self.first_line), key))

    def key_text(self, key_node: Node) -> str | None:
        """The key as Flink would use it, or None (issue reported) when it cannot be a key."""
        if not isinstance(key_node, ScalarNode):
            self.issue("non-string-key", "a mapping or list used as a key; it cannot name a Flink option",
                       key_node)
            return None
        if key_node.tag == STR_TAG:
            return key_node.value
        try:
            typed = _convert(key_node.tag, key_node.value)
        except (ValueError, KeyError):
            typed = key_node.value
        if typed is None:
            self.issue("non-string-key", "a null key (empty, '~' or 'null'); it cannot name a Flink option",
                       key_node)
            return None
        self.issue("non-string-key",
                   f"key {key_node.value} is a YAML {type(typed).__name__}, not a string; quote it",
                   key_node, key_node.value)
        return key_node.value

    def flatten(self, mapping: MappingNode, prefix: str, key_node: Node | None,
                parent: MappingNode | None, depth: int = 0) -> None:
        self._spend(mapping)
        self.tree.mappings.append(MappingInfo(prefix, mapping, key_node, parent))
        first_line_of: dict[str, int] = {}
        for k_node, v_node in mapping.value:
            self._spend(k_node)
            text = self.key_text(k_node)
            if text is None:
                continue
            line = node_line(k_node, self.first_line)
            if text in first_line_of:
                self.issue("duplicate-key",
                           f"key '{text}' appears twice in the same mapping (also on line "
                           f"{first_line_of[text]}); Flink's YAML parser rejects the file",
                           k_node, prefix + text)
            else:
                first_line_of[text] = line
            full = prefix + text
            if isinstance(v_node, MappingNode):
                if depth >= MAX_DEPTH:
                    raise ConfigError(f"YAML is nested more than {MAX_DEPTH} levels deep", file=self.file,
                                      line=line)
                self.flatten(v_node, full + ".", k_node, mapping, depth + 1)
            else:
                self.tree.leaves.append(Leaf(full, k_node, v_node, mapping))  # type: ignore[arg-type]

    def value(self, node: Node, key: str, depth: int = 0) -> ConfigValue:
        """A leaf's value: scalars typed by the core schema, lists and maps as Python values."""
        self._spend(node)
        if depth > MAX_DEPTH:
            raise ConfigError(f"YAML is nested more than {MAX_DEPTH} levels deep", file=self.file,
                              line=node_line(node, self.first_line))
        if isinstance(node, ScalarNode):
            try:
                return _convert(node.tag, node.value)
            except KeyError:
                self.issue("unsupported-tag", f"tag {node.tag} is not part of the YAML core schema; "
                           "Flink's YAML parser rejects it", node, key)
            except ValueError:
                self.issue("bad-scalar", f"'{node.value[:80]}' does not fit its tag {node.tag}", node, key)
            return node.value
        if isinstance(node, SequenceNode):
            return [self.value(item, key, depth + 1) for item in node.value]
        result: dict[str, object] = {}
        for k_node, v_node in node.value:   # a mapping inside a list stays a mapping
            k = k_node.value if isinstance(k_node, ScalarNode) else str(k_node.value)
            result[str(k)] = self.value(v_node, key, depth + 1)
        return result


def flatten_tree(mapping: MappingNode, *, file: str, first_line: int = 1) -> YamlTree:
    walker = _Walker(file, first_line)
    walker.flatten(mapping, "", None, None)
    return walker.tree


def tree_entries(tree: YamlTree, text: str, *, file: str, first_line: int = 1,
                 ) -> tuple[tuple[ConfigEntry, ...], tuple[ConfigIssue, ...]]:
    """Entries (document order) and issues of a flattened tree, including shadowed spellings."""
    walker = _Walker(file, first_line)
    walker.tree = tree
    entries: list[ConfigEntry] = []
    last_line_of: dict[str, tuple[int, MappingNode]] = {}
    for leaf in tree.leaves:
        line = node_line(leaf.key_node, first_line)
        value = walker.value(leaf.value_node, leaf.key)
        if value is None:
            walker.issue("empty-value", f"key '{leaf.key}' has no value (null)", leaf.key_node, leaf.key)
        seen = last_line_of.get(leaf.key)
        if seen is not None and seen[1] is not leaf.parent:
            walker.issue("shadowed-key",
                         f"key '{leaf.key}' is also set on line {seen[0]} (another spelling, nested or "
                         "dotted); the later one wins", leaf.key_node, leaf.key)
        last_line_of[leaf.key] = (line, leaf.parent)
        entries.append(ConfigEntry(key=leaf.key, value=value, raw=node_source(text, leaf.value_node),
                                   file=file, line=line))
    return tuple(entries), tuple(tree.issues)


def node_source(text: str, node: Node) -> str:
    """The node's text as written (block scalars include their header), trailing space trimmed."""
    return text[node.start_mark.index:node.end_mark.index].rstrip()


# The nodes of the texts composed last: lint reads a manifest named on the command line both as a
# configuration and as a deployment file. Nodes are only read, never changed, so the same text shares them.
_COMPOSED: dict[str, tuple[Node, ...]] = {}
_COMPOSED_MAX = 16


def compose_documents(text: str, *, file: str, first_line: int = 1) -> list[Node]:
    """Every YAML document's root node; any YAML problem becomes a ConfigError with its line."""
    if text.startswith("\ufeff"):
        raise ConfigError("internal: text still carries a byte-order mark", file=file)
    cached = _COMPOSED.get(text)
    if cached is not None:
        return list(cached)
    loader: FlinkYamlLoader | None = None
    try:
        fast = _compose_fast(text)
        if fast is not None:
            docs = fast
        else:
            loader = FlinkYamlLoader(text)
            docs = []
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    docs.append(node)
        if len(_COMPOSED) >= _COMPOSED_MAX:
            _COMPOSED.pop(next(iter(_COMPOSED)))
        _COMPOSED[text] = tuple(docs)
        return docs
    except ConfigError as exc:
        line = exc.line + first_line - 1 if exc.line is not None else None
        raise ConfigError(exc.message, file=file, line=line) from None
    except yaml.reader.ReaderError as exc:
        code = ord(exc.character) if isinstance(exc.character, str) else int(exc.character)
        char = f"U+{code:04X}"
        raise ConfigError(f"contains a character YAML does not allow ({char})", file=file,
                          line=line_of_index(text, exc.position) + first_line - 1) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "syntax error"
        context = f" {exc.context}" if exc.context and exc.problem else ""
        line = mark.line + first_line if mark is not None else None
        col = f" (column {mark.column + 1})" if mark is not None else ""
        raise ConfigError(f"invalid YAML: {what}{context}{col}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from None
    except RecursionError:
        raise ConfigError("YAML is nested too deeply", file=file) from None
    finally:
        if loader is not None:
            loader.dispose()


def read_yaml_text(text: str, file: str, *, first_line: int = 1,
                   fmt: ConfigFormat = ConfigFormat.YAML) -> ConfigDocument:
    """Read a standard-YAML config.yaml held in ``text``."""
    docs = compose_documents(text, file=file, first_line=first_line)
    if len(docs) > 1:
        raise ConfigError(f"holds {len(docs)} YAML documents; config.yaml must hold one", file=file,
                          line=node_line(docs[1], first_line))
    if not docs or (isinstance(docs[0], ScalarNode) and docs[0].tag == NULL_TAG):
        return ConfigDocument(path=file, format=fmt, entries=())
    root = docs[0]
    if not isinstance(root, MappingNode):
        kind = "a list" if isinstance(root, SequenceNode) else "a single value"
        raise ConfigError(f"top level is {kind}, not a mapping of Flink options", file=file,
                          line=node_line(root, first_line))
    tree = flatten_tree(root, file=file, first_line=first_line)
    entries, issues = tree_entries(tree, text, file=file, first_line=first_line)
    return ConfigDocument(path=file, format=fmt, entries=entries, issues=issues)


def mapping_items(node: Node) -> Iterator[tuple[str, Node, Node]]:
    """(key text, key node, value node) of a mapping's scalar keys, in order."""
    if isinstance(node, MappingNode):
        for k_node, v_node in node.value:
            if isinstance(k_node, ScalarNode):
                yield k_node.value, k_node, v_node


def mapping_get(node: Node, key: str) -> tuple[Node, Node] | None:
    """The (key node, value node) pair for ``key`` (the last one if repeated), or None."""
    found = None
    for text, k_node, v_node in mapping_items(node):
        if text == key:
            found = (k_node, v_node)
    return found
