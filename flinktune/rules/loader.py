"""Load rule files: the bundled ones plus user folders, every problem in every file collected.

Over 500 lines: loading, validating and caching rule files (and the shipped data for a fresh
machine) share one notion of a rule file's identity.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from flinktune import __version__

try:
    # CPython's own SHA-256 (the same digests): importing hashlib loads OpenSSL, ~2 ms of every lint.
    from _sha256 import sha256
except ImportError:  # other interpreters, and CPython 3.12+ (where it is _sha2)
    from hashlib import sha256
from flinktune.errors import ConditionError, ConfigError, RuleError
from flinktune.rules.functions import FUNCTIONS
from flinktune.rules.lang import KEYWORDS, Condition, _Frozen, _set, check_constants, check_names, parse
from flinktune.rules.ruleset import Rule, RuleSet
from flinktune.rules.spec import ITEM_SCOPES, SCOPE_BINDINGS, RuleSpec, VersionRange, spec_from_data
from flinktune.rules.template import Template, parse_template

BUNDLED_PACKAGE = "flinktune.bundled_rules"
MAX_RULE_FILE_BYTES = 256 * 1024
MAX_YAML_NODES = 20_000
RULE_SUFFIXES = (".yaml", ".yml")
CACHE_FILE_NAME = "validated-rules.jsonl"
_LEGACY_CACHE_FILE_NAME = "validated-rules.json"      # one JSON object, before salts had lines
MAX_CACHE_ENTRIES = 1000
# The cache file holds one line per salt (flinktune version and its validation code): the salt in
# hex, a space, then that salt's entries as JSON. A run decodes only its own line, so entries of
# another install (an older version, a pre-commit environment) cost nothing to keep; the most
# recently written few are kept.
MAX_CACHE_SALTS = 3


class RuleText(_Frozen):
    """A rule file's text and where it came from (a slotted record: see lang._Frozen)."""

    __slots__ = ("bundled", "data", "problem", "source")
    _fields = ("source", "data", "problem", "bundled")
    source: str
    data: bytes | None
    problem: str | None
    bundled: bool

    def __init__(self, source: str, data: bytes | None, problem: str | None = None,
                 bundled: bool = False) -> None:
        _set(self, "source", source)
        _set(self, "data", data)
        _set(self, "problem", problem)
        _set(self, "bundled", bundled)


def _bundled_root() -> Any:
    """The installed ``flinktune.bundled_rules`` package, else the repository's ``rules/`` folder.

    An editable install made before ``rules/`` existed maps no such package; the repository
    layout (``<repo>/flinktune`` next to ``<repo>/rules``) is the fallback.
    """
    try:
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        return Path(__file__).resolve().parents[2] / "rules"
    # A plain folder (wheel or editable install) is read directly: importlib.resources would add
    # its zip support (zipfile, tempfile ...) to every lint's start-up.
    for location in spec.submodule_search_locations or ():
        if os.path.isdir(location):
            return Path(location)
    from importlib import resources

    return resources.files(BUNDLED_PACKAGE)


def _walk(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, Path):
        yield from _walk_folder(str(node), prefix)
        return
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


