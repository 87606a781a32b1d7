from __future__ import annotations

from pathlib import Path

import pytest

from flinktune.errors import ConfigError
from flinktune.findings import Severity
from flinktune.lint.project import discover, find_project_config, load_project_config


def test_yaml_project_config(tmp_path: Path) -> None:
    (tmp_path / ".flinktune.yaml").write_text(
        "select: [FTN, FTC]\nignore: [ftc009]\nseverity:\n  FTN001: error\nrules: [my-rules]\n"
        "fail-on: error\nflink-version: 1.17\nbaseline: ci/baseline.json\n", encoding="utf-8")
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    config = discover(nested)
    assert config.path == tmp_path / ".flinktune.yaml"
    assert config.select == ("FTN", "FTC") and config.ignore == ("FTC009",)
    assert config.severity == (("FTN001", Severity.ERROR),)
    assert config.rules == (tmp_path / "my-rules",)
    assert config.fail_on == Severity.ERROR and config.flink_version == "1.17"
    assert config.baseline == tmp_path / "ci" / "baseline.json"


def test_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.flinktune]\nignore = ["FTX"]\n"fail-on" = "info"\n', encoding="utf-8")
    assert find_project_config(tmp_path) == tmp_path / "pyproject.toml"
    config = discover(tmp_path)
    assert config.ignore == ("FTX",) and config.fail_on == Severity.INFO


def test_pyproject_without_table_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    sub = tmp_path / "sub"
    sub.mkdir()
    # tmp_path lives under the system temp folder, which has no project config above it.
    assert find_project_config(sub) is None


def test_unknown_field_is_rejected_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / ".flinktune.yaml"
    path.write_text("select: [FTN]\nselct: [FTC]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_project_config(path)
    assert caught.value.line == 2
    assert "unknown setting 'selct'" in caught.value.one_line()
    assert caught.value.one_line().startswith(f"{path}:2: ")


@pytest.mark.parametrize("text, match", [
    ("severity:\n  FTN001: fatal\n", "severity.FTN001"),
    ("fail-on: sometimes\n", "fail-on"),
    ("select: [\"FT N\"]\n", "not a rule code"),
    ("flink-version: banana\n", "invalid flink-version"),
    ("- a\n- b\n", "must be a mapping"),
    ("select: [a\n", "invalid YAML"),
])
def test_invalid_values(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / ".flinktune.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=match):
        load_project_config(path)


def test_explicit_config_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        discover(tmp_path, tmp_path / "nope.yaml")


PROBE = """
import sys
from pathlib import Path
from flinktune.lint.project import discover
config = discover(Path(sys.argv[1]))
print(repr((config.select, config.ignore, config.severity, config.fail_on, config.flink_version)),
      "yaml" in sys.modules)
"""


def _probe(folder: Path, cache: Path) -> tuple[str, str]:
    import os
    import subprocess
    import sys

    env = {**os.environ, "FLINKTUNE_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(folder)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    settings, imported = done.stdout.rsplit(" ", 1)
    return settings, imported.strip()


def test_an_unchanged_yaml_project_config_is_read_without_pyyaml(tmp_path: Path) -> None:
    # PyYAML is a slow import for a lint (issue 26): its reading of the file is cached by the file's hash.
    (tmp_path / ".flinktune.yaml").write_text(
        "select: [FTN, FTC]\nignore: [ftc009]\nseverity:\n  FTN001: error\nfail-on: error\n"
        "flink-version: 1.17\n", encoding="utf-8")
    first, second = _probe(tmp_path, tmp_path / "cache"), _probe(tmp_path, tmp_path / "cache")
    assert first[0] == second[0] and "FTN001" in first[0] and "'1.17'" in first[0]
    assert (first[1], second[1]) == ("True", "False")
    # Another text is another key: read by PyYAML again.
    (tmp_path / ".flinktune.yaml").write_text("ignore: [FTC009]\n", encoding="utf-8")
    changed = _probe(tmp_path, tmp_path / "cache")
    assert changed[1] == "True" and "FTN001" not in changed[0]


def test_only_plain_json_data_is_cached() -> None:
    import datetime

    from flinktune.lint.project import _plain

    assert _plain({"select": ["FTC"], "severity": {"FTC006": "warning"}, "n": 1, "x": 1.5, "b": None})
    # What JSON would not give back as it was: dates, sets, bytes, keys other than text.
    for value in ({"d": datetime.date(2020, 1, 1)}, {"s": {1, 2}}, {"b": b"x"}, {1: "a"}, ("t",)):
        assert not _plain(value)
