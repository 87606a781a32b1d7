"""Untrusted YAML/JSON documents fail as one FlinktuneError with file and line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.config.safe_load import load_json, load_yaml
from flinktune.errors import ConfigError, ScenarioError


@pytest.mark.parametrize(("text", "expected"), [
    ("a: !!int x\n", "invalid literal"),           # PyYAML constructor error
    ("a: " + "[" * 5000 + "\n", "nests too deeply"),  # composer recursion
    ("a: [1, 2\n", "expected"),                     # scanner/parser error, with a line
])
def test_bad_yaml_is_one_error(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_yaml(text, file="p.yaml", prefix="profile is not valid YAML")
    line = caught.value.one_line()
    assert line.startswith("p.yaml") and "profile is not valid YAML" in line and expected in line
    assert "\n" not in line


def test_yaml_error_class_and_line_are_kept() -> None:
    with pytest.raises(ScenarioError) as caught:
        load_yaml("ok: 1\nbad: [\n", file="s.yaml", error=ScenarioError)
    assert caught.value.line == 3


def test_json_errors_carry_the_line() -> None:
    with pytest.raises(ConfigError) as caught:
        load_json('{\n"a": 1,\n}', file="plan.json", prefix="the plan is not JSON")
    assert caught.value.line == 3 and "the plan is not JSON" in caught.value.message
    with pytest.raises(ConfigError, match="nests too deeply"):
        load_json("[" * 100_000, file="plan.json")


def test_good_documents_load() -> None:
    assert load_yaml("a: {b: [1, 2]}\n", file="x") == {"a": {"b": [1, 2]}}
    assert load_json('{"a": [1]}', file="x") == {"a": [1]}


@pytest.mark.parametrize("text", ["rtt: !!int x\n", "a: " + "[" * 3000 + "\n"])
def test_model_profile_with_hostile_yaml_exits_2(tmp_path: Path, text: str) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["model", "--profile", str(profile)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert str(profile) in result.output
