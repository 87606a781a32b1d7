"""The validated data of the bundled rules shipped in the package (flinktune/data/bundled_rules.json).

It lets a machine that has never run flinktune (a CI container) lint without importing pydantic;
it is used only for rule files whose exact bytes it was built from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from flinktune.rules.loader import (
    SHIPPED_FILE,
    RuleText,
    build_shipped_data,
    bundled_rule_texts,
    shipped_validated,
)


def test_shipped_data_is_up_to_date() -> None:
    shipped = json.loads(SHIPPED_FILE.read_text(encoding="utf-8"))
    assert shipped == build_shipped_data(), (
        "flinktune/data/bundled_rules.json is out of date: run  python tools/rules/build_bundled_data.py")


def _probe(code: str, cache: Path) -> list[str]:
    """What ``code`` prints in a fresh interpreter with an empty rule cache."""
    env = {**os.environ, "FLINKTUNE_CACHE_DIR": str(cache)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_first_run_on_a_fresh_machine_imports_neither_pydantic_nor_yaml(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from flinktune.rules import load_rules\n"
        "ruleset = load_rules()\n"
        "print(len(ruleset), 'pydantic' in sys.modules, 'yaml' in sys.modules)\n"
    )
    assert _probe(probe, tmp_path / "empty-cache") == [str(len(bundled_rule_texts())), "False", "False"]


def test_an_edited_bundled_rule_is_validated_again() -> None:
    text = next(t for t in bundled_rule_texts() if t.source.endswith("FTC001-unknown-key.yaml"))
    assert shipped_validated(text) is not None
    assert text.data is not None
    edited = RuleText(text.source, text.data.replace(b"severity: warning", b"severity: error"), bundled=True)
    assert shipped_validated(edited) is None
    # A user's rule file is never taken from the shipped data, even with a bundled file's bytes.
    assert shipped_validated(RuleText("mine/FTC001.yaml", text.data, bundled=False)) is None


def test_shipped_trees_are_up_to_date_and_equal_the_parsed_expressions() -> None:
    from flinktune.rules.lang import decode_tree, parse
    from flinktune.rules.loader import TREES_FILE, build_shipped_trees

    shipped = json.loads(TREES_FILE.read_text(encoding="utf-8"))
    assert shipped == json.loads(json.dumps(build_shipped_trees())), (
        "flinktune/data/bundled_rules_trees.json is out of date: run  "
        "python tools/rules/build_bundled_data.py")
    for source, encoded in shipped["trees"].items():
        assert decode_tree(encoded) == parse(source).root, source


def test_a_lint_builds_the_bundled_expressions_from_the_shipped_trees(tmp_path: Path) -> None:
    probe = (
        "from flinktune.rules import lang\n"
        "calls = []\n"
        "real = lang.parse\n"
        "lang.parse = lambda source: calls.append(source) or real(source)\n"
        "from flinktune.rules import load_rules\n"
        "ruleset = load_rules()\n"
        "for rule in ruleset:\n"
        "    rule.condition.root\n"
        "    [c.root for _, c in rule.lets]\n"
        "print(len(calls), len(lang._PARSED))\n"
    )
    parsed, shipped = (int(n) for n in _probe(probe, tmp_path / "cache"))
    assert parsed == 0 and shipped > 300
