"""SARIF output validates against the official OASIS SARIF 2.1.0 schema (tests/data, see SOURCE)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from flinktune.findings import Finding, Location, Severity
from flinktune.lint.model import LintResult
from flinktune.report.sarif import artifact_uri, render_sarif

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def _errors(validator: jsonschema.Draft4Validator, doc: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def test_sarif_validates_and_carries_findings(sample_result: LintResult, validator, tmp_path: Path) -> None:
    doc = json.loads(render_sarif(sample_result, tool_version="0.1.0", base_dir=tmp_path))
    assert _errors(validator, doc) == []
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "flinktune"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["FTC001", "FTN002", "FTX003"]
    first, second, third = run["results"]
    assert first["ruleId"] == "FTC001" and first["level"] == "warning" and first["ruleIndex"] == 0
    location = first["locations"][0]
    assert location["physicalLocation"] == {"artifactLocation": {"uri": "conf/flink-conf.yaml"},
                                            "region": {"startLine": 3}}
    assert location["logicalLocations"] == [{"name": "taskmanager.network.memory.min", "kind": "member"}]
    assert second["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "k8s/deploy%20ment.yaml"
    assert third["level"] == "note" and "region" not in third["locations"][0]["physicalLocation"]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 7}


def test_sarif_empty_run_validates(empty_result: LintResult, validator) -> None:
    doc = json.loads(render_sarif(empty_result))
    assert _errors(validator, doc) == []
    assert doc["runs"][0]["results"] == []


def test_sarif_schema_catches_a_broken_log(validator) -> None:
    # The validator is not vacuous: a result without a message is rejected.
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "A"}]}]}
    assert _errors(validator, bad)


def test_absolute_paths_become_file_uris(tmp_path: Path) -> None:
    path = tmp_path / "my conf" / "flink-conf.yaml"
    assert artifact_uri(str(path)).startswith("file:///") and "my%20conf" in artifact_uri(str(path))
    assert artifact_uri("./a/b.yaml") == "a/b.yaml"


def test_fingerprint_ignores_line_numbers(tmp_path: Path) -> None:
    a = Finding("FTC001", "x", Severity.WARNING, "m", Location("f.yaml", 3, "k"))
    b = Finding("FTC001", "x", Severity.WARNING, "m", Location("f.yaml", 30, "k"))
    fps = [json.loads(render_sarif(LintResult(findings=(f,), files=("f.yaml",)), base_dir=tmp_path))
           ["runs"][0]["results"][0]["partialFingerprints"] for f in (a, b)]
    assert fps[0] == fps[1]
