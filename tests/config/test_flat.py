"""The legacy flink-conf.yaml reader against Flink's own line rules.

Source: GlobalConfiguration.loadLegacyYAMLResource (flink-core, @M:1.13 .. M:1.20; flink-facts.md §3):
comment = everything after the first '#', String.trim, split at the first ": ", WARN and skip
"Line is not a key-value pair (missing space after ':'?)" and "Key or value was empty",
config.setString(key, value) so the last occurrence wins.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from flinktune.config.flat import parse_flat_line, read_flat_file, read_flat_text
from flinktune.config.types import ConfigFormat
from flinktune.errors import ConfigError


def kinds(doc) -> list[tuple[str, int]]:
    return [(i.kind, i.line) for i in doc.issues]


def test_basic_key_values_with_lines() -> None:
    doc = read_flat_text("# header\n\njobmanager.rpc.address: localhost\ntaskmanager.numberOfTaskSlots: 4\n",
                         "flink-conf.yaml")
    assert doc.format is ConfigFormat.FLAT
    assert [(e.key, e.value, e.line) for e in doc.entries] == [
        ("jobmanager.rpc.address", "localhost", 3), ("taskmanager.numberOfTaskSlots", "4", 4)]
    assert doc.issues == ()


@pytest.mark.parametrize(("line", "key", "value"), [
    ("a: b", "a", "b"),
    ("a:  b  ", "a", "b"),                                   # value trimmed
    ("   indented.key: v", "indented.key", "v"),             # indentation ignored
    ("a: b # comment", "a", "b"),
    ("a: b#c", "a", "b"),                                    # '#' cuts even without a space
    ('a: "x # y"', "a", '"x'),                               # ... even inside quotes
    ('a: "quoted"', "a", '"quoted"'),                        # quotes kept literally
    ("a: b: c", "a", "b: c"),                                # split at the FIRST ": "
    ("url: http://host:8081/x", "url", "http://host:8081/x"),
    ("a\t: b", "a", "b"),                                    # key trimmed (tab <= U+0020)
    ("k: v\u00a0", "k", "v\u00a0"),                           # U+00A0 is not trimmed by Java
    ("env.java.opts: -XX:+UseG1GC -Dx=y", "env.java.opts", "-XX:+UseG1GC -Dx=y"),
])
def test_line_rules(line: str, key: str, value: str) -> None:
    parsed = parse_flat_line(line)
    assert parsed is not None and not hasattr(parsed, "opens_block")
    assert (parsed.key, parsed.value) == (key, value)
    assert line[parsed.key_start:parsed.key_end] == key
    assert line[parsed.value_start:parsed.value_end] == value


@pytest.mark.parametrize("line", ["", "   ", "# only a comment", "   # indented comment", "#a: b"])
def test_blank_and_comment_lines_are_skipped(line: str) -> None:
    assert parse_flat_line(line) is None


def test_malformed_and_empty_lines_are_reported_and_skipped() -> None:
    text = "a:b\nkey: \nnovalue\n: value\ngood: 1\n"
    doc = read_flat_text(text, "f")
    assert [e.key for e in doc.entries] == ["good"]
    assert kinds(doc) == [("malformed-line", 1), ("malformed-line", 2), ("malformed-line", 3),
                          ("empty-value", 4)]


def test_duplicates_last_wins_and_both_lines_named() -> None:
    doc = read_flat_text("a: 1\nb: 2\na: 3\n", "conf/flink-conf.yaml")
    assert doc.get("a").value == "3" and doc.get("a").line == 3
    assert doc.values() == {"a": "3", "b": "2"}
    (issue,) = doc.issues
    assert issue.kind == "duplicate-key" and issue.line == 3 and "line 1" in issue.message
    assert issue.key == "a" and issue.file == "conf/flink-conf.yaml"


def test_nested_yaml_in_flat_file_is_flagged() -> None:
    # Flink reads "  memory.process.size: 2g" as the top-level key "memory.process.size".
    doc = read_flat_text("taskmanager:\n  memory.process.size: 2g\nparallelism.default: 2\n", "f")
    assert [e.key for e in doc.entries] == ["memory.process.size", "parallelism.default"]
    assert kinds(doc) == [("malformed-line", 1), ("nested-in-flat", 2)]


def test_quoted_value_and_odd_keys_flagged() -> None:
    doc = read_flat_text('taskmanager.numberOfTaskSlots: "4"\nmy key: x\nk\x07x: y\n', "f")
    assert doc.get("taskmanager.numberOfTaskSlots").value == '"4"'
    assert [i.kind for i in doc.issues] == ["quoted-value", "odd-key", "odd-key"]


def test_line_endings_cr_crlf_lf_count_like_readline() -> None:
    doc = read_flat_text("a: 1\r\nb: 2\rc: 3\nd: 4", "f")
    assert [(e.key, e.line) for e in doc.entries] == [("a", 1), ("b", 2), ("c", 3), ("d", 4)]


def test_file_streaming_matches_text_parsing(tmp_path: Path) -> None:
    text = "\ufeffa: 1\r\n# c\rb: 2 # x\n\nc: é\n"
    path = tmp_path / "flink-conf.yaml"
    path.write_bytes(text.encode("utf-8"))
    from_file = read_flat_file(path)
    from_text = read_flat_text(text[1:], str(path))
    assert from_file.entries == from_text.entries
    assert from_file.get("c").value == "é"


def test_non_utf8_names_line_and_byte(tmp_path: Path) -> None:
    path = tmp_path / "flink-conf.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(ConfigError) as err:
        read_flat_file(path)
    assert err.value.line == 2 and "0xe9" in err.value.message and "byte 7 of the line" in err.value.message


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "flink-conf.yaml"
    path.write_bytes(b"a: 1\n\x00\x01\x02binary")
    with pytest.raises(ConfigError, match="binary"):
        read_flat_file(path)


def test_huge_file_streams_with_bounded_memory(tmp_path: Path) -> None:
    # ~40 MB of comments and a few keys: memory must stay around one line, not the file.
    path = tmp_path / "flink-conf.yaml"
    comment = ("# " + "x" * 1000 + "\n").encode()
    with open(path, "wb") as fh:
        fh.write(b"first: 1\n")
        for _ in range(40_000):
            fh.write(comment)
        fh.write(b"last: 2\n")
    tracemalloc.start()
    try:
        doc = read_flat_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert doc.values() == {"first": "1", "last": "2"}
    assert doc.get("last").line == 40_002
    assert peak < 8 * 1024 * 1024


def test_overlong_line_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "flink-conf.yaml"
    path.write_bytes(b"a: 1\nb: " + b"x" * (5 * 1024 * 1024) + b"\n")
    with pytest.raises(ConfigError) as err:
        read_flat_file(path)
    assert err.value.line == 2
