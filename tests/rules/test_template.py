"""Message templates: placeholders, formats, escapes, and no way to reach Python attributes."""

from __future__ import annotations

import pytest

from flinktune.errors import ConditionError
from flinktune.rules.template import format_value, parse_template


@pytest.mark.parametrize(("value", "spec", "text"), [
    (32768, "memory", "32kb"),
    (134217730, "memory", "128.0mb"),
    (134217730, "flink_memory", "134217730b"),
    (64 * 1024**2, "flink_memory", "64mb"),
    (100, "duration", "100 ms"),
    (60_000, "duration", "1 min"),
    (0.25, "percent", "25%"),
    (2.6, "int", "3"),
    (2.0, "", "2"),
    (("a", "b"), "list", "a, b"),
    (None, "memory", "null"),
    (True, "", "true"),
])
def test_formats(value: object, spec: str, text: str) -> None:
    assert format_value(value, spec) == text


def test_render_with_fields_and_escapes() -> None:
    template = parse_template("{{literal}} {issue.kind} at {env.slots:int} {x:memory}")
    assert template.names() == {"issue", "env", "x"}
    rendered = template.render({"issue": {"kind": "duplicate-key"}, "env": {"slots": 4.0}, "x": 1024})
    assert rendered == "{literal} duplicate-key at 4 1kb"


@pytest.mark.parametrize("text", [
    "{x.__class__}", "{__import__}", "{0}", "{x!r}", "{x:>10}", "{x:unknown}", "{x", "x}", "{x[0]}",
    "{x.y()}",
])
def test_bad_placeholders(text: str) -> None:
    with pytest.raises(ConditionError):
        parse_template(text)
