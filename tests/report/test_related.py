"""A finding that rests on several files (the config line, the compose service, the volume) names all of
them in every output: text "see also" lines, JSON ``related``, SARIF ``relatedLocations`` (SARIF 2.1.0,
section 3.27.22), and the GitHub annotation's text (an annotation has one place)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from flinktune.findings import Finding, Location, Related, Severity
from flinktune.lint.model import LintResult, RuleInfo
from flinktune.report.github import render_github
from flinktune.report.json_report import render_json
from flinktune.report.sarif import render_sarif
from flinktune.report.text import render_text

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "data" / "sarif-schema-2.1.0.json"


def _result() -> LintResult:
    finding = Finding(
        code="FTC062", name="checkpoint-dir-not-shared", severity=Severity.WARNING,
        message="checkpoints go to a folder each container has for itself",
        location=Location("conf/flink-conf.yaml", 4, "execution.checkpointing.dir"),
        related=(Related("docker-compose.yml", 12, "service taskmanager"),
                 Related("docker-compose.yml", 30, "volume tm-data mounted at /data")))
    return LintResult(findings=(finding,), files=("conf/flink-conf.yaml",),
                      rules=(RuleInfo("FTC062", "checkpoint-dir-not-shared", Severity.WARNING, ""),),
                      all_findings=(finding,))


def test_text_names_every_place() -> None:
    text = render_text(_result())
    assert "    see also: docker-compose.yml:12 (service taskmanager)" in text
    assert "    see also: docker-compose.yml:30 (volume tm-data mounted at /data)" in text


def test_json_carries_related() -> None:
    [finding] = json.loads(render_json(_result()))["findings"]
    assert finding["related"] == [
        {"file": "docker-compose.yml", "line": 12, "note": "service taskmanager"},
        {"file": "docker-compose.yml", "line": 30, "note": "volume tm-data mounted at /data"}]


def test_sarif_related_locations_validate(tmp_path: Path) -> None:
    document = json.loads(render_sarif(_result(), tool_version="0", base_dir=tmp_path))
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert list(jsonschema.Draft4Validator(schema).iter_errors(document)) == []
    [result] = document["runs"][0]["results"]
    related = result["relatedLocations"]
    assert [r["id"] for r in related] == [1, 2]
    assert related[0]["physicalLocation"]["artifactLocation"]["uri"] == "docker-compose.yml"
    assert related[0]["physicalLocation"]["region"] == {"startLine": 12}
    assert related[1]["message"]["text"] == "volume tm-data mounted at /data"


def test_github_annotation_text_names_the_other_places() -> None:
    [line] = render_github(_result()).splitlines()[:1]
    assert line.startswith("::warning file=conf/flink-conf.yaml,line=4,")
    assert "%0Asee also: docker-compose.yml:12 (service taskmanager)" in line
