"""Loading rule files: every problem of every file reported at once, with file and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from flinktune.errors import RuleError
from flinktune.rules import load_rules
from flinktune.rules.loader import build_ruleset, bundled_rule_texts

GOOD = """\
code: FTX001
name: slots-too-many
severity: warning
scope: config
versions: ">=1.17"
let:
  slots: config("taskmanager.numberOfTaskSlots")
condition: slots > 64
message: "{slots} slots"
why: Too many slots.
references: [https://example.org]
examples:
  pass:
    - version: "1.20"
      config: {taskmanager.numberOfTaskSlots: "4"}
  fail:
    - version: "1.20"
      config: {taskmanager.numberOfTaskSlots: "100"}
      message: "100 slots"
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems_of(*dirs: Path) -> tuple[str, ...]:
    with pytest.raises(RuleError) as info:
        load_rules(extra_dirs=dirs)
    return info.value.problems


def test_bundled_rules_load() -> None:
    ruleset = load_rules()
    assert ruleset.get("FTC001") is not None
    assert ruleset.get("ftc030").name == "network-memory-too-small"
    assert all(rule.bundled for rule in ruleset)
    assert len({r.code for r in ruleset}) == len(ruleset)


def test_user_rules_are_added(tmp_path: Path) -> None:
    write(tmp_path, "slots.yaml", GOOD)
    ruleset = load_rules(extra_dirs=[tmp_path])
    rule = ruleset.get("FTX001")
    assert rule is not None and not rule.bundled
    assert rule.source == str(tmp_path / "slots.yaml")


def test_all_problems_in_all_files_are_collected(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD.replace("severity: warning", "severity: fatal").replace(
        "why: Too many slots.\n", "why: Too many slots.\nsummary: extra field\n"))
    write(tmp_path, "b.yaml", GOOD.replace("FTX001", "FTX002").replace("slots-too-many", "other")
          .replace("condition: slots > 64", "condition: slots >> 64"))
    write(tmp_path, "c.yaml", "code: [unclosed\n")
    problems = problems_of(tmp_path)
    a, b, c = (str(tmp_path / n) for n in ("a.yaml", "b.yaml", "c.yaml"))
    assert any(p.startswith(f"{a}: severity:") for p in problems), problems
    assert any(p.startswith(f"{a}: summary:") and "Extra inputs" in p for p in problems), problems
    assert any(p.startswith(f"{b}: condition:") and "column 8" in p for p in problems), problems
    assert any(p.startswith(f"{c}:") and "invalid YAML" in p for p in problems), problems


def test_the_error_is_one_line_naming_the_first_problem(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "not: a rule\n")
    with pytest.raises(RuleError) as info:
        load_rules(extra_dirs=[tmp_path])
    assert "\n" not in info.value.one_line()
    assert "problems in rule files" in info.value.one_line()


def test_duplicate_codes_and_names(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yaml", GOOD)
    write(tmp_path, "c.yaml", GOOD.replace("FTX001", "FTC001").replace("slots-too-many", "mine"))
    problems = problems_of(tmp_path)
    assert any("duplicate rule code FTX001" in p for p in problems)
    assert any("duplicate rule name slots-too-many" in p for p in problems)
    assert any("duplicate rule code FTC001" in p and "rules/config/FTC001" in p for p in problems)


@pytest.mark.parametrize(("field", "bad", "fragment"), [
    ("code", "code: FT001", "code: String should match pattern"),
    ("name", "name: Slots_Too_Many", "name: String should match pattern"),
    ("scope", "scope: job", "scope: Input should be"),
    ("versions", 'versions: "around 1.17"', "versions: Value error"),
])
def test_field_validation(tmp_path: Path, field: str, bad: str, fragment: str) -> None:
    lines = [bad if line.startswith(f"{field}:") else line for line in GOOD.splitlines()]
    write(tmp_path, "a.yaml", "\n".join(lines) + "\n")
    problems = problems_of(tmp_path)
    assert any(fragment in p for p in problems), problems


def test_unknown_names_placeholders_and_functions(tmp_path: Path) -> None:
    text = (GOOD.replace("condition: slots > 64", "condition: slots > limit and evil('x')")
            .replace('message: "{slots} slots"', 'message: "{slots} slots {nothing}"'))
    write(tmp_path, "a.yaml", text)
    problems = problems_of(tmp_path)
    assert any("condition: unknown name 'limit'" in p for p in problems), problems
    assert any("condition: unknown function 'evil'" in p for p in problems), problems
    assert any("message: unknown placeholder '{nothing}'" in p for p in problems), problems


@pytest.mark.parametrize("condition", [
    "__import__('os').system('true')",
    "slots.__class__",
    "lambda: slots",
    "[s for s in slots if]",
    "(" * 60 + "slots" + ")" * 60,
    "2 ** 10 ** 10",
    "slots > 1; import os",
    "exec('1')",
])
def test_hostile_conditions_are_refused(tmp_path: Path, condition: str) -> None:
    write(tmp_path, "evil.yaml", GOOD.replace("condition: slots > 64", f"condition: {condition!r}"))
    problems = problems_of(tmp_path)
    assert any("evil.yaml: condition:" in p for p in problems), problems


def test_huge_exponent_on_bound_data_fails_when_evaluated(tmp_path: Path) -> None:
    # Constant arithmetic is checked at load time; an exponent that comes from data only at run time.
    from flinktune.config.types import ConfigDocument, ConfigFormat
    from flinktune.errors import ConditionError
    from flinktune.rules import evaluate_document
    from flinktune.versions import FlinkVersion

    write(tmp_path, "pow.yaml", GOOD.replace("condition: slots > 64", "condition: 2 ** (slots * 100) > 1"))
    ruleset = load_rules(extra_dirs=[tmp_path], bundled=False)
    doc = ConfigDocument("f.yaml", ConfigFormat.FLAT, ())
    with pytest.raises(ConditionError, match="exponent"):
        evaluate_document(ruleset, doc, FlinkVersion(1, 20))


def test_yaml_aliases_are_refused(tmp_path: Path) -> None:
    bomb = GOOD + 'x: &a ["l","o","l"]\ny: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nz: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n'
    write(tmp_path, "bomb.yaml", bomb)
    problems = problems_of(tmp_path)
    assert any("aliases are not allowed" in p for p in problems), problems


def test_bad_fix_shapes(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD + "fix: {action: set, key: x, safe: true}\n")
    problems = problems_of(tmp_path)
    assert any("fix:" in p and "needs a value" in p for p in problems), problems
    for safe in ("safe: true", "applicability: safe"):
        write(tmp_path, "a.yaml", GOOD + f"fix: {{action: set, key: x, value: '1', {safe}}}\n")
        problems = problems_of(tmp_path)
        assert any("only rename and delete fixes may be safe" in p for p in problems), problems
    write(tmp_path, "a.yaml", GOOD + "fix: {action: delete, key: x, safe: true, applicability: unsafe}\n")
    problems = problems_of(tmp_path)
    assert any("contradicts" in p for p in problems), problems
    write(tmp_path, "a.yaml", GOOD + "fix: {action: delete, key: x, applicability: sometimes}\n")
    assert any("applicability" in p for p in problems_of(tmp_path))


@pytest.mark.parametrize(("stated", "expected"), [
    ("", "unsafe"), ("safe: true", "safe"), ("applicability: safe", "safe"),
    ("applicability: manual", "manual"), ("applicability: unsafe", "unsafe"),
])
def test_fix_applicability_is_the_rules_to_state(tmp_path: Path, stated: str, expected: str) -> None:
    # Stated in the rule file (safe: true is the older spelling), unsafe when not: lint --fix applies
    # only what the rule says cannot change what Flink runs with.
    extra = f", {stated}" if stated else ""
    write(tmp_path, "a.yaml", GOOD + f"fix: {{action: delete, key: x{extra}}}\n")
    ruleset = load_rules(extra_dirs=[tmp_path], bundled=False)
    (rule,) = list(ruleset)
    assert rule.fix is not None and rule.fix.applicability == expected


def test_versions_written_as_numbers_are_refused(tmp_path: Path) -> None:
    as_text = '- version: "1.20"\n      config: {taskmanager.numberOfTaskSlots: "4"}'
    as_number = '- version: 1.20\n      config: {taskmanager.numberOfTaskSlots: "4"}'
    write(tmp_path, "a.yaml", GOOD.replace(as_text, as_number))
    problems = problems_of(tmp_path)
    assert any("examples.pass[0].version" in p and "ambiguous" in p for p in problems), problems


def test_unreadable_inputs(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert any("does not exist" in p for p in problems_of(missing))
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00\x01binary")
    assert any("not UTF-8" in p or "binary" in p for p in problems_of(tmp_path))


def test_oversized_rule_file(tmp_path: Path) -> None:
    write(tmp_path, "big.yaml", GOOD + "#" + "x" * 300_000 + "\n")
    assert any("bytes (at most" in p for p in problems_of(tmp_path))


def test_bundled_rules_are_read_through_the_package() -> None:
    texts = bundled_rule_texts()
    assert texts and all(t.source.startswith("rules/") for t in texts)
    assert len(build_ruleset(texts)) == len(texts)


def test_missing_bundled_rules_are_an_error(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from flinktune.rules import loader

    monkeypatch.setattr(loader, "_bundled_root", lambda: tmp_path)
    with pytest.raises(RuleError, match="bundled rules are missing"):
        load_rules()
