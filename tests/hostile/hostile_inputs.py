"""Hostile-input harness shared by the seeded tests (tests/hostile) and the big run
(benchmarks/fuzz_all.py): one *target* per parser, seed texts to mutate, and the property.

The property (issue 8): any input yields a result or a ``FlinktuneError`` whose message is one
non-empty line; never another exception. Hangs are caught by the callers (a SIGALRM deadline in
the fuzz script, the pytest timeout in the tests). Input sizes are bounded by the generators:
texts of at most ``MAX_TEXT_CHARS`` characters (the parsers' own caps, e.g. 8 MiB for YAML, are
tested separately with one big input each).
"""

from __future__ import annotations

import atexit
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from testkit import shared_dir

from flinktune.errors import FlinktuneError

REPO = Path(__file__).resolve().parents[2]
SHARED = shared_dir()
CORPUS = SHARED / "corpus" / "flink-configs"
MAX_TEXT_CHARS = 4000


class PropertyViolation(AssertionError):
    """A target broke the property: an exception outside FlinktuneError, or a bad message."""


def check_error(error: FlinktuneError) -> None:
    text = error.one_line()
    if not text.strip() or "\n" in text or "\r" in text:
        raise PropertyViolation(f"{type(error).__name__} message is not one non-empty line: {text!r}")


def call(target: Callable[[str], object], data: str) -> str:
    """Run one case; 'ok' or 'error' (a clean FlinktuneError); anything else is re-raised."""
    try:
        target(data)
    except FlinktuneError as error:
        check_error(error)
        return "error"
    return "ok"


# ---------------------------------------------------------------------------------------------
# Targets: str -> anything (raise FlinktuneError on bad input)


def t_flat(text: str) -> object:
    from flinktune.config.flat import read_flat_text

    return read_flat_text(text, "flink-conf.yaml")


def t_yaml(text: str) -> object:
    from flinktune.config.yaml_config import read_yaml_text

    return read_yaml_text(text, "config.yaml")


def t_k8s(text: str) -> object:
    from flinktune.config.k8s import read_manifest_text

    return read_manifest_text(text, "deployment.yaml")


def t_detect(text: str) -> object:
    """Format detection plus whichever reader it picks (what ``lint`` does with an odd name)."""
    from flinktune.config.reader import read_config_text

    return read_config_text(text, "conf/flink.yaml")


def t_memory(text: str) -> object:
    from flinktune.units import format_memory, parse_memory_size

    size = parse_memory_size(text)
    # Round trip: what we print must parse back to the same size.
    if parse_memory_size(format_memory(size.bytes)).bytes != size.bytes:
        raise PropertyViolation(f"format_memory round trip changed {text!r}")
    return size


def t_duration(text: str) -> object:
    from flinktune.units import format_duration, parse_duration

    duration = parse_duration(text)
    if parse_duration(format_duration(duration.nanos)).nanos != duration.nanos:
        raise PropertyViolation(f"format_duration round trip changed {text!r}")
    return duration


def t_values(text: str) -> object:
    """The other value parsers a rule or the model calls on user text."""
    from flinktune.units import (
        parse_bandwidth_bytes_per_s,
        parse_bool,
        parse_enum,
        parse_float,
        parse_int,
        parse_list,
    )
    from flinktune.versions import parse_version

    results = []
    for parse in (parse_bool, parse_int, lambda t: parse_int(t, bits=64), parse_float,
                  parse_bandwidth_bytes_per_s, parse_list, lambda t: parse_enum(t, ("hash", "sort")),
                  parse_version):
        try:
            results.append(parse(text))
        except FlinktuneError as error:
            check_error(error)
    return results


_NAMES = {"version": "1.20", "key": "taskmanager.memory.segment-size", "value": "32kb", "raw": "32kb",
          "line": 3, "env": {"parallelism": 4, "slots": 2}, "keys": ("a", "b"),
          "item": {"name": "Sink", "busy": 0.9, "subtasks": (1, 2, 3)}, "n": 7, "s": "text",
          "lst": (1, 2.5, "x", None, True), "big": 2**62, "neg": -3, "f": 0.1}


def t_condition(text: str) -> object:
    """Parse, static checks, then evaluate against plain data with the real function table."""
    from flinktune.config.reader import read_config_text
    from flinktune.rules.functions import FUNCTIONS, RuleContext
    from flinktune.rules.lang import check_constants, check_names, evaluate, parse
    from flinktune.versions import DEFAULT_VERSION

    condition = parse(text)
    check_names(condition, set(_NAMES), FUNCTIONS)
    check_constants(condition)
    document = read_config_text("taskmanager.memory.segment-size: 32kb\ntaskmanager.numberOfTaskSlots: 2\n"
                                "taskmanager.memory.process.size: 2g\n", "flink-conf.yaml")[0]
    return evaluate(condition, _NAMES, FUNCTIONS, RuleContext(DEFAULT_VERSION, document, {"parallelism": 4}))


