"""`flinktune rules list | explain | check` and the --rules option."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from flinktune.cli.app import app

RUNNER = CliRunner()

USER_RULE = """\
code: FTX001
name: too-many-slots
severity: warning
scope: config
let:
  slots: config("taskmanager.numberOfTaskSlots")
condition: slots > 64
message: "{slots} slots per TaskManager"
why: More slots than cores.
references: [https://example.org/slots]
examples:
  pass: [{version: "1.20", config: {taskmanager.numberOfTaskSlots: "4"}}]
  fail: [{version: "1.20", config: {taskmanager.numberOfTaskSlots: "100"}, message: "100 slots"}]
"""


def run(*args: str) -> tuple[int, str, str]:
    result = RUNNER.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def user_dir(tmp_path: Path, text: str = USER_RULE) -> Path:
    folder = tmp_path / "team-rules"
    folder.mkdir()
    (folder / "FTX001.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def test_list_text_and_json(tmp_path: Path) -> None:
    code, out, _ = run("rules", "list")
    assert code == 0 and "FTC001" in out and "unknown-key" in out
    code, out, _ = run("rules", "list", "--format", "json", "--rules", str(user_dir(tmp_path)))
    data = json.loads(out)
    codes = [r["code"] for r in data["rules"]]
    assert "FTX001" in codes and "FTC030" in codes
    ftc003 = next(r for r in data["rules"] if r["code"] == "FTC003")
    assert ftc003["fix"]["safe"] is True


def test_explain() -> None:
    code, out, _ = run("rules", "explain", "ftc030")
    assert code == 0
    assert "network-memory-too-small" in out and "NetworkBufferPool" in out and "Fails on" in out
    code, _, err = run("rules", "explain", "FTC999")
    # Issue 15: explain takes a code or a name, and says so when neither matches.
    assert code == 2 and "no rule with code or name 'FTC999'" in err


def test_check_bundled_and_user_rules(tmp_path: Path) -> None:
    code, out, _ = run("rules", "check")
    assert code == 0 and "all passed" in out
    code, out, _ = run("rules", "check", str(user_dir(tmp_path)))
    assert code == 0 and out.strip() == "1 rule, 2 examples: all passed"


def test_check_reports_failing_examples(tmp_path: Path) -> None:
    folder = user_dir(tmp_path, USER_RULE.replace('message: "100 slots"', 'message: "1000 slots"'))
    code, out, _ = run("rules", "check", str(folder))
    assert code == 1
    assert "FTX001 fail[0]: expected a message containing '1000 slots'" in out


def test_check_reports_invalid_rule_files(tmp_path: Path) -> None:
    folder = user_dir(tmp_path, USER_RULE.replace("scope: config", "scope: cluster").replace(
        "condition: slots > 64", "condition: slots >"))
    code, out, _ = run("rules", "check", str(folder))
    assert code == 1
    assert "FTX001.yaml: scope:" in out


def test_check_unreadable_input_exits_2(tmp_path: Path) -> None:
    code, _, err = run("rules", "check", str(tmp_path / "missing"))
    assert code == 2 and "does not exist" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("rules", "check", str(empty))
    assert code == 2 and "no rule files" in err


def test_bad_rules_dir_is_one_line_exit_2(tmp_path: Path) -> None:
    folder = user_dir(tmp_path, "code: [\n")
    code, out, err = run("rules", "list", "--rules", str(folder))
    assert code == 2
    assert err.count("\n") == 1 and "invalid YAML" in err and "Traceback" not in out + err
