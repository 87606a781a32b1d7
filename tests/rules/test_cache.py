"""The validated-rules cache: pydantic validates a rule file once; unchanged files skip it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from flinktune.rules import load_rules
from flinktune.rules.loader import CACHE_FILE_NAME, MAX_CACHE_SALTS, ValidatedCache

RULE = textwrap.dedent("""\
    code: FTX001
    name: too-many-slots
    severity: warning
    scope: config
    condition: config("taskmanager.numberOfTaskSlots") > 64
    message: "too many slots"
    why: w
    references: [x]
    examples:
      pass: [{config: {taskmanager.numberOfTaskSlots: "4"}}]
      fail: [{config: {taskmanager.numberOfTaskSlots: "100"}}]
    """)

PROBE = (
    "import sys\n"
    "from flinktune.rules import load_rules\n"
    "ruleset = load_rules(extra_dirs=sys.argv[1:])\n"
    "print(len(ruleset), 'pydantic' in sys.modules)\n"
)


def probe(cache: Path, *dirs: Path) -> str:
    env = {**os.environ, "FLINKTUNE_CACHE_DIR": str(cache)}
    result = subprocess.run([sys.executable, "-c", PROBE, *map(str, dirs)], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_second_run_does_not_import_pydantic(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "a.yaml").write_text(RULE, encoding="utf-8")
    count, validated = probe(cache, rules).split()
    assert validated == "True" and (cache / CACHE_FILE_NAME).is_file()
    assert probe(cache, rules) == f"{count} False"
    # An edited file is validated again (its bytes are the key), and so is an invalid one, every time.
    (rules / "a.yaml").write_text(RULE.replace("too many slots", "way too many slots"), encoding="utf-8")
    assert probe(cache, rules) == f"{count} True"
    assert probe(cache, rules) == f"{count} False"


def test_broken_cache_is_ignored(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FLINKTUNE_CACHE_DIR", str(tmp_path))
    (tmp_path / CACHE_FILE_NAME).write_text("{not json", encoding="utf-8")
    assert load_rules().get("FTC001") is not None
    # Rewritten: the next run finds every bundled rule in it.
    assert len(ValidatedCache(tmp_path / CACHE_FILE_NAME).entries) >= 40


def test_unwritable_cache_is_ignored(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("FLINKTUNE_CACHE_DIR", str(blocker / "sub"))
    assert load_rules().get("FTC001") is not None


def test_cache_can_be_switched_off(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FLINKTUNE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLINKTUNE_NO_CACHE", "1")
    load_rules()
    assert not (tmp_path / CACHE_FILE_NAME).exists()


CERTIFIED_PROBE = (
    "import sys\n"
    "from flinktune.rules import load_rules, evaluate_document\n"
    "from flinktune.config.reader import read_config_text\n"
    "from flinktune.versions import parse_version\n"
    "ruleset = load_rules(extra_dirs=sys.argv[1:])\n"
    "rule = ruleset.get('FTX001')\n"
    "deferred = rule.condition._root is None\n"
    "doc = read_config_text('taskmanager.numberOfTaskSlots: 100\\n', 'flink-conf.yaml')[0]\n"
    "codes = [f.code for f in evaluate_document(ruleset, doc, parse_version('1.20'))]\n"
    "print(deferred, 'FTX001' in codes, rule.condition == rule.condition.__class__(rule.condition.source,"
    " rule.condition.root))\n"
)


def test_clean_rules_are_parsed_on_first_use_from_the_second_run(tmp_path: Path) -> None:
    # The first run validates and compiles (and notes that the text compiled cleanly); later runs
    # build the same rule with its conditions parsed only when evaluated, with the same result.
    cache = tmp_path / "cache"
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "a.yaml").write_text(RULE, encoding="utf-8")
    env = {**os.environ, "FLINKTUNE_CACHE_DIR": str(cache)}

    def run() -> str:
        result = subprocess.run([sys.executable, "-c", CERTIFIED_PROBE, str(rules)], capture_output=True,
                                text=True, env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert run() == "False True True"
    assert run() == "True True True"


def test_entries_of_other_versions_are_kept_but_not_read(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # One line per salt (flinktune version): a run decodes only its own line, keeps a few others
    # (another install may use them) and drops the oldest, so entries never pile up.
    monkeypatch.setenv("FLINKTUNE_CACHE_DIR", str(tmp_path))
    stale = [f"{i:064x} " + json.dumps({f"{j:064x}": {"x": j} for j in range(50)}) for i in range(6)]
    (tmp_path / CACHE_FILE_NAME).write_text("\n".join(stale) + "\n", encoding="utf-8")
    assert load_rules().get("FTC001") is not None
    lines = (tmp_path / CACHE_FILE_NAME).read_text(encoding="utf-8").splitlines()
    mine = ValidatedCache(tmp_path / CACHE_FILE_NAME)
    assert len(lines) == MAX_CACHE_SALTS
    assert lines[0].startswith(mine.salt.hex() + " ") and lines[1:] == stale[:MAX_CACHE_SALTS - 1]
    assert len(mine.entries) >= 40 and len(mine.others) == MAX_CACHE_SALTS - 1
