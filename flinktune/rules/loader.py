"""Load rule files: the bundled ones plus user folders, every problem in every file collected."""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from flinktune.errors import ConditionError, RuleError
from flinktune.rules.functions import FUNCTIONS
from flinktune.rules.lang import KEYWORDS, Condition, check_constants, check_names, parse
from flinktune.rules.ruleset import Rule, RuleSet
from flinktune.rules.schema import SCOPE_BINDINGS, RuleFile, VersionRange
from flinktune.rules.template import Template, parse_template

BUNDLED_PACKAGE = "flinktune.bundled_rules"
MAX_RULE_FILE_BYTES = 256 * 1024
MAX_YAML_NODES = 20_000
# libyaml when present: loading the bundled rules is on every lint run's path.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
RULE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class RuleText:
    """A rule file's text and where it came from."""

    source: str
    data: bytes | None
    problem: str | None = None
    bundled: bool = False


def _bundled_root() -> Any:
    """The installed ``flinktune.bundled_rules`` package, else the repository's ``rules/`` folder.

    An editable install made before ``rules/`` existed maps no such package; the repository
    layout (``<repo>/flinktune`` next to ``<repo>/rules``) is the fallback.
    """
    try:
        return importlib.resources.files(BUNDLED_PACKAGE)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "rules"


def _walk(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    try:
        children = sorted(node.iterdir(), key=lambda child: child.name)
    except (OSError, FileNotFoundError):
        return
    for child in children:
        name = f"{prefix}/{child.name}" if prefix else child.name
        if child.is_dir():
            if not child.name.startswith((".", "__")):
                yield from _walk(child, name)
        elif child.name.endswith(RULE_SUFFIXES):
            yield name, child


def bundled_rule_texts() -> list[RuleText]:
    root = _bundled_root()
    texts = []
    for name, node in _walk(root, ""):
        texts.append(RuleText(source=f"rules/{name}", data=node.read_bytes(), bundled=True))
    return texts


def rule_texts_in(directory: Path) -> list[RuleText]:
    """Every rule file under ``directory`` (recursively); an unusable folder is one problem."""
    path = Path(directory)
    if not path.exists():
        return [RuleText(str(path), None, "rule folder does not exist")]
    if path.is_file():
        files = [path]
    elif path.is_dir():
        try:
            files = sorted(p for p in path.rglob("*") if p.suffix in RULE_SUFFIXES and p.is_file())
        except OSError as error:
            return [RuleText(str(path), None, f"cannot list rule folder: {error.strerror or error}")]
    else:
        return [RuleText(str(path), None, "not a file or folder")]
    texts = []
    for file in files:
        try:
            size = file.stat().st_size
            if size > MAX_RULE_FILE_BYTES:
                too_big = f"rule file is {size} bytes (at most {MAX_RULE_FILE_BYTES})"
                texts.append(RuleText(str(file), None, too_big))
                continue
            texts.append(RuleText(str(file), file.read_bytes()))
        except OSError as error:
            texts.append(RuleText(str(file), None, f"cannot read: {error.strerror or error}"))
    return texts


def _loc(loc: Sequence[object]) -> str:
    parts = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts) or "(file)"


