"""JSON for machines: a stable document with every finding, problem and the summary."""

from __future__ import annotations

import json
from typing import Any

from flinktune.findings import Finding
from flinktune.lint.model import LintResult

JSON_SCHEMA_VERSION = 1


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    return finding.as_dict()


def render_json(result: LintResult, *, tool_version: str = "") -> str:
    counts = result.counts()
    doc = {
        "tool": "flinktune",
        "version": tool_version,
        "schema_version": JSON_SCHEMA_VERSION,
        "summary": {
            "files": len(result.files),
            "findings": len(result.findings),
            **counts,
            "problems": len(result.problems),
            "suppressed": result.suppressed,
            "baselined": result.baselined,
            "fixed": len(result.fixes),
        },
        "files": list(result.files),
        "versions": [
            {"file": v.file, "document": v.document, "flink_version": str(v.version), "source": v.source,
             "detail": v.detail,
             "held_deprecations": [{"line": line, "key": key, "new_key": new_key, "since": str(since)}
                                   for line, key, new_key, since in v.held]}
            for v in result.versions
        ],
        "findings": [finding_to_dict(f) for f in result.findings],
        "problems": [{"file": p.file, "line": p.line, "message": p.message} for p in result.problems],
        "fixes": [
            {"file": f.file, "line": f.line, "code": f.proposed_by, "description": f.describe_done()}
            for f in result.fixes
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