def t_template(text: str) -> object:
    from flinktune.rules.template import parse_template

    template = parse_template(text)
    return template.render({**_NAMES, "x": float("inf"), "y": float("nan"), "z": -(2**70)})


_RULE_DOC = None


def t_rule_file(text: str) -> object:
    """The loader on one untrusted rule file; a rule that loads runs its examples and a config."""
    global _RULE_DOC
    from flinktune.rules.engine import evaluate_document, evaluate_items
    from flinktune.rules.examples import run_examples
    from flinktune.rules.loader import RuleText, compile_rule
    from flinktune.rules.ruleset import RuleSet
    from flinktune.versions import DEFAULT_VERSION

    rule, problems = compile_rule(RuleText("user/rule.yaml", text.encode("utf-8", "surrogatepass")))
    for problem in problems:
        if not problem.strip() or "\n" in problem.strip():
            raise PropertyViolation(f"loader problem is not one line: {problem!r}")
    if rule is None:
        return problems
    # Mutated analysis rules' metrics examples go through the analysis's diagnosis as rules check runs them.
    from flinktune.analysis.example_metrics import items_from_metrics

    run_examples(rule, items_from_metrics)
    if _RULE_DOC is None:
        from flinktune.config.reader import read_config_text

        _RULE_DOC = read_config_text("state.backend: rocksdb\ntaskmanager.memory.network.fraction: 0.5\n"
                                     "taskmanager.network.memory.buffers-per-channel: -1\n",
                                     "flink-conf.yaml")[0]
    ruleset = RuleSet((rule,))
    evaluate_document(ruleset, _RULE_DOC, DEFAULT_VERSION, {"parallelism": 4})
    for scope in ("vertex", "subtask"):
        evaluate_items(ruleset, scope, [{"name": "Sink", "busy": 0.5}], DEFAULT_VERSION, {}, "dump")
    return rule


def t_scenario(text: str) -> object:
    from flinktune.sim.scenario import scenario_from_text

    scenario = scenario_from_text(text, "scenario.yaml")
    scenario.with_overrides(buffers_per_channel=scenario.network.buffers_per_channel)  # --sweep's path
    return scenario


_TMP = Path(tempfile.gettempdir()) / f"flinktune-hostile-{os.getpid()}"
# The parsers that read files get theirs here; gone when the process ends (tests and fuzz_all.py).
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)


def _as_file(name: str, text: str) -> Path:
    _TMP.mkdir(exist_ok=True)
    path = _TMP / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def t_plan(text: str) -> object:
    from flinktune.analysis.plan import load_plan

    return load_plan(_as_file("plan.json", text))


def t_baseline(text: str) -> object:
    from flinktune.lint.baseline import load_baseline

    return load_baseline(_as_file("baseline.json", text))


def t_project_yaml(text: str) -> object:
    from flinktune.lint.project import load_project_config

    return load_project_config(_as_file(".flinktune.yaml", text))


def t_project_toml(text: str) -> object:
    from flinktune.lint.project import load_project_config

    return load_project_config(_as_file("pyproject.toml", text))


def t_suppress(text: str) -> object:
    from flinktune.lint.suppress import parse_directives

    return parse_directives(text)


_BUNDLED = None


