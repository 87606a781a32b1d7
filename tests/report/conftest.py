"""A small, fixed LintResult that every renderer test renders."""

from __future__ import annotations

import pytest

from flinktune.change import Applicability, Change
from flinktune.findings import Finding, Location, Severity
from flinktune.lint.model import InputProblem, LintResult, RuleInfo


@pytest.fixture()
def sample_result() -> LintResult:
    findings = (
        Finding(
            code="FTC001", name="deprecated-key", severity=Severity.WARNING,
            message="taskmanager.network.memory.min is deprecated; use taskmanager.memory.network.min",
            location=Location("conf/flink-conf.yaml", 3, "taskmanager.network.memory.min"),
            why="Deprecated keys are removed in later versions.",
            fix=Change("rename", "taskmanager.network.memory.min", None, "taskmanager.memory.network.min",
                       Applicability.SAFE),
            references=("https://nightlies.apache.org/flink/flink-docs-release-1.20/docs/deployment/config/",),
        ),
        Finding(
            code="FTN002", name="network-min-above-max", severity=Severity.ERROR,
            message="network min 2 gb, 50% above max 1 gb: Flink refuses to start",
            location=Location("k8s/deploy ment.yaml", 12, "taskmanager.memory.network.min"),
        ),
        Finding(
            code="FTX003", name="note", severity=Severity.INFO,
            message='odd "value" with <xml> & commas, colons: and 100%\nsecond line',
            location=Location("conf/flink-conf.yaml", None, None),
        ),
    )
    rules = (
        RuleInfo("FTC001", "deprecated-key", Severity.WARNING, "A deprecated key.",
                 "https://nightlies.apache.org/flink/"),
        RuleInfo("FTN002", "network-min-above-max", Severity.ERROR, "Network min above max."),
        RuleInfo("FTX003", "note", Severity.INFO, ""),
    )
    return LintResult(
        findings=findings,
        problems=(InputProblem("bad.yaml", "invalid YAML: mapping values are not allowed here", 7),),
        files=("conf/flink-conf.yaml", "k8s/deploy ment.yaml", "clean.yaml"),
        rules=rules,
        suppressed=2,
        baselined=1,
        fixes=(Change("delete", "taskmanager.network.numberOfBuffers", applicability=Applicability.SAFE,
                      file="conf/flink-conf.yaml", line=9, proposed_by="FTC009"),),
        all_findings=findings,
    )


@pytest.fixture()
def empty_result() -> LintResult:
    return LintResult(findings=(), files=("a/flink-conf.yaml",))