def _walk_folder(folder: str, prefix: str) -> Iterator[tuple[str, Any]]:
    """``_walk`` for a plain folder with os.scandir: no stat per file, no Path objects (every lint
    reads the ~40 bundled rule files)."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        name = f"{prefix}/{entry.name}" if prefix else entry.name
        if entry.is_dir():
            if not entry.name.startswith((".", "__")):
                yield from _walk_folder(entry.path, name)
        elif entry.name.endswith(RULE_SUFFIXES):
            yield name, entry.path


def _read_node(node: Any) -> bytes:
    if isinstance(node, str):
        with open(node, "rb") as handle:
            return handle.read()
    return bytes(node.read_bytes())


def bundled_rule_texts() -> list[RuleText]:
    root = _bundled_root()
    texts = []
    for name, node in _walk(root, ""):
        texts.append(RuleText(source=f"rules/{name}", data=_read_node(node), bundled=True))
    if not texts:
        # A broken install must not lint silently with no rules at all.
        raise RuleError(f"the bundled rules are missing (package {BUNDLED_PACKAGE} has no rule files); "
                        "reinstall flinktune")
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
        size = len(text.data)
        return None, [f"{text.source}: rule file is {size} bytes (at most {MAX_RULE_FILE_BYTES})"]
    try:
        decoded = text.data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, [f"{text.source}: not UTF-8 text (byte {error.start})"]
    if "\x00" in decoded:
        return None, [f"{text.source}: binary file, not a rule"]
    from flinktune.config.safe_load import load_yaml

    try:
        # libyaml's safe loader when present: several times faster than PyYAML's own.
        data = load_yaml(decoded, file=text.source, prefix="invalid YAML", fast=True)
    except ConfigError as error:
        return None, [error.one_line()]
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


# ---------------------------------------------------------------------------------------------
# Validated-data cache: pydantic validates a rule file the first time its exact bytes are seen;
# later runs rebuild the rule from the cached validated data without importing pydantic.


# What a rule's validation and compilation depend on besides its own text.
_SALT_SOURCES = ("schema.py", "spec.py", "lang.py", "template.py", "functions.py", "loader.py")
# Cache key suffix of the note "this exact text also compiled cleanly".
_COMPILED = ":compiled"


def _salt() -> bytes:
    # The validation and compilation code itself is part of the key: editing schema.py, spec.py,
    # the condition language, the templates or the functions (or upgrading flinktune) invalidates
    # every cached entry.
    here = Path(__file__).resolve().parent
    parts = [f"flinktune {__version__}".encode()]
    for name in _SALT_SOURCES:
        try:
            parts.append((here / name).read_bytes())
        except OSError:
            parts.append(name.encode())
    return sha256(b"\0".join(parts)).digest()


def cache_path(name: str = CACHE_FILE_NAME) -> Path | None:
    """Where the cache file ``name`` lives (docs/security.md); None when caches are turned off."""
    if os.environ.get("FLINKTUNE_NO_CACHE"):
        return None
    base = os.environ.get("FLINKTUNE_CACHE_DIR")
    if base:
        return Path(base) / name
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".cache"
    return root / "flinktune" / name


class ValidatedCache:
    """Content hash of a rule file -> its validated data. Best effort: unreadable or unwritable
    caches are ignored, and only files that validated cleanly are stored. ``salt``: what else the
    data depends on (default: flinktune's version and its rule validation code)."""

    def __init__(self, path: Path | None, salt: bytes | None = None) -> None:
        self.path = path
        self.salt = _salt() if salt is None else salt
        self.entries: dict[str, Any] = {}
        self.others: list[str] = []               # other salts' lines, kept undecoded
        self.used: dict[str, Any] = {}
        self.dirty = False
        if path is not None:
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except (OSError, ValueError):
                lines = []
            mine = self.salt.hex() + " "
            for line in lines:
                if line.startswith(mine) and not self.entries:
                    try:
                        loaded = json.loads(line[len(mine):])
                    except ValueError:
                        continue
                    if isinstance(loaded, dict):
                        self.entries = loaded
                elif len(line) > len(mine) and line[len(mine) - 1] == " " and line[len(mine)] == "{":
                    self.others.append(line)

    def digest(self, data: bytes) -> str:
        return sha256(self.salt + data).hexdigest()

    def get(self, digest: str) -> Any:
        found = self.entries.get(digest)
        if found is not None:
            self.used[digest] = found
        return found

    def put(self, digest: str, data: Any) -> None:
        self.used[digest] = data
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        merged = dict(self.used)
        for digest, data in reversed(list(self.entries.items())):
            if len(merged) >= MAX_CACHE_ENTRIES:
                break
            merged.setdefault(digest, data)
        # The current salt first; the most recently written other salts after it.
        lines = [f"{self.salt.hex()} {json.dumps(merged)}", *self.others[:MAX_CACHE_SALTS - 1]]
        import tempfile  # only when the cache changes: it is a slow import

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".rules-", suffix=".json")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")
            os.replace(temp, self.path)
            legacy = self.path.with_name(_LEGACY_CACHE_FILE_NAME)
            if legacy.exists():
                legacy.unlink()
        except OSError:
            return


# ---------------------------------------------------------------------------------------------
# Validated data of the bundled rules, shipped in the package (flinktune/data/bundled_rules.json,
# written by tools/rules/build_bundled_data.py): a fresh machine, such as a CI container, then
# lints without importing pydantic at all on its first run. Used only for a bundled rule file
# whose bytes, and the validation code (schema.py, spec.py, versions.py), match what the data was
# built from; anything else is validated as usual.

