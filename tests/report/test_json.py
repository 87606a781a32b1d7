from __future__ import annotations

import json

from flinktune.lint.model import LintResult
from flinktune.report.json_report import render_json


def test_json_document(sample_result: LintResult) -> None:
    doc = json.loads(render_json(sample_result, tool_version="9.9"))
    assert doc["tool"] == "flinktune" and doc["version"] == "9.9"
    assert doc["summary"] == {"files": 3, "findings": 3, "info": 1, "warning": 1, "error": 1, "problems": 1,
                              "suppressed": 2, "baselined": 1, "fixed": 1}
    first = doc["findings"][0]
    assert (first["code"], first["line"], first["key"]) == ("FTC001", 3, "taskmanager.network.memory.min")
    assert first["fix"] == {"action": "rename", "key": "taskmanager.network.memory.min", "value": None,
                            "new_key": "taskmanager.memory.network.min", "applicability": "safe"}
    assert doc["findings"][2]["line"] is None
    assert doc["problems"] == [{"file": "bad.yaml", "line": 7,
                                "message": "invalid YAML: mapping values are not allowed here"}]