def t_lint(text: str) -> object:
    """What ``lint`` (and ``lint --fix``) does with a file: read it, run every bundled rule, and apply
    each finding's fix to the text (the writer must succeed or refuse with a WriteError). The file
    name (format) and the Flink version vary with the input, so one case costs one rules pass."""
    global _BUNDLED
    import zlib

    from flinktune.config.reader import read_config_text
    from flinktune.config.writer import apply_changes
    from flinktune.rules import evaluate_document, load_rules
    from flinktune.versions import parse_version

    if _BUNDLED is None:
        _BUNDLED = load_rules()
    pick = zlib.crc32(text.encode("utf-8", "surrogatepass"))
    name = ("flink-conf.yaml", "config.yaml", "conf/flink.yaml")[pick % 3]
    version = parse_version(("1.20", "1.13", "2.0", "1.17")[(pick // 3) % 4])
    findings = []
    documents = read_config_text(text, name)
    for document in documents:
        found = evaluate_document(_BUNDLED, document, version, {"parallelism": 8, "slots": 2})
        findings.extend(found)
        for finding in found[:5]:
            if finding.fix is None:
                continue
            try:
                apply_changes(text, document, [finding.fix])
            except FlinktuneError as error:
                check_error(error)
    return findings


_EDIT_KEYS = ("taskmanager.memory.network.fraction", "state.backend", "taskmanager.numberOfTaskSlots",
              "taskmanager.memory.segment-size", "new.key", "a.b.c")
_EDIT_VALUES = ("0.2", "64kb", "", " padded ", "x # y", "line\nbreak", "'quoted'", "\"q\"", "{a: 1}",
                "[1, 2]", "null", "true", "\u00e9t\u00e9", "- item", "key: value", "*alias", "&anchor",
                "!!tag", "%", "@")


def t_writer(text: str) -> object:
    """The config writer on a fuzzed file: one set/delete/rename chosen from the text (so a case is
    repeatable). The result must be a text the readers accept, with the edit in it, or a WriteError."""
    import zlib

    from flinktune.change import Change
    from flinktune.config.reader import read_config_text
    from flinktune.config.writer import apply_changes

    pick = zlib.crc32(text.encode("utf-8", "surrogatepass"))
    name = ("flink-conf.yaml", "config.yaml", "deploy.yaml")[pick % 3]
    documents = read_config_text(text, name)
    if not documents:
        return None
    document = documents[pick % len(documents)]
    keys = [e.key for e in document.entries] or list(_EDIT_KEYS)
    key = keys[(pick >> 3) % len(keys)] if (pick >> 7) % 3 else _EDIT_KEYS[(pick >> 3) % len(_EDIT_KEYS)]
    value = _EDIT_VALUES[(pick >> 11) % len(_EDIT_VALUES)]
    action = ("set", "delete", "rename")[(pick >> 17) % 3]
    edit = (Change("set", key, value) if action == "set" else Change("delete", key) if action == "delete"
            else Change("rename", key, new_key=_EDIT_KEYS[(pick >> 19) % len(_EDIT_KEYS)]))
    out = apply_changes(text, document, [edit])
    # What we write, we can read back in the same format (the one Flink would use: it goes by the
    # file name; for other names our content sniffing could pick another format after an edit).
    again = read_config_text(out, name, document.format)
    if action == "set" and not any(d.get(key) is not None for d in again):
        raise PropertyViolation(f"set {key} is not in the written text")
    if action == "delete" and document.get(key) is not None and len(again) == len(documents) \
            and again[documents.index(document)].get(key) is not None:
        raise PropertyViolation(f"delete {key} left the key in the written text")
    return out


def t_recommend(text: str) -> object:
    """``recommend`` on a fuzzed config with the default environment (model + writer on every input)."""
    from flinktune.advise.engine import recommend_text
    from flinktune.situation.environment import Environment
    from flinktune.versions import DEFAULT_VERSION

    return recommend_text(text, "flink-conf.yaml", Environment(), version_of=lambda _doc: DEFAULT_VERSION)


def t_profile(text: str) -> object:
    from flinktune.situation.environment import load_profile

    return load_profile(_as_file("profile.yaml", text))


@dataclass(frozen=True)
class Target:
    name: str
    run: Callable[[str], object]
    seeds: Callable[[], list[str]]


# ---------------------------------------------------------------------------------------------
# Seeds: real inputs the mutator starts from


def _read_all(paths: list[Path], limit: int = MAX_TEXT_CHARS) -> list[str]:
    out = []
    for p in paths:
        try:
            out.append(p.read_text(encoding="utf-8", errors="replace")[:limit])
        except OSError:
            continue
    return out


def config_seeds() -> list[str]:
    files = sorted(CORPUS.glob("*.yaml"))[:40] if CORPUS.is_dir() else []
    files += sorted((REPO / "sample_configs").glob("*.yaml"))
    return [*_read_all(files),
        "taskmanager.memory.process.size: 1728m\nparallelism.default: 4 # four\n",
        "taskmanager:\n  memory:\n    process.size: 2g\n    network:\n      fraction: 0.2\n",
        "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nspec:\n  flinkConfiguration:\n"
        "    taskmanager.numberOfTaskSlots: \"2\"\n",
    ]


def value_seeds() -> list[str]:
    return ["32kb", "1 gb", "64 mebibytes", "0", "-1", "1024", "9223372036854775807b", "1.5g", "100 ms",
            "1 min", "30s", "2 d", "true", "FALSE", "10Gbit/s", "1.25e9", "a;b;c", "0x10", " 7 ", "1_000",
            "v1_20", "1.20.1", "2.0-preview1", "hash", "\u0661\u0662mb", "inf", "nan", "1e309"]


def memory_seeds() -> list[str]:
    return ["32kb", "1 gb", "64 mebibytes", "0", "1024", "9223372036854775807b", "1536m", "2t", "100 bytes",
            "1k", "5 kibibytes", "1.5g", "-1", "1e3mb"]


def duration_seeds() -> list[str]:
    return ["100 ms", "1 min", "30s", "2 d", "0", "10000", "5 h", "1 micro", "7 nanos", "3 hours", "1.5 s",
            "-1 s", "1 week"]


def condition_seeds() -> list[str]:
    seeds = ["config('taskmanager.memory.segment-size') > 64kb and not is_set('x')",
             "env.parallelism * env.slots >= 2 ** 10 or key in ['a', 'b']",
             "if(value == null, 0, len(raw)) < 5 and max([1, 2, n]) // 2 == 1",
             "edit_distance(key, 'taskmanager.memory.network.fraction') <= 2",
             "item.busy > 0.5 and item.name != 'x' and lst[1] + f > 2.5",
             "coalesce(null, memory('1g'), 3) % 7 != -1 and 'mem' in key",
             "suggest(key) != null or canonical(key) == key or deprecated(key)",
             "tm_memory('network') // tm_memory('segment') > 0 and tm_memory('network') > 1mb "
             "and version_at_least('1.17')"]
    rules = sorted((REPO / "rules").rglob("*.yaml"))
    import yaml

    for path in rules[:60]:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict):
            seeds.append(str(data.get("condition", "")))
            seeds.extend(str(v) for v in (data.get("let") or {}).values())
    return [s for s in seeds if s]


def template_seeds() -> list[str]:
    return ["'{key}' is {value}", "{x:memory} {y:duration} {z:int} {f:percent} {lst:list}",
            "{{literal}} {item.name} {env.parallelism:int}", "{big:flink_memory} {neg:memory}"]


def rule_seeds() -> list[str]:
    return _read_all(sorted((REPO / "rules").rglob("*.yaml"))[:60], limit=20_000)


def scenario_seeds() -> list[str]:
    return _read_all(sorted((REPO / "sample_configs" / "scenarios").glob("*.yaml")), limit=20_000)


def plan_seeds() -> list[str]:
    out = []
    for name in ("healthy", "slow-sink"):
        path = SHARED / "data" / "real-flink-1.20" / name / "plan.json"
        if path.is_file():
            out.append(path.read_text(encoding="utf-8"))
    out.append(json.dumps({"jid": "j", "name": "n", "nodes": [
        {"id": "a", "parallelism": 2, "description": "Source"},
        {"id": "b", "parallelism": 2, "inputs": [{"id": "a", "ship_strategy": "HASH"}]}]}))
    return out


def baseline_seeds() -> list[str]:
    return ['{"format": "flinktune-baseline-1", "findings": [{"fingerprint": "abc", "code": "FTC001"}]}',
            '{"format": "flinktune-baseline-1", "findings": []}']


def project_yaml_seeds() -> list[str]:
    return ["flink-version: '1.20'\nfail-on: error\nselect: [FTC]\nignore: [FTC025]\nrules: [rules]\n"
            "severity: {FTC001: info}\nbaseline: base.json\n"]


def project_toml_seeds() -> list[str]:
    return ['[tool.flinktune]\nflink-version = "1.20"\nfail-on = "error"\nselect = ["FTC"]\n'
            'severity = {FTC001 = "info"}\n']


def profile_seeds() -> list[str]:
    return ["rtt: 2ms\nbandwidth: 10Gbit/s\nparallelism: 64\nslots: 4\ntaskmanagers: 16\nrecord-size: 200b\n"
            "rate: 100000\nlatency-target: 20ms\nskew: 1.5\nworkload: streaming\nflink-version: '1.20'\n"]


def suppress_seeds() -> list[str]:
    return ["a: 1 # flinktune: disable=FTC001\n# flinktune: disable-file=FTC0\nb: 2 # noqa\n",
            "# flinktune: disable-next-line=FTC001,FTC002\nkey: v\n"]


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("flat", t_flat, config_seeds),
    Target("yaml", t_yaml, config_seeds),
    Target("k8s", t_k8s, config_seeds),
    Target("detect", t_detect, config_seeds),
    Target("memory", t_memory, memory_seeds),
    Target("duration", t_duration, duration_seeds),
    Target("values", t_values, value_seeds),
    Target("condition", t_condition, condition_seeds),
    Target("template", t_template, template_seeds),
    Target("rule_file", t_rule_file, rule_seeds),
    Target("scenario", t_scenario, scenario_seeds),
    Target("plan", t_plan, plan_seeds),
    Target("baseline", t_baseline, baseline_seeds),
    Target("project_yaml", t_project_yaml, project_yaml_seeds),
    Target("project_toml", t_project_toml, project_toml_seeds),
    Target("suppress", t_suppress, suppress_seeds),
    Target("writer", t_writer, config_seeds),
    Target("lint", t_lint, config_seeds),
    Target("recommend", t_recommend, config_seeds),
    Target("profile", t_profile, profile_seeds),
)}