_HERE = Path(__file__).resolve().parent
SHIPPED_FILE = _HERE.parent / "data" / "bundled_rules.json"
_SHIPPED_SOURCES = (_HERE / "schema.py", _HERE / "spec.py", _HERE.parent / "versions.py")
_shipped: dict[str, Any] | None = None


def shipped_schema_digest() -> str:
    """What the shipped data depends on besides the rule files themselves."""
    parts = []
    for path in _SHIPPED_SOURCES:
        try:
            parts.append(path.read_bytes())
        except OSError:
            parts.append(path.name.encode())
    return sha256(b"\0".join(parts)).hexdigest()


def shipped_validated(text: RuleText) -> dict[str, Any] | None:
    """The shipped validated data of a bundled rule file, if it was built from these exact bytes."""
    global _shipped
    if _shipped is None:
        _shipped = {}
        try:
            data = json.loads(SHIPPED_FILE.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and data.get("schema") == shipped_schema_digest():
            files = data.get("files")
            _shipped = files if isinstance(files, dict) else {}
    entry = _shipped.get(text.source)
    if not isinstance(entry, dict) or text.data is None:
        return None
    if entry.get("sha256") != sha256(text.data).hexdigest():
        return None
    validated = entry.get("validated")
    return validated if isinstance(validated, dict) else None


def build_shipped_data() -> dict[str, Any]:
    """The shipped data for the bundled rules as they are now (validated with pydantic)."""
    files: dict[str, Any] = {}
    for text in bundled_rule_texts():
        assert text.data is not None
        validated, problems = _validate(text)
        if validated is None:
            raise RuleError(f"{text.source} does not validate", problems=tuple(problems))
        files[text.source] = {"sha256": sha256(text.data).hexdigest(), "validated": validated}
    return {"schema": shipped_schema_digest(), "files": files}


# The bundled rules' expressions, parsed (flinktune/data/bundled_rules_trees.json, written with the data
# above): used while the parser (lang.py) is the one that wrote them.
TREES_FILE = _HERE.parent / "data" / "bundled_rules_trees.json"
_trees_loaded = False


def _parser_digest() -> str:
    try:
        return sha256((_HERE / "lang.py").read_bytes()).hexdigest()
    except OSError:
        return ""


def _use_shipped_trees() -> None:
    global _trees_loaded
    if _trees_loaded:
        return
    _trees_loaded = True
    try:
        data = json.loads(TREES_FILE.read_bytes())
    except (OSError, ValueError):
        return
    if isinstance(data, dict) and data.get("parser") == _parser_digest() \
            and isinstance(data.get("trees"), dict):
        from flinktune.rules.lang import use_parsed_trees

        use_parsed_trees(data["trees"])


def build_shipped_trees() -> dict[str, Any]:
    """Every expression of the bundled rules (conditions, lets, related), parsed and encoded."""
    from flinktune.rules.lang import encode_tree, parse

    trees: dict[str, Any] = {}
    for text in bundled_rule_texts():
        validated = shipped_validated(text)
        if validated is None:
            validated, problems = _validate(text)
            if validated is None:
                raise RuleError(f"{text.source} does not validate", problems=tuple(problems))
        sources = [validated["condition"], *(validated.get("let") or {}).values()]
        if validated.get("related") is not None:
            sources.append(validated["related"])
        for source in sources:
            trees[source] = encode_tree(parse(source).root)
    return {"parser": _parser_digest(), "trees": dict(sorted(trees.items()))}


def _validate(text: RuleText) -> tuple[dict[str, Any] | None, list[str]]:
    """Parse and validate with pydantic: the validated data, or every problem found."""
    data, problems = _parse_yaml(text)
    if problems:
        return None, problems
    if not isinstance(data, dict):
        return None, [f"{text.source}: a rule file must be a YAML mapping of fields"]
    from pydantic import ValidationError

    from flinktune.rules.schema import RuleFile

    try:
        model = RuleFile.model_validate(data)
    except ValidationError as error:
        return None, [f"{text.source}: {_loc(e['loc'])}: {e['msg']}" for e in error.errors()]
    return model.model_dump(by_alias=True), []


def compile_rule(text: RuleText, cache: ValidatedCache | None = None) -> tuple[Rule | None, list[str]]:
    """Validate and compile one rule file; returns the rule or the list of its problems."""
    if text.problem is not None or text.data is None:
        return None, [f"{text.source}: {text.problem or 'cannot read'}"]
    digest = cache.digest(text.data) if cache is not None else ""
    validated = cache.get(digest) if cache is not None else None
    fresh = validated is None
    if validated is None and text.bundled:
        validated = shipped_validated(text)
    if validated is None:
        validated, problems = _validate(text)
        if validated is None:
            return None, problems
    # Text that compiled cleanly before (same bytes, same compiler) compiles cleanly again: its
    # conditions are then parsed only when first evaluated, and the name checks are skipped.
    certified = not fresh and cache is not None and cache.get(digest + _COMPILED) is True
    spec = spec_from_data(validated)
    rule, problems = _compile_certified(spec, text) if certified else _compile(spec, text)
    if rule is not None and cache is not None and not certified:
        if fresh:
            try:
                json.dumps(validated)
            except (TypeError, ValueError):
                return rule, []  # e.g. a YAML timestamp in an example: fine, just not cacheable
            cache.put(digest, validated)
        cache.put(digest + _COMPILED, True)
    return rule, problems


def _compile_certified(spec: RuleSpec, text: RuleText) -> tuple[Rule, list[str]]:
    """The rule of a text known to compile without problems, conditions parsed on first use."""
    fix_templates = None
    if spec.fix is not None and spec.fix.key is not None:
        fix_templates = (parse_template(spec.fix.key),
                         parse_template(spec.fix.value) if spec.fix.value is not None else None,
                         parse_template(spec.fix.new_key) if spec.fix.new_key is not None else None)
    rule = Rule(spec=spec, source=text.source, condition=Condition.deferred(spec.condition),
                lets=tuple((name, Condition.deferred(expression)) for name, expression in spec.let.items()),
                message=parse_template(spec.message),
                at=parse_template(spec.at) if spec.at is not None else None,
                fix_templates=fix_templates, version_range=VersionRange.parse(spec.versions),
                bundled=text.bundled,
                related=Condition.deferred(spec.related) if spec.related is not None else None)
    return rule, []


def _compile(spec: RuleSpec, text: RuleText) -> tuple[Rule | None, list[str]]:
    problems: list[str] = []
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
    related = None
    if spec.related is not None:
        related = _compile_condition(text.source, "related", spec.related, all_names, problems)
    fix_templates = None
    if spec.fix is not None:
        fix_key = _compile_template(text.source, "fix.key", spec.fix.key, all_names, problems)
        fix_value = _compile_template(text.source, "fix.value", spec.fix.value, all_names, problems)
        fix_new = _compile_template(text.source, "fix.new_key", spec.fix.new_key, all_names, problems)
        if fix_key is not None:
            fix_templates = (fix_key, fix_value, fix_new)
    if spec.scope in ITEM_SCOPES:
        for i, example in enumerate([*spec.pass_examples, *spec.fail_examples]):
            if example.config is not None and not isinstance(example.config, dict):
                problems.append(f"{text.source}: examples[{i}]: item-scope examples give items, "
                                "not a config text")
    for i, example in enumerate([*spec.pass_examples, *spec.fail_examples]):
        if example.metrics is not None and (spec.scope != "vertex" or example.items is not None):
            problems.append(f"{text.source}: examples[{i}]: metrics are for vertex-scope rules, "
                            "instead of items")
    if problems or condition is None or message is None:
        return None, problems
    rule = Rule(spec=spec, source=text.source, condition=condition, lets=tuple(lets), message=message, at=at,
                fix_templates=fix_templates, version_range=VersionRange.parse(spec.versions),
                bundled=text.bundled, related=related)
    return rule, []


def build_ruleset(texts: Iterable[RuleText]) -> RuleSet:
    """Compile every text; raise one RuleError carrying every problem in every file."""
    rules: list[Rule] = []
    problems: list[str] = []
    cache = ValidatedCache(cache_path())
    for text in texts:
        rule, found = compile_rule(text, cache)
        problems.extend(found)
        if rule is not None:
            rules.append(rule)
    cache.save()
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
    if bundled:
        _use_shipped_trees()
    for directory in extra_dirs:
        texts.extend(rule_texts_in(Path(directory)))
    return build_ruleset(texts)