def _parse_yaml(text: RuleText) -> tuple[object | None, list[str]]:
    assert text.data is not None
    if len(text.data) > MAX_RULE_FILE_BYTES:
        return None, [f"{text.source}: rule file is {len(text.data)} bytes (at most {MAX_RULE_FILE_BYTES})"]
    try:
        decoded = text.data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, [f"{text.source}: not UTF-8 text (byte {error.start})"]
    if "\x00" in decoded:
        return None, [f"{text.source}: binary file, not a rule"]
    try:
        data = yaml.load(decoded, Loader=_SAFE_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        return None, [f"{text.source}{where}: invalid YAML: {problem}"]
    problem = _shared_or_oversized(data)
    if problem is not None:
        return None, [f"{text.source}: {problem}"]
    return data, []


def _shared_or_oversized(data: object) -> str | None:
    """Reject YAML aliases of lists/mappings ("billion laughs") and oversized documents.

    An alias makes the loader hand back the same container object twice, so one walk that
    remembers container identities finds it before anything is expanded.
    """
    seen: set[int] = set()
    stack = [data]
    count = 0
    while stack:
        item = stack.pop()
        count += 1
        if count > MAX_YAML_NODES:
            return "rule file is too complex"
        if isinstance(item, dict | list):
            if id(item) in seen:
                return "YAML anchors and aliases are not allowed in rule files"
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
            if isinstance(item, dict):
                stack.extend(item.keys())
    return None


def _compile_condition(source: str, where: str, text: str, names: set[str],
                       problems: list[str]) -> Condition | None:
    try:
        condition = parse(text)
    except ConditionError as error:
        problems.append(f"{source}: {where}: {error.message}")
        return None
    for problem in [*check_names(condition, names, FUNCTIONS), *check_constants(condition)]:
        problems.append(f"{source}: {where}: {problem}")
    return condition


def _compile_template(source: str, where: str, text: str | None, names: set[str],
                      problems: list[str]) -> Template | None:
    if text is None:
        return None
    try:
        template = parse_template(text)
    except ConditionError as error:
        problems.append(f"{source}: {where}: {error.message}")
        return None
    for name in sorted(template.names() - names):
        problems.append(f"{source}: {where}: unknown placeholder '{{{name}}}'")
    return template


def compile_rule(text: RuleText) -> tuple[Rule | None, list[str]]:
    """Validate and compile one rule file; returns the rule or the list of its problems."""
    if text.problem is not None or text.data is None:
        return None, [f"{text.source}: {text.problem or 'cannot read'}"]
    data, problems = _parse_yaml(text)
    if problems:
        return None, problems
    if not isinstance(data, dict):
        return None, [f"{text.source}: a rule file must be a YAML mapping of fields"]
    try:
        spec = RuleFile.model_validate(data)
    except ValidationError as error:
        return None, [f"{text.source}: {_loc(e['loc'])}: {e['msg']}" for e in error.errors()]
    bindings = set(SCOPE_BINDINGS[spec.scope])
    # Functions live in their own namespace (only ever called), so a let may share a function's name.
    clashes = sorted((set(spec.let) & bindings) | (set(spec.let) & KEYWORDS))
    for name in clashes:
        problems.append(f"{text.source}: let.{name}: name clashes with a built-in name")
    lets: list[tuple[str, Condition]] = []
    visible = set(bindings)
    for name, expression in spec.let.items():
        # A let may use the bindings and the let-names defined before it (no cycles possible).
        compiled = _compile_condition(text.source, f"let.{name}", expression, visible, problems)
        if compiled is not None:
            lets.append((name, compiled))
        visible.add(name)
    all_names = bindings | set(spec.let)
    condition = _compile_condition(text.source, "condition", spec.condition, all_names, problems)
    message = _compile_template(text.source, "message", spec.message, all_names, problems)
    at = _compile_template(text.source, "at", spec.at, all_names, problems)
    fix_templates = None
    if spec.fix is not None:
        fix_key = _compile_template(text.source, "fix.key", spec.fix.key, all_names, problems)
        fix_value = _compile_template(text.source, "fix.value", spec.fix.value, all_names, problems)
        fix_new = _compile_template(text.source, "fix.new_key", spec.fix.new_key, all_names, problems)
        if fix_key is not None:
            fix_templates = (fix_key, fix_value, fix_new)
    if spec.scope in ("vertex", "subtask"):
        for i, example in enumerate([*spec.examples.pass_, *spec.examples.fail]):
            if example.config is not None and not isinstance(example.config, dict):
                problems.append(f"{text.source}: examples[{i}]: item-scope examples give items, "
                                "not a config text")
    if problems or condition is None or message is None:
        return None, problems
    rule = Rule(spec=spec, source=text.source, condition=condition, lets=tuple(lets), message=message, at=at,
                fix_templates=fix_templates, version_range=VersionRange.parse(spec.versions),
                bundled=text.bundled)
    return rule, []


def build_ruleset(texts: Iterable[RuleText]) -> RuleSet:
    """Compile every text; raise one RuleError carrying every problem in every file."""
    rules: list[Rule] = []
    problems: list[str] = []
    for text in texts:
        rule, found = compile_rule(text)
        problems.extend(found)
        if rule is not None:
            rules.append(rule)
    seen_codes: dict[str, str] = {}
    seen_names: dict[str, str] = {}
    for rule in rules:
        if rule.code in seen_codes:
            other = seen_codes[rule.code]
            problems.append(f"{rule.source}: code: duplicate rule code {rule.code} (also in {other})")
        else:
            seen_codes[rule.code] = rule.source
        if rule.name in seen_names:
            other = seen_names[rule.name]
            problems.append(f"{rule.source}: name: duplicate rule name {rule.name} (also in {other})")
        else:
            seen_names[rule.name] = rule.source
    if problems:
        count = len(problems)
        raise RuleError(f"{count} problem{'s' if count != 1 else ''} in rule files: {problems[0]}"
                        + (f" (and {count - 1} more)" if count > 1 else ""), problems=tuple(problems))
    return RuleSet(tuple(sorted(rules, key=lambda r: r.code)))


def load_rules(extra_dirs: Iterable[Path | str] = (), *, bundled: bool = True) -> RuleSet:
    """The bundled rules plus every rule file under ``extra_dirs`` (``--rules DIR``)."""
    texts: list[RuleText] = bundled_rule_texts() if bundled else []
    for directory in extra_dirs:
        texts.extend(rule_texts_in(Path(directory)))
    return build_ruleset(texts)
