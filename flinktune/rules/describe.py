"""Describe rules as text, JSON-ready data and Markdown (``rules list`` / ``explain``, docs/rules.md)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from typing import Any

import yaml

from flinktune.findings import Severity
from flinktune.rules.functions import FUNCTIONS
from flinktune.rules.ruleset import Rule, RuleSet
from flinktune.rules.spec import SCOPE_BINDINGS, Example
from flinktune.rules.template import SPECS


def _one_line(text: str) -> str:
    return " ".join(text.split())


def rule_data(rule: Rule) -> dict[str, Any]:
    fix = rule.fix
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "scope": rule.scope,
        "versions": rule.versions,
        "summary": rule.summary,
        "why": _one_line(rule.why),
        "condition": _one_line(rule.spec.condition),
        "let": {name: _one_line(expr) for name, expr in rule.spec.let.items()},
        "message": _one_line(rule.spec.message),
        "fix": None if fix is None else fix.as_dict(),
        "references": list(rule.references),
        "source": rule.source,
        "examples": {"pass": len(rule.pass_examples), "fail": len(rule.fail_examples)},
    }


def render_list_text(ruleset: RuleSet, verbose: bool = False,
                     paint: Callable[[Severity, str], str] | None = None) -> str:
    """One rule per two lines; ``verbose`` adds why each rule exists and the file it comes from;
    ``paint`` colours a severity (the report's colours on a terminal)."""
    lines = []
    for rule in ruleset:
        fix = "" if rule.fix is None else " [fix: safe]" if rule.fix.safe else " [fix]"
        versions = "" if rule.versions.strip() in ("*", "") else f" (Flink {rule.versions})"
        value = rule.severity.value
        severity = (paint(rule.severity, value) if paint else value) + " " * (7 - len(value))
        lines.append(f"{rule.code}  {severity}  {rule.name}{versions}{fix}")
        lines.append(f"        {rule.summary}")
        if verbose:
            lines.extend(textwrap.wrap("why: " + " ".join(rule.why.split()), 100, initial_indent=" " * 8,
                                       subsequent_indent=" " * 13, break_on_hyphens=False))
            lines.append(f"        from: {rule.source}")
    lines.append(f"{len(ruleset)} rules")
    return "\n".join(lines) + "\n"


def render_list_json(ruleset: RuleSet) -> str:
    return json.dumps({"rules": [rule_data(rule) for rule in ruleset]}, indent=2) + "\n"


def _example_text(example: Example) -> str:
    if isinstance(example.config, str):
        return example.config.rstrip("\n")
    if example.metrics is not None:
        return yaml.safe_dump({"metrics": example.metrics}, sort_keys=False, default_flow_style=None,
                              width=100).rstrip("\n")
    if example.items is not None:
        return yaml.safe_dump({"items": example.items}, sort_keys=False).rstrip("\n")
    return yaml.safe_dump(example.config or {}, sort_keys=False, default_flow_style=False).rstrip("\n")


def render_explain(rule: Rule) -> str:
    lines = [f"{rule.code} {rule.name}", "",
             f"severity: {rule.severity.value}    scope: {rule.scope}    versions: {rule.versions}",
             f"source:   {rule.source}", "", "Why:", f"  {_one_line(rule.why)}", "",
             "Condition:", f"  {_one_line(rule.spec.condition)}"]
    if rule.spec.let:
        lines.append("Let:")
        lines.extend(f"  {name} = {_one_line(expr)}" for name, expr in rule.spec.let.items())
    lines += ["Message:", f"  {_one_line(rule.spec.message)}"]
    if rule.fix is not None:
        fix = rule.fix
        what = {"set": f"set {fix.key} = {fix.value}", "delete": f"delete {fix.key}",
                "rename": f"rename {fix.key} -> {fix.new_key}"}[fix.action]
        lines += ["Fix:", f"  {what}" + ("  (safe: applied by lint --fix)" if fix.safe else "")]
    lines.append("References:")
    lines.extend(f"  - {ref}" for ref in rule.references)
    for kind, examples in (("Fails on", rule.fail_examples), ("Passes on", rule.pass_examples)):
        for example in examples[:2]:
            lines += ["", f"{kind} (Flink {example.version}):"]
            lines.extend("  " + line for line in _example_text(example).splitlines())
    return "\n".join(lines) + "\n"


_FIELDS: tuple[tuple[str, str], ...] = (
    ('`code`',
     '`FT` + area letter + 3 digits (`FTC001` config, `FTA001` analysis); stable, unique'),
    ('`name`',
     'kebab-case, unique'),
    ('`severity`',
     '`error`, `warning` or `info`'),
    ('`scope`',
     '`config` (once per document), `key` (once per entry), `issue` (once per reader issue), '
     '`vertex` / `subtask` (once per measured item)'),
    ('`versions`',
     'Flink versions the rule applies to, e.g. `">=1.17,<2.0"`; `"*"` for all'),
    ('`let`',
     'named expressions, evaluated on first use (by the condition, the message or the fix)'),
    ('`condition`',
     'an expression in the condition language below; the rule fires when it is `true`'),
    ('`message`',
     'text with `{name}`, `{name.field}` or `{name:spec}` placeholders'),
    ('`at`',
     '(config scope) the key the finding points at, a template'),
    ('`why`',
     'why it matters, with the Flink behaviour behind it'),
    ('`fix`',
     '`action` (`set`/`delete`/`rename`), `key`, `value`, `new_key` (templates), `applicability`: '
     '`safe` lets `lint --fix` apply it (rename/delete that cannot change what Flink runs with), '
     '`unsafe` (the default) is shown and never applied by `--fix`, `manual` is shown as a change to '
     'make by hand; `safe: true` is the older spelling of `applicability: safe`'),
    ('`references`',
     'Flink sources or docs the rule is based on'),
    ('`examples`',
     '`pass:` and `fail:` lists; each gives `version`, `config` (a mapping or file text), `format`, '
     '`env`, `metrics` (analysis rules: see below) or `items`, `note`, and for fail examples optionally '
     '`message` (expected text) and `count`'),
)


_MD_HEADER = """# Rule catalog

<!-- Generated by `flinktune rules list --format markdown`; do not edit by hand.
     tests/rules/test_docs.py fails when this file is out of date. -->

Every check `flinktune lint` makes is a rule: one YAML file under `rules/` with its own pass/fail
examples. Add your own rule folders with `--rules DIR` (or `rules:` in `.flinktune.yaml`) and
validate them with `flinktune rules check DIR`.

## Writing a rule

{FIELDS}
### Names bound in each scope

"""

_MD_LANGUAGE = """
### The condition language

Literals: numbers, `"strings"`, `true`, `false`, `null`, lists `[a, b]`; memory literals
`32kb 64mb 1gb` (bytes, powers of 1024) and durations `100ms 1s 1min` (milliseconds). Operators:
`and or not`, `== != < <= > >=`, `in` / `not in`, `+ - * / // %` and `**` (exponent at most 64).
Fields of bound mappings with `.name` or `["name"]`. `null` propagates through arithmetic,
ordering comparisons with `null` are false, and division by zero gives `null`, so a rule whose
inputs are missing stays quiet. There is no way to define functions, loop, or reach anything but
the bound data: every evaluation has a step budget and nesting is bounded.

### Functions

The bundled rules keep functions general: a table of facts one rule needs (names, versions,
replacements) is data in `flinktune/rules/facts.py`, read with `fact(table, key)`, not a new function.

| function | what it returns |
|---|---|
"""


_MD_METRICS = """
### Examples of analysis rules

An analysis rule (`scope: vertex`, `rules/analysis/FTA*.yaml`) is tested from metrics, as
`flinktune analyze` would read them: an example gives `metrics:`, a small job graph and what the
web UI showed for each vertex. `flinktune rules check` builds that dump in memory, runs the
analysis's own diagnosis on it (in numpy, without Spark) and applies the rule to
the vertices it diagnoses, so an example fails when the diagnosis (origin, cause, channels,
skew, ...) is wrong, not only when the condition is.

```yaml
examples:
  fail:
    - metrics:
        edges: ["Source: Gen --REBALANCE--> Parse --HASH--> Sink"]
        vertices:
          "Source: Gen": {backPressuredTimeMsPerSecond: 90%, outPoolUsage: 100%}
          Parse: {backPressuredTimeMsPerSecond: 80%, busyTimeMsPerSecond: 15%, outPoolUsage: 100%}
          Sink: {parallelism: 4, busyTimeMsPerSecond: 98%}
      message: "back pressure starts at 'Sink' (all_busy)"
```

{KEYS}
A metric's value is a number in its own unit (980 ms/s, 0.25), a percent (`98%`: of 1000 ms/s
for the `...TimeMsPerSecond` metrics, of 1 for the usages), for counters their rate (`5000/s`:
the dump holds the running total), several values separated by spaces for the samples over time
(`"0 0 90% 0 0"`), `null` for not measured, or a list with one such value per subtask
(`[98%, 10%, 10%, 10%]`). A vertex that leaves out `backPressuredTimeMsPerSecond` or
`busyTimeMsPerSecond` reports 0 for it. `items:` (the rule's input written by hand) remains for
rules whose input the analysis does not diagnose.
"""


_METRICS_KEYS: tuple[tuple[str, str], ...] = (
    ('`vertices`',
     'vertex (task) name -> its metrics, by the names the dump schema uses (`busyTimeMsPerSecond`, '
     '`backPressuredTimeMsPerSecond`, `outPoolUsage`, `inPoolUsage`, `inputFloatingBuffersUsage`, '
     '`numRecordsIn`, `numBytesInRemote`, ...), plus `parallelism` (default: the length of its '
     'per-subtask lists, else 1) and `tm` (the TaskManager of each subtask; default: subtask i on `tm-i`)'),
    ('`edges`',
     'the job graph as the web UI draws it: `"A --HASH--> B"`, `"A --REBALANCE--> B --FORWARD--> C"`; '
     '`A --> B` is HASH. Without `edges` there is no job plan'),
    ('`bandwidth`, `rtt`, `segment_size`, `target_rate`, `warmup`',
     'as `analyze --bandwidth`, `--rtt`, `--segment-size`, `--target-rate` (a number for the one '
     'source, or source name -> records/s), `--warmup` (default `0%`)'),
    ('`samples`, `interval`',
     'how many samples, how far apart (default 10, `10s`)'),
    ('`job`',
     "the job's name (default `example`)"),
)


def _md_escape(text: str) -> str:
    return _one_line(text).replace("|", "\\|")


def render_markdown(ruleset: RuleSet) -> str:
    fields = "| field | meaning |\n|---|---|\n" + "".join(f"| {f} | {m} |\n" for f, m in _FIELDS)
    out = [_MD_HEADER.replace("{FIELDS}\n", fields + "\n")]
    out.append("| scope | names |\n|---|---|\n")
    for scope, names in SCOPE_BINDINGS.items():
        out.append(f"| `{scope}` | {', '.join(f'`{n}`' for n in names)} |\n")
    out.append("\n`version` is the target version as text (`\"1.20\"`); `env` holds the environment "
               "given on the command line (`parallelism`, `slots`, `taskmanagers`, ...); `doc` has "
               "`format`, `path`, `name`, `version_hint`, `embedded`, `keys`; `issue` has `kind`, "
               "`message`, `key`, `line`.\n")
    out.append(_MD_LANGUAGE)
    for fn in FUNCTIONS.values():
        out.append(f"| `{fn.name}` | {_md_escape(fn.doc)} |\n")
    out.append("\n### Placeholder formats\n\n| spec | output |\n|---|---|\n")
    for spec, meaning in SPECS.items():
        out.append(f"| `{spec or '(none)'}` | {_md_escape(meaning)} |\n")
    keys = "| key | meaning |\n|---|---|\n" + "".join(f"| {k} | {m} |\n" for k, m in _METRICS_KEYS)
    out.append(_MD_METRICS.replace("{KEYS}\n", keys + "\n"))
    out.append("\n## Rules\n\n| code | name | severity | versions | fix |\n|---|---|---|---|---|\n")
    for rule in ruleset:
        fix = "" if rule.fix is None else "safe" if rule.fix.safe else "yes"
        out.append(f"| [{rule.code}](#{rule.code.lower()}-{rule.name}) | {rule.name} | {rule.severity.value} "
                   f"| {_md_escape(rule.versions)} | {fix} |\n")
    for rule in ruleset:
        out.append(f"\n### {rule.code} {rule.name}\n\n")
        out.append(f"Severity **{rule.severity.value}**, scope `{rule.scope}`, Flink versions "
                   f"`{rule.versions}`. Source: `{rule.source}`.\n\n")
        out.append(_one_line(rule.why) + "\n\n")
        out.append(f"Message: {_one_line(rule.spec.message)}\n\n")
        if rule.fix is not None:
            fix = rule.fix
            what = {"set": f"set `{fix.key}` to `{fix.value}`", "delete": f"delete `{fix.key}`",
                    "rename": f"rename `{fix.key}` to `{fix.new_key}`"}[fix.action]
            out.append(f"Fix: {what}" + (" (safe: `lint --fix` applies it)" if fix.safe else "") + ".\n\n")
        example = rule.fail_examples[0]
        out.append(f"Example that fails (Flink {example.version}):\n\n"
                   f"```yaml\n{_example_text(example)}\n```\n\n")
        out.append("References:\n\n")
        out.extend(f"- {ref}\n" for ref in rule.references)
    return "".join(out)