# ---------------------------------------------------------------------------------------------
# A fast mutator (the fuzz script's generator; hypothesis drives the seeded tests)

TOKENS = (
    ":", ": ", " #", "#", "\n", "\r\n", "\r", "\t", "  ", "    ", "- ", "-", "---\n", "...\n", "'", '"', "\\",
    "{", "}", "[", "]", ",", "&a ", "*a", "<<: *a", "!!python/object:os.system", "!!binary", "!!float",
    "!!int", "!!str", "? ", "|", ">", "|-\n  ", "%YAML 1.1\n", "%TAG ! tag:x:\n", "\ufeff", "\x00", "\x85",
    "\u2028", "\ud800", "\U0001F600", "é", "ß", "null", "~", "true", "yes", "on", "NaN", ".inf", "-.inf",
    ".nan", "0x1F", "0o17", "1e309", "-1", "0", "9" * 30, "1" * 5000, "2**64", "kb", "mb", "gb", "tb",
    "b", "bytes", "ms", "s", "min", "h", "d", "ns", "µs", "Gbit/s", "taskmanager.", "memory.", "network.",
    "taskmanager.memory.network.fraction", "taskmanager.memory.segment-size", "flinkConfiguration:",
    "apiVersion: v1\n", "kind: FlinkDeployment\n", "kind: ConfigMap\n", "data:\n  config.yaml: |\n    ",
    "spec:\n", "metadata:\n", "__import__", "__class__", "lambda", "for", "if", "(", ")", "**", "//", "%",
    "==", "!=", "<=", ">=", "and", "or", "not", "in", ".", "config(", "env.", "key", "value", "item.",
    "len(", "max(", "edit_distance(", "suggest(", "{x}", "{{", "}}", "{x:int}", "{x:memory}",
    '"nodes"', '"id"', '"parallelism"', '"inputs"', "Infinity", "NaN", "1" * 4400, "[[[[[[[[", "{{{{{{",
    "code: FTX001\n", "scope: vertex\n", "condition: ", "let:\n  a: ", "examples:\n  fail:\n    - ",
)


