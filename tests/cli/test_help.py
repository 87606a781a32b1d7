"""Walk every command's --help: it works, shared flags mean the same everywhere, and help shows
defaults as defaults and examples as examples (issue 15, defect 6 and the conventions).

Before: `recommend --help` said "--latency-target ... (20ms)" and "--record-size ... (200b)",
which read as defaults but were examples (the real default is none / unknown).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from flinktune.cli.app import app

# A bare "(20ms)" / "(200b)" / "(10Gbit/s)" at the end of a help text: a value with no word saying
# whether it is the default or an example.
_BARE_VALUE = re.compile(r"\((\d[\d.,]*\s*[A-Za-z/%]+)\)")
SHARED = {"-f": "--format", "-o": "--output", "-q": "--quiet", "-v": "--verbose"}


def _commands() -> Iterator[tuple[list[str], Any]]:
    root = typer.main.get_command(app)

    def walk(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
        subs = getattr(command, "commands", None)
        if subs:
            yield path, command
            for name, sub in subs.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, command

    yield from walk(root, [])


COMMANDS = list(_commands())


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "flinktune" for p, _ in COMMANDS])
def test_help_works_and_is_honest(path: list[str], command: Any) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
    for param in getattr(command, "params", []):
        text = getattr(param, "help", None) or ""
        for match in _BARE_VALUE.finditer(text):
            before = text[: match.start()].lower()
            assert "e.g." in before[-40:] or "default" in before[-40:], (
                f"{' '.join(path)} {param.opts}: '{match.group(0)}' reads as a default; "
                "say 'e.g.' or 'default'"
            )


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "flinktune" for p, _ in COMMANDS])
def test_shared_flags_mean_the_same(path: list[str], command: Any) -> None:
    options = [p for p in getattr(command, "params", []) if getattr(p, "param_type_name", "") == "option"]
    by_flag = {flag: p for p in options for flag in p.opts}
    for short, long in SHARED.items():
        if short in by_flag:
            assert long in by_flag[short].opts, f"{' '.join(path)}: {short} is not {long}"
    if "--format" in by_flag:
        assert "-f" in by_flag["--format"].opts, f"{' '.join(path)}: --format without -f"


def test_rules_explain_takes_a_code_or_a_name() -> None:
    by_code = CliRunner().invoke(app, ["rules", "explain", "FTC015"])
    assert by_code.exit_code == 0, by_code.output
    name = by_code.output.split()[1] if by_code.output.split()[0] == "FTC015" else None
    from flinktune.rules import load_rules

    rule = load_rules().get("FTC015")
    assert rule is not None
    by_name = CliRunner().invoke(app, ["rules", "explain", rule.name])
    assert by_name.exit_code == 0, by_name.output
    assert by_name.output == by_code.output
    del name
    unknown = CliRunner().invoke(app, ["rules", "explain", "no-such-rule"])
    assert unknown.exit_code == 2


def test_lint_names_the_catalog_it_judged_by(tmp_path: Any) -> None:
    import subprocess
    import sys

    conf = tmp_path / "flink-conf.yaml"
    conf.write_text("taskmanager.numberOfTaskSlots: 2\n")
    run = [sys.executable, "-m", "flinktune", "lint", str(conf), "--flink-version"]
    newer = subprocess.run(
        [*run, "9.9"], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    from flinktune.versions import newest_known

    assert f"judged by Flink {newest_known()}" in newer.stderr, newer.stderr
    # Older than the oldest catalog (1.13): refused, one line, exit 2 (docs/lint.md).
    older = subprocess.run(
        [*run, "1.12"], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path
    )
    assert older.returncode == 2 and "older than the oldest supported version 1.13" in older.stderr
