"""SARIF 2.1.0 (OASIS), the format GitHub code scanning and other dashboards ingest.

One run; ``tool.driver.rules`` lists every loaded rule; each finding is a result pointing at
file and line (and the config key as a logical location); inputs that could not be read are
``toolExecutionNotifications`` of the invocation. ``partialFingerprints`` carries the same
line-independent fingerprint as the baseline, so dashboards track a finding across edits.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from flinktune.findings import Severity
from flinktune.lint.baseline import fingerprint
from flinktune.lint.model import LintResult

SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def artifact_uri(file: str) -> str:
    """A relative path stays relative (what code scanning expects); an absolute one is file://."""
    path = PurePath(file)
    if path.is_absolute():
        return Path(file).as_uri()
    posix = path.as_posix()
    return quote(posix.removeprefix("./"), safe="/-._~")


def _location(file: str, line: int | None, key: str | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(file)}}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": line}
    location: dict[str, Any] = {"physicalLocation": physical}
    if key:
        location["logicalLocations"] = [{"name": key, "kind": "member"}]
    return location


def render_sarif(result: LintResult, *, tool_version: str = "", base_dir: Path | None = None) -> str:
    base = base_dir or Path(os.getcwd())
    rules = []
    index: dict[str, int] = {}
    for info in result.rules:
        if info.code in index:
            continue
        index[info.code] = len(rules)
        descriptor: dict[str, Any] = {
            "id": info.code,
            "name": info.name,
            "shortDescription": {"text": info.summary or info.name},
            "defaultConfiguration": {"level": _LEVEL[info.severity]},
        }
        if info.help_uri:
            descriptor["helpUri"] = info.help_uri
        rules.append(descriptor)
    results = []
    for finding in result.findings:
        item: dict[str, Any] = {
            "ruleId": finding.code,
            "level": _LEVEL[finding.severity],
            "message": {"text": finding.message},
            "locations": [_location(finding.location.file, finding.location.line, finding.location.key)],
            "partialFingerprints": {"flinktuneFingerprint/v1": fingerprint(finding, base)},
        }
        if finding.related:
            # SARIF relatedLocations: the other files and lines the finding rests on (a compose service,
            # a volume mount, an image tag), each with its note as the message.
            item["relatedLocations"] = [
                {"id": number, **_location(related.file, related.line, None),
                 **({"message": {"text": related.note}} if related.note else {})}
                for number, related in enumerate(finding.related, start=1)]
        if finding.code in index:
            item["ruleIndex"] = index[finding.code]
        properties: dict[str, Any] = {"name": finding.name}
        if finding.why:
            properties["why"] = finding.why
        if finding.fix is not None:
            properties["fix"] = {k: v for k, v in (("action", finding.fix.action), ("key", finding.fix.key),
                                                   ("value", finding.fix.value),
                                                   ("new_key", finding.fix.new_key)) if v is not None}
        item["properties"] = properties
        results.append(item)
    notifications = [
        {
            "level": "error",
            "message": {"text": f"not linted: {problem.message}"},
            "locations": [_location(problem.file, problem.line, None)],
        }
        for problem in result.problems
    ]
    driver: dict[str, Any] = {"name": "flinktune", "rules": rules}
    if tool_version:
        driver["version"] = tool_version
        driver["semanticVersion"] = tool_version
    invocation: dict[str, Any] = {"executionSuccessful": not result.problems}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    log = {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": results}],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
