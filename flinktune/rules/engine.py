"""Run rules over a config document or over measured items; returns findings, never prints."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from flinktune.change import Applicability, Change
from flinktune.config.types import ConfigDocument, ConfigEntry
from flinktune.errors import ConditionError, WriteError
from flinktune.findings import Finding, Location, Related, Severity
from flinktune.rules.entry_plan import key_plan, raw_plan, whole_document_test
from flinktune.rules.functions import FUNCTIONS, RuleContext, _entry_for
from flinktune.rules.lang import (
    Budget,
    Value,
    evaluate,
    to_value,
    truthy,
)
from flinktune.rules.ruleset import Rule, RuleSet
from flinktune.rules.spec import ITEM_SCOPES
from flinktune.rules.template import format_value
from flinktune.versions import FlinkVersion


class _Names(Mapping[str, object]):
    """Bindings plus let-names, each let computed on first use (in the rule's budget)."""

    def __init__(self, rule: Rule, bindings: dict[str, Value], context: RuleContext, budget: Budget) -> None:
        self._rule = rule
        # Copied only when a let is computed (most evaluations read bindings only).
        self._values: dict[str, object] = bindings
        self._copied = False
        self._lets = rule.let_map
        self._context = context
        self._budget = budget
        self._computing: set[str] = set()

    def __getitem__(self, name: str) -> object:
        if name in self._values:
            return self._values[name]
        if name not in self._lets or name in self._computing:
            raise KeyError(name)
        self._computing.add(name)
        try:
            value = evaluate(self._lets[name], self, FUNCTIONS, self._context, self._budget)
        finally:
            self._computing.discard(name)
        if not self._copied:
            self._values = dict(self._values)
            self._copied = True
        self._values[name] = value
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._values or name in self._lets

    def __iter__(self) -> Iterator[str]:
        return iter([*self._values, *(n for n in self._lets if n not in self._values)])

    def __len__(self) -> int:
        return len(set(self._values) | set(self._lets))

    def all_lets(self) -> list[tuple[str, object]]:
        return [(name, self[name]) for name, _ in self._rule.lets]


def _fail(rule: Rule, error: ConditionError, where: str) -> ConditionError:
    return ConditionError(f"rule {rule.code} ({rule.source}) failed on {where}: {error.message}")


def _run(rule: Rule, bindings: dict[str, Value], context: RuleContext, where: str,
         location: Location, file: str) -> Finding | None:
    budget = Budget()
    names = _Names(rule, bindings, context, budget)
    try:
        fired = truthy(evaluate(rule.condition, names, FUNCTIONS, context, budget))
        if not fired:
            return None
        lets = names.all_lets()
        values: dict[str, object] = {**bindings, **dict(lets)}
        message = rule.message.render(values)
        fix_fields = None
        if rule.fix is not None and rule.fix_templates is not None:
            key_t, value_t, new_t = rule.fix_templates
            fix_fields = (key_t.render(values), value_t.render(values) if value_t is not None else None,
                          new_t.render(values) if new_t is not None else None)
        where_value = values.get("where")
        if isinstance(where_value, Mapping) and isinstance(where_value.get("file"), str):
            # A rule points at the line it rests on (an env var, a jar, a volume, a spec field) via a let
            # 'where' that is a location mapping.
            line_value = where_value.get("line")
            location = Location(file=str(where_value["file"]),
                                line=line_value if isinstance(line_value, int) else None, key=location.key)
        if rule.at is not None:
            at_key = rule.at.render(values)
            line = location.line
            file_at = location.file
            if context.document is not None:
                entry = _entry_for(context, at_key)
                if isinstance(entry, ConfigEntry):
                    # the entry may come from another file: the base an overlay is merged into
                    line, at_key, file_at = entry.line, entry.key, entry.file
            location = Location(file=file_at, line=line, key=at_key)
        related = _related(rule, names, context, budget, location) if rule.related is not None else ()
    except ConditionError as error:
        raise _fail(rule, error, where) from None
    evidence = tuple((name, format_value(value)) for name, value in lets)
    why = " ".join(rule.why.split())
    fix = None if fix_fields is None else _change(rule, fix_fields, location, why, evidence)
    severity = rule.severity
    if rule.spec.needs_deployment and not _deployment_seen(context):
        severity = Severity.INFO
        message += UNSEEN
    return Finding(code=rule.code, name=rule.name, severity=severity, message=message, location=location,
                   why=why, fix=fix, references=rule.references, evidence=evidence, related=related)


def _change(rule: Rule, fields: tuple[str, str | None, str | None], location: Location, why: str,
            evidence: tuple[tuple[str, str], ...]) -> Change | None:
    """The rule's fix as the one config change, or None when the rule computed no change (an empty
    or null key or value, e.g. no single setting helps: the finding says so and fixes nothing)."""
    key, value, new_key = fields
    assert rule.fix is not None
    if key in ("", "null") or (rule.fix.action == "set" and value in ("", "null")):
        return None
    try:
        return Change(rule.fix.action, key, value, new_key, Applicability(rule.fix.applicability),
                      file=location.file, line=location.line, why=why,
                      evidence=tuple(f"{name} = {text}" for name, text in evidence), proposed_by=rule.code)
    except WriteError:
        return None      # e.g. a rename onto the same key: nothing to change


# What a deployment-dependent finding says when lint saw no deployment files beside the config.
UNSEEN = (" (lint saw no docker-compose file, Kubernetes manifest or Helm chart that runs this "
          "configuration, so this rests on what the file itself shows; lint the folder that holds them "
          "to check it)")


def _deployment_seen(context: RuleContext) -> bool:
    value = FUNCTIONS["deployment"].impl(context)
    return isinstance(value, Mapping) and value.get("seen") is True


def _related(rule: Rule, names: _Names, context: RuleContext, budget: Budget,
             location: Location) -> tuple[Related, ...]:
    """The rule's ``related`` places: mappings with file, line and note (others and duplicates dropped,
    and the finding's own place)."""
    assert rule.related is not None
    value = evaluate(rule.related, names, FUNCTIONS, context, budget)
    items = value if isinstance(value, tuple) else (value,)
    out: list[Related] = []
    seen = {(location.file, location.line)}
    for item in items:
        if not isinstance(item, Mapping):
            continue
        file, line = item.get("file"), item.get("line")
        if not isinstance(file, str) or not file:
            continue
        line = line if isinstance(line, int) and not isinstance(line, bool) else None
        if (file, line) in seen:
            continue
        seen.add((file, line))
        note = item.get("note")
        out.append(Related(file, line, note if isinstance(note, str) else ""))
    return tuple(out)


def _doc_binding(document: ConfigDocument) -> dict[str, Value]:
    return {
        "format": document.format.value,
        "path": document.path,
        "name": document.name,
        "version_hint": document.version_hint,
        # For a ConfigMap: the format of the embedded file (flink-conf.yaml or config.yaml).
        "embedded": getattr(getattr(document, "embedded", None), "value", None),
        "keys": tuple(entry.key for entry in document.entries),
    }


def evaluate_document(ruleset: RuleSet, document: ConfigDocument, version: FlinkVersion,
                      env: Mapping[str, object] | None = None, situation: object = None,
                      document_at: Callable[[str], ConfigDocument | None] | None = None,
                      text: str | None = None) -> list[Finding]:
    """Run the config-, key- and issue-scope rules that apply to ``version`` over one document.

    ``situation`` (flinktune.situation.Situation) is what the rule functions read for the effective
    configuration, memory and job; without one it is resolved from ``document`` (and the manifest
    ``text`` it was read from), ``version`` and ``env``.
    """
    context = RuleContext(version, document, env, situation)
    context.document_at = document_at
    context.text = text
    base: dict[str, Value] = {
        "version": str(version),
        "env": to_value(dict(env or {})),
        "doc": _doc_binding(document),
    }
    findings: list[Finding] = []
    for rule in ruleset.for_scope("config", version):
        found = _run(rule, dict(base), context, document.path, Location(document.path), document.path)
        if found is not None:
            findings.append(found)
    key_rules = ruleset.for_scope("key", version)
    if key_rules:
        live = []
        for rule in key_rules:
            whole = whole_document_test(rule)
            if whole is not None:
                budget = Budget()
                try:
                    if not truthy(evaluate(whole, _Names(rule, dict(base), context, budget), FUNCTIONS,
                                           context, budget)):
                        continue          # false for every entry of this document
                except ConditionError:
                    pass                  # let the rule's own run report the error
            live.append(rule)
        plan = [(rule, *key_plan(rule.condition)) for rule in live]
        raw_tests = {n: found for n, (rule, _guard, _test) in enumerate(plan)
                     if (found := raw_plan(rule.condition)) is not None}
        # Which rules can fire for a key, found without walking every rule for every entry: the
        # rules with neither a key guard nor a key test always run; guarded ones are indexed by the
        # keys their guard names; tested ones are grouped by their test, evaluated once per key.
        always = [n for n, (_rule, guard, test) in enumerate(plan) if guard is None and test is None]
        by_key: dict[str, list[int]] = {}
        by_test: dict[tuple[object, ...], tuple[Callable[[RuleContext, str], bool], list[int]]] = {}
        for n, (_rule, guard, test) in enumerate(plan):
            if guard is not None:
                for key in guard:
                    by_key.setdefault(key, []).append(n)
            elif test is not None:
                by_test.setdefault(test[0], (test[1], []))[1].append(n)
        # The value of each distinct key-only first test per key (rules share them: status(key) == ...).
        tested: dict[tuple[object, ...], bool] = {}

        def passes(key: str, form: tuple[object, ...], test: Callable[[RuleContext, str], bool]) -> bool:
            found = tested.get((key, form))
            if found is None:
                try:
                    found = tested[(key, form)] = test(context, key)
                except ConditionError:
                    found = True     # let the rule's own run report the error
            return found

        for entry in document.entries:
            key = entry.key
            picked = [*always, *by_key.get(key, ())]
            for form, (test, numbers) in by_test.items():
                if passes(key, form, test):
                    picked += numbers
            if not picked:
                continue                      # every rule's condition is false at its first test
            picked.sort()                     # the rules' own order
            bindings = {**base, "key": key, "value": to_value(entry.value), "raw": entry.raw,
                        "line": entry.line}
            where = f"{entry.file}:{entry.line}"
            here = Location(entry.file, entry.line, key)
            for n in picked:
                rule, guard, test = plan[n]
                if guard is not None and test is not None and not passes(key, test[0], test[1]):
                    continue                  # 'and' stops at a false first operand
                raw_test = raw_tests.get(n)
                if raw_test is not None and not raw_test(entry.raw):
                    continue                  # the same, for a first test of the raw text
                # _Names copies the bindings only to store let values, so one dict serves every rule.
                found = _run(rule, bindings, context, where, here, entry.file)
                if found is not None:
                    findings.append(found)
    issue_rules = ruleset.for_scope("issue", version)
    if issue_rules:
        for issue in document.issues:
            bindings = {**base, "issue": {"kind": issue.kind, "message": issue.message, "key": issue.key,
                                          "line": issue.line, "file": issue.file}}
            where = f"{issue.file}:{issue.line}"
            for rule in issue_rules:
                here = Location(issue.file, issue.line, issue.key)
                found = _run(rule, dict(bindings), context, where, here,
                             issue.file)
                if found is not None:
                    findings.append(found)
    findings.sort(key=Finding.sort_key)
    return findings


def evaluate_process(ruleset: RuleSet, deployment: object, process: object, version: FlinkVersion,
                     env: Mapping[str, object] | None = None,
                     document_at: Callable[[str], ConfigDocument | None] | None = None) -> list[Finding]:
    """Run the ``process`` rules over one JobManager or TaskManager of a deployment
    (flinktune.deployment); a finding is located at the process (its compose service or workload)."""
    rules = ruleset.for_scope("process", version)
    if not rules:
        return []
    from flinktune.deployment.access import process_map

    context = RuleContext(version, None, env)
    context.deployment = deployment
    context.process = process
    context.document_at = document_at
    mapping = process_map(deployment, process)  # type: ignore[arg-type]
    where = process.where  # type: ignore[attr-defined]
    bindings: dict[str, Value] = {"version": str(version), "env": to_value(dict(env or {})),
                                  "process": to_value(mapping)}
    findings: list[Finding] = []
    for rule in rules:
        here = Location(where.file, where.line, process.name)  # type: ignore[attr-defined]
        found = _run(rule, dict(bindings), context, f"{where.file}:{where.line}", here, where.file)
        if found is not None:
            findings.append(found)
    findings.sort(key=Finding.sort_key)
    return findings


def evaluate_items(ruleset: RuleSet, scope: str, items: Sequence[Mapping[str, object]], version: FlinkVersion,
                   env: Mapping[str, object] | None, file: str) -> list[Finding]:
    """Run the ``vertex`` or ``subtask`` rules over measured facts, one evaluation per item."""
    if scope not in ITEM_SCOPES:
        raise ConditionError(f"evaluate_items takes scope {' or '.join(ITEM_SCOPES)}, not '{scope}'")
    context = RuleContext(version, None, env)
    base: dict[str, Value] = {"version": str(version), "env": to_value(dict(env or {}))}
    findings: list[Finding] = []
    rules = ruleset.for_scope(scope, version)
    for index, item in enumerate(items):
        bindings = {**base, "item": to_value(dict(item))}
        for rule in rules:
            found = _run(rule, dict(bindings), context, f"{file} item {index}", Location(file), file)
            if found is not None:
                findings.append(found)
    return findings
