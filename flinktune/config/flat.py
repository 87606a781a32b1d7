"""The legacy ``flink-conf.yaml`` reader: Flink's own line parser, not YAML.

Behaviour follows ``GlobalConfiguration.loadLegacyYAMLResource`` (flink-core, 1.13 .. 1.20; see
flink-facts.md §3): for every line, drop everything after the first ``#`` (even inside quotes),
trim (Java ``String.trim``: characters <= U+0020), skip blank lines, split at the first ``": "``
(no ``": "`` => "Line is not a key-value pair", skipped), skip empty keys or values, keep quotes
literally, ignore indentation, and let the last occurrence of a key win.

Reading streams line by line: memory is one line plus the entries found.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from flinktune.config.textio import iter_file_lines
from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigFormat, ConfigIssue
from flinktune.errors import ConfigError
from flinktune.record import Record, set_field

# A real Flink config has hundreds of keys; this bound keeps a hostile file's entry list finite.
MAX_ENTRIES = 200_000
# Past this many problems the rest are summarised in one issue.
MAX_ISSUES = 1_000

_JAVA_WHITESPACE = "".join(chr(c) for c in range(33))
# What Flink's own keys are made of; anything else is legal but worth a word.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9._\-]+")


def java_trim(text: str) -> str:
    """``String.trim()``: strips characters <= U+0020 only (not Unicode spaces)."""
    return text.strip(_JAVA_WHITESPACE)


class FlatLine(Record):
    """One parsed key-value line, with the spans of key and value in the line (no line break)."""

    __slots__ = _fields = ("key", "value", "indent", "key_start", "key_end", "value_start", "value_end")
    key: str
    value: str
    indent: int
    key_start: int
    key_end: int
    value_start: int
    value_end: int

    def __init__(self, key: str, value: str, indent: int, key_start: int, key_end: int, value_start: int,
                 value_end: int) -> None:
        # One per line of every file: the fields set one by one, no loop.
        set_field(self, "key", key)
        set_field(self, "value", value)
        set_field(self, "indent", indent)
        set_field(self, "key_start", key_start)
        set_field(self, "key_end", key_end)
        set_field(self, "value_start", value_start)
        set_field(self, "value_end", value_end)


class FlatProblem(Record):
    """Why a flink-conf.yaml line is not a usable ``key: value`` (Flink skips such lines)."""

    __slots__ = _fields = ("kind", "opens_block", "indent")
    kind: str          # "malformed-line" | "empty-value"
    opens_block: bool  # the line looks like a YAML block opener ("taskmanager:")
    indent: int

    def __init__(self, kind: str, opens_block: bool, indent: int) -> None:
        set_field(self, "kind", kind)
        set_field(self, "opens_block", opens_block)
        set_field(self, "indent", indent)


def parse_flat_line(line: str) -> FlatLine | FlatProblem | None:
    """Parse one line (without line break) exactly as Flink does; None for blank/comment lines."""
    hash_at = line.find("#")
    before_comment = line if hash_at < 0 else line[:hash_at]
    conf = java_trim(before_comment)
    if not conf:
        return None
    indent = len(before_comment) - len(before_comment.lstrip(_JAVA_WHITESPACE))
    sep = conf.find(": ")
    if sep < 0:
        return FlatProblem("malformed-line", conf.endswith(":"), indent)
    key_part = conf[:sep]
    key = java_trim(key_part)
    value_part = conf[sep + 2:]
    value = java_trim(value_part)
    if not key or not value:
        return FlatProblem("empty-value", False, indent)
    value_start = indent + sep + 2 + (len(value_part) - len(value_part.lstrip(_JAVA_WHITESPACE)))
    return FlatLine(key=key, value=value, indent=indent, key_start=indent, key_end=indent + len(key),
                    value_start=value_start, value_end=value_start + len(value))


def describe_odd_key(key: str) -> str | None:
    """Why a key looks odd (whitespace, control or non-ASCII characters, quotes), or None."""
    if _PLAIN_KEY.fullmatch(key):
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        return "control characters"
    if any(c.isspace() for c in key):
        return "whitespace"
    if any(c in "\"'" for c in key):
        return "quotes (kept literally in flink-conf.yaml)"
    if any(ord(c) > 127 for c in key):
        return "non-ASCII characters"
    if key.startswith("-"):
        return "a leading '-' (a YAML list item? flink-conf.yaml has no lists)"
    return None


class _IssueSink:
    def __init__(self, file: str) -> None:
        self.file = file
        self.items: list[ConfigIssue] = []
        self.dropped = 0

    def add(self, kind: str, message: str, line: int, key: str | None = None) -> None:
        if len(self.items) >= MAX_ISSUES:
            self.dropped += 1
            return
        self.items.append(ConfigIssue(kind, message, self.file, line, key))

    def finish(self) -> tuple[ConfigIssue, ...]:
        if self.dropped:
            self.items.append(ConfigIssue("too-many-issues", f"{self.dropped} more problems not listed",
                                          self.file, self.items[-1].line))
        return tuple(self.items)


def parse_flat_lines(
    lines: Iterable[str], file: str, *, first_line: int = 1,
) -> tuple[tuple[ConfigEntry, ...], tuple[ConfigIssue, ...]]:
    """Entries and issues of flat-format lines (no line breaks); line numbers start at ``first_line``."""
    entries: list[ConfigEntry] = []
    sink = _IssueSink(file)
    last_line_of: dict[str, int] = {}
    # Indentation of the last "taskmanager:"-style line: deeper lines below it are YAML nesting
    # that Flink silently reads as top-level keys.
    opener_indent: int | None = None
    opener_line = 0
    line_no = first_line - 1
    for line_no, line in enumerate(lines, start=first_line):
        parsed = parse_flat_line(line)
        if parsed is None:
            continue
        if isinstance(parsed, FlatProblem):
            if parsed.kind == "malformed-line":
                if parsed.opens_block:
                    message = ("'key:' line with no value; Flink skips it (flink-conf.yaml is read line by "
                               "line, so any YAML nesting under it is lost: use dotted keys, or config.yaml "
                               "on Flink 1.19+)")
                else:
                    message = "line is not a 'key: value' pair (missing space after ':'?); Flink skips it"
                sink.add("malformed-line", message, line_no)
                if parsed.opens_block and (opener_indent is None or parsed.indent <= opener_indent):
                    opener_indent, opener_line = parsed.indent, line_no
            else:
                sink.add("empty-value", "key or value is empty; Flink skips the line", line_no)
            continue
        key = parsed.key
        if opener_indent is not None:
            if parsed.indent > opener_indent:
                sink.add("nested-in-flat",
                         f"indented under line {opener_line}: Flink ignores indentation and reads this as "
                         f"the top-level key '{key}' (flink-conf.yaml is not nested YAML)", line_no, key)
            else:
                opener_indent = None
        odd = describe_odd_key(key)
        if odd:
            sink.add("odd-key", f"key '{key}' contains {odd}; Flink takes it literally", line_no, key)
        value = parsed.value
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            sink.add("quoted-value",
                     f"the quotes are part of the value: flink-conf.yaml keeps them literally, so Flink "
                     f"reads {value} rather than {value[1:-1]}", line_no, key)
        previous = last_line_of.get(key)
        if previous is not None:
            sink.add("duplicate-key",
                     f"key '{key}' is set again (also on line {previous}); the last one wins", line_no, key)
        last_line_of[key] = line_no
        if len(entries) >= MAX_ENTRIES:
            raise ConfigError(f"more than {MAX_ENTRIES} key-value lines; not a Flink config",
                              file=file, line=line_no)
        entries.append(ConfigEntry(key=key, value=value, raw=value, file=file, line=line_no))
    return tuple(entries), sink.finish()


def read_flat_text(text: str, file: str, *, first_line: int = 1) -> ConfigDocument:
    from flinktune.config.textio import split_lines, strip_eol

    entries, issues = parse_flat_lines((strip_eol(line) for line in split_lines(text)), file,
                                       first_line=first_line)
    return ConfigDocument(path=file, format=ConfigFormat.FLAT, entries=entries, issues=issues)


def read_flat_file(path: str | os.PathLike[str]) -> ConfigDocument:
    """Stream a flink-conf.yaml from disk."""
    file = str(path)
    entries, issues = parse_flat_lines(iter_file_lines(path), file)
    return ConfigDocument(path=file, format=ConfigFormat.FLAT, entries=entries, issues=issues)
