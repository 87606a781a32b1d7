"""Run a rule's own pass/fail examples (the generic rule test and ``rules check`` use this)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flinktune.config.types import ConfigDocument, ConfigEntry, ConfigFormat
from flinktune.errors import FlinktuneError
from flinktune.findings import Finding
from flinktune.rules.engine import evaluate_document, evaluate_items
from flinktune.rules.ruleset import Rule, RuleSet
from flinktune.rules.spec import ITEM_SCOPES, Example
from flinktune.versions import FlinkVersion, parse_version

# Diagnoses an analysis rule's metrics example: (metrics, version) -> (the vertex items, the rule
# environment). The analysis sits above the rules, so the caller hands it in
# (flinktune.analysis.example_metrics.items_from_metrics; ``flinktune rules check`` does).
MetricsItems = Callable[[Mapping[str, Any], FlinkVersion],
                        tuple[list[dict[str, object]], dict[str, object]]]

_DEFAULT_FILE = {
    ConfigFormat.FLAT: "flink-conf.yaml",
    ConfigFormat.YAML: "config.yaml",
    ConfigFormat.DEPLOYMENT: "flinkdeployment.yaml",
    ConfigFormat.CONFIGMAP: "configmap.yaml",
}


@dataclass(frozen=True)
class ExampleResult:
    rule: str
    kind: str            # pass | fail
    index: int
    ok: bool
    detail: str          # what went wrong, or a short summary of the findings
    findings: tuple[Finding, ...] = ()

    def label(self) -> str:
        return f"{self.rule} {self.kind}[{self.index}]"


def _flat_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(_flat_text(v) for v in value)
    return str(value)


def _flatten(prefix: str, value: object, out: list[tuple[str, object]]) -> None:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), child, out)
    else:
        out.append((prefix, value))


def example_document(example: Example) -> ConfigDocument:
    """The config document an example describes: a mapping built directly, or text read by the reader."""
    fmt = ConfigFormat(example.format) if example.format else ConfigFormat.FLAT
    file = example.file or _DEFAULT_FILE[fmt]
    config = example.config
    if isinstance(config, str):
        from flinktune.config.reader import read_config_text

        documents = read_config_text(config, file, example.format)
        if len(documents) != 1:
            raise FlinktuneError(f"example config text gives {len(documents)} documents, expected 1")
        return documents[0]
    pairs: list[tuple[str, object]] = []
    for key, value in (config or {}).items():
        if fmt == ConfigFormat.FLAT:
            pairs.append((str(key), value))
        else:
            _flatten(str(key), value, pairs)
    entries = []
    for line, (key, value) in enumerate(pairs, start=1):
        if fmt == ConfigFormat.FLAT:
            text = _flat_text(value)
            entries.append(ConfigEntry(key=key, value=text, raw=text, file=file, line=line))
        else:
            entries.append(ConfigEntry(key=key, value=value, raw=_flat_text(value), file=file,  # type: ignore[arg-type]
                                       line=line))
    return ConfigDocument(path=file, format=fmt, entries=tuple(entries))


def _deployment_findings(rule: Rule, example: Example, version: object) -> list[Finding]:
    """Lint an example that brings deployment files: they are written to a scratch folder beside the
    example's config, read by the deployment readers, and the rule runs on the config (with its
    placement) or on every process."""
    import os
    import tempfile

    from flinktune.deployment.find import head_of
    from flinktune.deployment.link import place
    from flinktune.deployment.readers import read_deployment, recognise
    from flinktune.rules.engine import evaluate_process
    from flinktune.situation import Environment, resolve_situation

    single = RuleSet((rule,))
    findings: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix="flinktune-example-") as folder:
        for name, text in (example.deployment or {}).items():
            path = os.path.join(folder, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        documents: list[ConfigDocument] = []
        if example.config is not None:
            fmt = ConfigFormat(example.format) if example.format else ConfigFormat.FLAT
            name = example.file or _DEFAULT_FILE[fmt]
            path = os.path.join(folder, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            from flinktune.config.reader import read_config_file

            with open(path, "w", encoding="utf-8") as handle:
                handle.write(example.config if isinstance(example.config, str) else "".join(
                    f"{key}: {_flat_text(value)}\n" for key, value in example.config.items()))
            documents = read_config_file(path, example.format)
        files = []
        for root, _dirs, names in os.walk(folder):
            for name in names:
                path = os.path.join(root, name)
                found = recognise(path, head_of(path))
                if found is not None:
                    files.append((path, found))
        deployment = read_deployment(sorted(files), folder)

        from flinktune.deployment.documents import DocumentCache

        document_at = DocumentCache().document_at
        environment = Environment().with_values({"flink-version": version}, "flag")
        if rule.scope == "process":
            for process in deployment.processes:
                findings += evaluate_process(single, deployment, process, version, example.env,  # type: ignore[arg-type]
                                             document_at)
            return findings
        for document in [*documents, *deployment.documents]:
            situation = resolve_situation(document, environment=environment, deployed=place(document,
                                                                                            deployment,
                                                                                              document_at))
            findings += evaluate_document(single, document, version, example.env, situation,  # type: ignore[arg-type]
                                          document_at)
    # Scratch paths are meaningless: name the files as the example does.
    return [_relative(finding, folder) for finding in findings]


def _relative(finding: Finding, folder: str) -> Finding:
    import os

    from flinktune.findings import Location
    from flinktune.record import replace

    location = finding.location
    file = os.path.relpath(location.file, folder) if location.file.startswith(folder) else location.file
    related = tuple(replace(r, file=os.path.relpath(r.file, folder) if r.file.startswith(folder) else r.file)
                    for r in finding.related)
    return replace(finding, location=Location(file, location.line, location.key), related=related)


def _metrics_findings(rule: Rule, example: Example, version: FlinkVersion,
                      metrics_items: MetricsItems | None) -> list[Finding]:
    """The rule over the items the analysis diagnoses from the example's metrics, one item per call
    as analyze does (analysis/job.findings_for)."""
    if metrics_items is None:
        raise FlinktuneError("a metrics example runs the analysis: check it with 'flinktune rules check'")
    items, env = metrics_items(example.metrics or {}, version)
    single = RuleSet((rule,))
    findings: list[Finding] = []
    for item in items:
        findings += evaluate_items(single, rule.scope, [item], version, {**env, **example.env},
                                   example.file or "metrics")
    return findings


def run_example(rule: Rule, example: Example, kind: str, index: int,
                metrics_items: MetricsItems | None = None) -> ExampleResult:
    single = RuleSet((rule,))
    try:
        version = parse_version(example.version)
        if not rule.applies_to(version):
            detail = f"example version {version} is outside the rule's versions '{rule.versions}'"
            return ExampleResult(rule.code, kind, index, False, detail)
        if example.deployment is not None or rule.scope == "process":
            findings = _deployment_findings(rule, example, version)
        elif example.metrics is not None:
            findings = _metrics_findings(rule, example, version, metrics_items)
        elif rule.scope in ITEM_SCOPES:
            findings = evaluate_items(single, rule.scope, example.items or [], version, example.env,
                                      example.file or "metrics")
        else:
            text = example.config if isinstance(example.config, str) else None
            findings = evaluate_document(single, example_document(example), version, example.env, text=text)
    except FlinktuneError as error:
        detail = f"raised {type(error).__name__}: {error.one_line()}"
        return ExampleResult(rule.code, kind, index, False, detail)
    found = tuple(f for f in findings if f.code == rule.code)
    messages = "; ".join(f.message for f in found)
    if kind == "pass":
        if found:
            detail = f"expected no finding, got: {messages}"
            return ExampleResult(rule.code, kind, index, False, detail, found)
        return ExampleResult(rule.code, kind, index, True, "no finding", found)
    if not found:
        return ExampleResult(rule.code, kind, index, False, "expected a finding, got none", found)
    if example.count is not None and len(found) != example.count:
        return ExampleResult(rule.code, kind, index, False,
                             f"expected {example.count} finding(s), got {len(found)}: {messages}", found)
    if example.message is not None and not any(example.message in f.message for f in found):
        return ExampleResult(rule.code, kind, index, False,
                             f"expected a message containing '{example.message}', got: {messages}", found)
    return ExampleResult(rule.code, kind, index, True, messages, found)


def run_examples(rule: Rule, metrics_items: MetricsItems | None = None) -> list[ExampleResult]:
    results = [run_example(rule, ex, "pass", i, metrics_items) for i, ex in enumerate(rule.pass_examples)]
    results += [run_example(rule, ex, "fail", i, metrics_items) for i, ex in enumerate(rule.fail_examples)]
    return results
