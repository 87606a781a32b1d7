"""A small read-only view over composed YAML nodes that keeps line numbers (compose files and
manifests both need "the value at this path, and its line"). YAML merge keys (``<<: *anchor``, common
in compose files) are followed."""

from __future__ import annotations

from collections.abc import Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from flinktune.config.yaml_config import NULL_TAG


class View:
    """One node: ``get(key)`` -> View or None, ``text`` for scalars, ``line`` (1-based)."""

    __slots__ = ("line_map", "node")

    def __init__(self, node: Node, line_map: tuple[int, ...] | None = None) -> None:
        self.node = node
        self.line_map = line_map

    @property
    def line(self) -> int:
        line = self.node.start_mark.line + 1
        if self.line_map and 0 < line <= len(self.line_map):
            return self.line_map[line - 1]
        return line

    @property
    def is_map(self) -> bool:
        return isinstance(self.node, MappingNode)

    @property
    def is_list(self) -> bool:
        return isinstance(self.node, SequenceNode)

    @property
    def text(self) -> str | None:
        """The scalar's text (None for a YAML null, a mapping or a list)."""
        node = self.node
        if isinstance(node, ScalarNode) and node.tag != NULL_TAG:
            return node.value
        return None

    @property
    def block_first_line(self) -> int | None:
        """For a literal or folded block scalar (``|``), the line of its first content line."""
        node = self.node
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            line = node.start_mark.line + 2
            if self.line_map and 0 < line <= len(self.line_map):
                return self.line_map[line - 1]
            return line
        return None

    def items(self) -> Iterator[tuple[str, View, int]]:
        """(key, value view, key line) of a mapping, merge keys (``<<``) expanded first."""
        node = self.node
        if not isinstance(node, MappingNode):
            return
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.value == "<<":
                sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                for source in sources:
                    yield from View(source, self.line_map).items()
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode) and key_node.value != "<<":
                line = key_node.start_mark.line + 1
                if self.line_map and 0 < line <= len(self.line_map):
                    line = self.line_map[line - 1]
                yield key_node.value, View(value_node, self.line_map), line

    def get(self, key: str) -> View | None:
        found = None
        for name, value, _line in self.items():
            if name == key:
                found = value
        return found

    def path(self, *keys: str) -> View | None:
        current: View | None = self
        for key in keys:
            if current is None:
                return None
            current = current.get(key)
        return current

    def list(self) -> list[View]:
        node = self.node
        if isinstance(node, SequenceNode):
            return [View(item, self.line_map) for item in node.value]
        return []

    def scalars(self) -> list[str]:
        """A list of scalars as texts, or a single scalar as a one-item list."""
        if self.is_list:
            return [item.text for item in self.list() if item.text is not None]
        text = self.text
        return [] if text is None else [text]

    def str_at(self, *keys: str) -> str | None:
        found = self.path(*keys)
        return None if found is None else found.text
