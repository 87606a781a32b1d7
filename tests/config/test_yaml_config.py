"""The standard-YAML config.yaml reader (Flink 1.19+ / 2.x).

Sources: flink-facts.md §3 — GlobalConfiguration.loadYAMLResource + flatten and YamlParserUtils
@M:1.19 (snakeyaml-engine with the YAML 1.2 core schema; duplicate keys rejected; nested maps
flattened with '.'); the null forms are from docs D:1.19:deployment/config; the 50-alias bound is
snakeyaml-engine's LoadSettings default (maxAliasesForCollections).
"""

from __future__ import annotations

import math

import pytest

from flinktune.config.types import ConfigFormat
from flinktune.config.yaml_config import read_yaml_text, resolve_plain
from flinktune.errors import ConfigError


def values(text: str) -> dict:
    return read_yaml_text(text, "config.yaml").values()


# YAML 1.2 core schema, where PyYAML's YAML 1.1 would answer differently.
@pytest.mark.parametrize(("plain", "expected"), [
    ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"), ("y", "y"), ("Yes", "Yes"),
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("tRue", "tRue"),
    ("1:30", "1:30"),                  # no sexagesimal
    ("017", 17),                       # decimal, not octal
    ("0o17", 15), ("0x1F", 31),
    ("1_000", "1_000"),                # no underscores
    ("2001-12-14", "2001-12-14"),      # no timestamps
    ("=", "="),
    ("1.5", 1.5), ("1e3", 1000.0), (".5", 0.5), ("-.inf", -math.inf), (".Inf", math.inf),
    ("null", None), ("Null", None), ("NULL", None), ("~", None), ("", None), ("nULL", "nULL"),
    ("32 mb", "32 mb"), ("100 ms", "100 ms"), ("-1", -1), ("+5", 5),
])
def test_core_schema_scalars(plain: str, expected: object) -> None:
    assert resolve_plain(plain) == expected
    assert type(resolve_plain(plain)) is type(expected)
    got = values(f"k: {plain}\n")["k"]
    assert got == expected and type(got) is type(expected)


def test_nan() -> None:
    assert math.isnan(values("k: .nan\n")["k"])


def test_flattening_with_lines_and_types() -> None:
    text = """\
# comment
taskmanager:
  numberOfTaskSlots: 4
  memory:
    process:
      size: 1728m
    network.max: 1gb        # dotted key inside a nested block
execution.buffer-timeout.interval: 5 ms
pipeline.jars: [a.jar, "b.jar"]
env:
  java:
    opts:
      all: "-XX:+UseG1GC"
"""
    doc = read_yaml_text(text, "config.yaml")
    assert doc.format is ConfigFormat.YAML
    got = [(e.key, e.value, e.line) for e in doc.entries]
    assert got == [
        ("taskmanager.numberOfTaskSlots", 4, 3),
        ("taskmanager.memory.process.size", "1728m", 6),
        ("taskmanager.memory.network.max", "1gb", 7),
        ("execution.buffer-timeout.interval", "5 ms", 8),
        ("pipeline.jars", ["a.jar", "b.jar"], 9),
        ("env.java.opts.all", "-XX:+UseG1GC", 13),
    ]
    assert doc.get("env.java.opts.all").raw == '"-XX:+UseG1GC"'
    assert doc.issues == ()


def test_block_list_and_flow_map() -> None:
    doc = read_yaml_text("a:\n  - x\n  - 2\nb: {c: 1, d: {e: f}}\n", "config.yaml")
    assert doc.values() == {"a": ["x", 2], "b.c": 1, "b.d.e": "f"}


def test_duplicate_key_reported_with_both_lines_not_crash() -> None:
    doc = read_yaml_text("a: 1\nb: 2\na: 3\n", "config.yaml")
    assert doc.get("a").value == 3
    (issue,) = doc.issues
    assert (issue.kind, issue.line) == ("duplicate-key", 3) and "line 1" in issue.message


def test_flat_and_nested_spelling_later_wins() -> None:
    doc = read_yaml_text("taskmanager.numberOfTaskSlots: 2\ntaskmanager:\n  numberOfTaskSlots: 4\n", "c")
    assert doc.get("taskmanager.numberOfTaskSlots").value == 4
    (issue,) = doc.issues
    assert (issue.kind, issue.line) == ("shadowed-key", 3) and "line 1" in issue.message


def test_null_value_and_non_string_keys() -> None:
    doc = read_yaml_text("a:\n1: x\ntrue: y\n~: z\n", "config.yaml")
    assert doc.values() == {"a": None, "1": "x", "true": "y"}
    assert [i.kind for i in doc.issues] == ["non-string-key", "non-string-key", "non-string-key",
                                            "empty-value"]


def test_empty_and_comment_only_documents() -> None:
    assert read_yaml_text("", "c").entries == ()
    assert read_yaml_text("# nothing\n", "c").entries == ()
    assert read_yaml_text("a: {}\n", "c").entries == ()


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("a: 1\nb: [1, 2\nc: 3\n", 3, "invalid YAML"),
    ("a: 1\n  b: 2\n", 2, "invalid YAML"),
    ("a: 'x\n", 2, "invalid YAML"),
    ("- a\n- b\n", 1, "not a mapping"),
    ("just a string\n", 1, "not a mapping"),
    ("a: 1\n---\nb: 2\n", 3, "2 YAML documents"),
    ("a: \x07\n", 1, "U+0007"),
    ("a: *nope\n", 1, "invalid YAML"),
])
def test_invalid_yaml_is_one_config_error_with_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        read_yaml_text(text, "conf/config.yaml")
    assert err.value.line == line and err.value.file == "conf/config.yaml"
    assert fragment in err.value.message and "\n" not in err.value.one_line()


def test_billion_laughs_is_refused() -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    with pytest.raises(ConfigError, match="aliases"):
        read_yaml_text("\n".join(lines) + "\n", "config.yaml")


def test_alias_expansion_is_bounded_even_under_the_alias_limit() -> None:
    # 40 aliases to a mapping that itself holds aliases: few aliases, exponential expansion.
    lines = ["m0: &m0 {k: v, j: w}"]
    for i in range(1, 21):
        lines.append(f"m{i}: &m{i} {{x: *m{i - 1}, y: *m{i - 1}}}")
    with pytest.raises(ConfigError, match="nodes"):
        read_yaml_text("\n".join(lines) + "\n", "config.yaml")


def test_deep_nesting_is_refused() -> None:
    with pytest.raises(ConfigError, match="nested"):
        read_yaml_text("a: " + "[" * 5000 + "]" * 5000 + "\n", "config.yaml")
    deep = "".join("  " * i + f"k{i}:\n" for i in range(150)) + "  " * 150 + "v: 1\n"
    with pytest.raises(ConfigError, match="nested"):
        read_yaml_text(deep, "config.yaml")


def test_unknown_tag_is_an_issue_not_a_crash() -> None:
    doc = read_yaml_text("a: !custom x\nb: !!int '5'\nc: !!int nope\n", "config.yaml")
    assert doc.values() == {"a": "x", "b": 5, "c": "nope"}
    assert [i.kind for i in doc.issues] == ["unsupported-tag", "bad-scalar"]


def test_line_offset_for_embedded_text() -> None:
    doc = read_yaml_text("a:\n  b: 1\n", "m.yaml", first_line=10)
    assert doc.get("a.b").line == 11
    with pytest.raises(ConfigError) as err:
        read_yaml_text("a: [\n", "m.yaml", first_line=10)
    assert err.value.line is not None and err.value.line >= 10