def mutate(rng: random.Random, seed: str, pool: list[str], max_chars: int = MAX_TEXT_CHARS) -> str:
    text = seed
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        pos = rng.randint(0, len(text))
        if op < 0.35:
            text = text[:pos] + rng.choice(TOKENS) + text[pos:]
        elif op < 0.5 and text:
            end = min(len(text), pos + rng.randint(1, 40))
            text = text[:pos] + text[end:]
        elif op < 0.6 and text:
            start = rng.randint(0, len(text) - 1)
            piece = text[start:start + rng.randint(1, 60)]
            text = text[:pos] + piece * rng.randint(1, 8) + text[pos:]
        elif op < 0.7:
            code = rng.choice((rng.randint(0, 0x7F), rng.randint(0x80, 0x10FFFF)))
            text = text[:pos] + chr(code) + text[pos:]
        elif op < 0.8 and pool:
            other = rng.choice(pool)
            cut = rng.randint(0, len(other))
            text = text[:pos] + other[cut:cut + rng.randint(1, 200)]
        elif op < 0.9:
            lines = text.split("\n")
            rng.shuffle(lines) if rng.random() < 0.3 else None
            i = rng.randrange(len(lines))
            lines[i] = " " * rng.randint(0, 8) + lines[i].lstrip()
            text = "\n".join(lines)
        else:
            text = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 30)))
    if len(text) > max_chars and rng.random() < 0.9:
        text = text[:max_chars]
    return text


def generate(rng: random.Random, seeds: list[str], max_chars: int = MAX_TEXT_CHARS) -> str:
    if not seeds or rng.random() < 0.05:
        return "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 40)))
    seed = rng.choice(seeds)
    if len(seed) > max_chars:
        # A window of whole lines of a long seed, so every part of it gets mutated over a run.
        start = seed.rfind("\n", 0, rng.randint(0, len(seed) - max_chars)) + 1
        seed = seed[start:start + max_chars]
    return mutate(rng, seed, seeds, max_chars)
