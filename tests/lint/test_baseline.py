from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinktune.errors import ConfigError
from flinktune.findings import Finding, Location, Severity
from flinktune.lint.baseline import fingerprint, load_baseline, normalised_message, render_baseline


def _f(code: str, file: str, line: int, key: str, message: str = "m") -> Finding:
    return Finding(code, "n", Severity.WARNING, message, Location(file, line, key))


def test_fingerprint_ignores_lines_but_not_code_file_key_or_message(tmp_path: Path) -> None:
    base = _f("FTC001", str(tmp_path / "a.yaml"), 3, "k")
    a, b = str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")
    assert fingerprint(base, tmp_path) == fingerprint(_f("FTC001", a, 40, "k"), tmp_path)
    for other in (_f("FTC002", a, 3, "k"), _f("FTC001", b, 3, "k"),
                  _f("FTC001", a, 3, "k2"), _f("FTC001", a, 3, "k", "x")):
        assert fingerprint(other, tmp_path) != fingerprint(base, tmp_path)


def test_line_references_in_messages_are_normalised() -> None:
    assert normalised_message("duplicate key, first set on line 12") == "duplicate key, first set on line N"


def test_round_trip_counts_duplicates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "baseline.json"
    old = [_f("FTC001", "conf/a.yaml", 3, "k"), _f("FTC001", "conf/a.yaml", 9, "k")]
    path.write_text(render_baseline(old, path), encoding="utf-8")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "flinktune-baseline" and doc["findings"][0]["file"] == "conf/a.yaml"
    baseline = load_baseline(path)
    now = [_f("FTC001", "conf/a.yaml", 5, "k"), _f("FTC001", "conf/a.yaml", 7, "k"),
           _f("FTC001", "conf/a.yaml", 11, "k"), _f("FTN001", "conf/a.yaml", 2, "n")]
    new, known = baseline.split(now)
    assert len(known) == 2
    assert [(f.code, f.location.line) for f in new] == [("FTC001", 11), ("FTN001", 2)]


@pytest.mark.parametrize("content, match", [
    ("{not json", "baseline is not valid JSON"),
    ('{"format": "other"}', "not a flinktune baseline"),
    ('{"format": "flinktune-baseline", "findings": [{}]}', "entry 0 has no"),
])
def test_bad_baselines_are_config_errors(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=match):
        load_baseline(path)


def test_missing_baseline(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_baseline(tmp_path / "nope.json")
