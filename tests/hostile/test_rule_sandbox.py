"""Rule files from untrusted pull requests: the loader and the condition language give rule text
no way to run Python, import, read files, or loop without bound.

Each attack goes through the real entry points: ``load_rules`` (what lint/analyze use with
``--rules DIR``) and ``flinktune rules check DIR`` (what a CI job runs on a PR that adds rules).
A "canary" file is created by any attack that reaches Python's machinery; the tests check it never
appears and that no test needs more than the pytest timeout (bounded evaluation).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flinktune.cli.app import app
from flinktune.config.reader import read_config_text
from flinktune.errors import ConditionError, FlinktuneError, RuleError
from flinktune.rules import evaluate_document, load_rules
from flinktune.rules.functions import FUNCTIONS
from flinktune.rules.lang import MAX_LIST_ITEMS, MAX_STRING_CHARS, evaluate, parse
from flinktune.versions import DEFAULT_VERSION

RULE = """\
code: FTX901
name: hostile-rule
severity: warning
scope: key
versions: "*"
let:
  first: {let}
condition: {condition}
message: "{{key}} is odd"
why: Testing hostile rule text.
references: [https://example.org]
examples:
  pass:
    - config: {{a: "1"}}
  fail:
    - config: {{a: "2"}}
"""


def rule_text(condition: str, let: str = "1") -> str:
    # Conditions are written as YAML double-quoted scalars so any character survives.
    quote = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'  # noqa: E731
    return RULE.format(condition=quote(condition), let=quote(let))


def write_rule(folder: Path, text: str, name: str = "FTX901-hostile.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def canary(tmp_path: Path) -> Path:
    return tmp_path / "PWNED"


def attacks(canary: Path) -> list[str]:
    c = str(canary)
    return [
        f"__import__('os').system('touch {c}')",
        f"__builtins__.open('{c}', 'w')",
        "key.__class__.__mro__[1].__subclasses__()",
        "env.__class__",
        "value.__globals__",
        "config.__code__",
        "(lambda: 1)()",
        "lambda x: x",
        "[x for x in keys]",
        "[x for x in [1] for y in [1] for z in [1]]",
        "{k: v for k, v in env}",
        "open('/etc/passwd')",
        f"open('{c}', 'w').write('x')",
        "eval('1 + 1')",
        "exec('import os')",
        "compile('1', 'f', 'eval')",
        "getattr(env, 'x')",
        "globals()",
        "import os",
        "key.format(env)",
        "'{0.__class__}'.format(key)",
        "f'{key}'",
        "key; import os",
        "key if true else 1",
        "print(1)",
        "vars()",
        "__loader__",
        "config('x').__class__",
        "env['__class__']",           # indexing a mapping by a string is data, never an attribute
        "keys[0].upper()",
        "x := 1",
        "yield 1",
        "await key",
        "`key`",
    ]


def test_the_base_rule_loads(tmp_path: Path) -> None:
    # Without this, every attack below could be "refused" for a reason that has nothing to do with it.
    write_rule(tmp_path, rule_text("key == 'a'"))
    assert load_rules([tmp_path], bundled=False).codes() == ("FTX901",)


def test_attacks_never_run_python(tmp_path: Path, canary: Path) -> None:
    """Every attack is refused at load time (one problem each) or evaluates as plain data."""
    document = read_config_text("a: 1\n__class__: 2\n", "flink-conf.yaml")[0]
    for i, condition in enumerate(attacks(canary)):
        folder = tmp_path / f"r{i}"
        write_rule(folder, rule_text(condition))
        try:
            ruleset = load_rules([folder], bundled=False)
        except RuleError as error:
            # Refused for its condition (not for some unrelated field of the test's rule).
            assert error.problems, condition
            assert all(": condition: " in p for p in error.problems), (condition, error.problems)
            assert all("\n" not in p.strip() for p in error.problems)
            continue
        # Loaded: it may only compare plain data (env['__class__'] is a missing key -> null).
        try:
            evaluate_document(ruleset, document, DEFAULT_VERSION, {})
        except ConditionError as error:
            assert "\n" not in error.one_line()
    assert not canary.exists()


def test_only_env_index_style_attack_loads_and_it_reads_data(tmp_path: Path) -> None:
    # The one attack that is valid syntax reads a mapping key, not a Python attribute.
    names = {"env": {"__class__": "just data"}}
    assert evaluate(parse("env['__class__']"), names, FUNCTIONS) == "just data"
    assert evaluate(parse("env['x']"), {"env": {}}, FUNCTIONS) is None


def test_yaml_tags_cannot_build_python_objects(tmp_path: Path, canary: Path) -> None:
    for i, payload in enumerate([
        f'!!python/object/apply:os.system ["touch {canary}"]',
        f'!!python/object/new:subprocess.Popen [["touch", "{canary}"]]',
        "!!python/name:os.system",
        '!!python/module:os',
    ]):
        text = rule_text("true").replace('name: hostile-rule', f"name: {payload}")
        write_rule(tmp_path / f"t{i}", text)
        with pytest.raises(RuleError) as info:
            load_rules([tmp_path / f"t{i}"], bundled=False)
        assert any("invalid YAML" in p or "could not determine a constructor" in p
                   for p in info.value.problems)
    assert not canary.exists()


@pytest.mark.parametrize("condition", [
    "(" * 5000 + "1" + ")" * 5000,                    # deep nesting: parse depth bound
    "not " * 3000 + "true",
    "-" * 3000 + "1",
    "[" * 2000 + "]" * 2000,
    " + ".join(["1"] * 1500),                         # long chains deepen the tree too
    "9 ** 9 ** 9",                                    # huge exponent
    "2 ** 100000",
    "10 ** 64 ** 2",
    "(2 ** 64) ** 64",
    "1e308 * 10",
    "'a' * 1000000000",                               # string repetition
    "[1] * 1000000000",                               # list repetition
    "'x' + 'x'" * 300,
    "9" * 5000,                                       # over-long literal
    "x" * 100_000,                                    # over-long source
])
def test_resource_bombs_are_refused_when_loaded(tmp_path: Path, condition: str) -> None:
    write_rule(tmp_path, rule_text(condition))
    with pytest.raises(RuleError) as info:
        load_rules([tmp_path], bundled=False)
    assert info.value.problems and all(": condition: " in p for p in info.value.problems), info.value.problems
    assert len(info.value.one_line()) < 2000


def test_let_chains_cannot_double_data_without_bound(tmp_path: Path) -> None:
    """Each let may use the earlier ones: 30 doublings of a list or string would be 2**30 items."""
    lets = "\n".join([f"  l{i}: l{i - 1} + l{i - 1}" for i in range(1, 31)])
    strs = "\n".join([f"  s{i}: s{i - 1} + s{i - 1}" for i in range(1, 31)])
    text = textwrap.dedent("""\
        code: FTX902
        name: doubling
        severity: info
        scope: key
        versions: "*"
        let:
          l0: "[1, 2, 3, 4, 5, 6, 7, 8]"
          s0: "'abcdefgh'"
        """) + lets + "\n" + strs + "\n" + textwrap.dedent("""\
        condition: len(l30) > 0 or len(s30) > 0
        message: "{key}"
        why: Doubling.
        references: [https://example.org]
        examples:
          pass:
            - config: {a: "1"}
          fail:
            - config: {a: "2"}
        """)
    write_rule(tmp_path, text, "FTX902-doubling.yaml")
    try:
        ruleset = load_rules([tmp_path], bundled=False)
    except RuleError as error:  # refused at load time: also fine
        assert error.problems
        return
    document = read_config_text("a: 1\n", "flink-conf.yaml")[0]
    with pytest.raises(ConditionError) as info:
        evaluate_document(ruleset, document, DEFAULT_VERSION, {})
    message = info.value.one_line()
    assert "too long" in message or "budget" in message, message
    assert MAX_LIST_ITEMS <= 100_000 and MAX_STRING_CHARS <= 1_000_000


def test_self_and_forward_references_in_lets_are_refused(tmp_path: Path) -> None:
    write_rule(tmp_path, rule_text("first > 0", let="first + 1"))
    with pytest.raises(RuleError) as info:
        load_rules([tmp_path], bundled=False)
    assert any("unknown name 'first'" in p for p in info.value.problems)


def test_templates_cannot_reach_attributes_or_format_specs(tmp_path: Path) -> None:
    for i, message in enumerate(["{key.__class__}", "{key!r}", "{0}", "{key:>999999999}", "{key.__dict__}",
                                 "{__import__}", "{key:%s}"]):
        text = rule_text("true").replace('message: "{key} is odd"', f"message: {message!r}".replace("'", '"'))
        write_rule(tmp_path / f"m{i}", text)
        with pytest.raises(RuleError):
            load_rules([tmp_path / f"m{i}"], bundled=False)


def test_fix_templates_cannot_inject_config_lines(tmp_path: Path) -> None:
    """A user rule's 'safe' rename may not smuggle a second key into the config via a newline."""
    rules = tmp_path / "rules"
    write_rule(rules, textwrap.dedent("""\
        code: FTX903
        name: inject
        severity: warning
        scope: key
        versions: "*"
        condition: key == "state.backend"
        message: "{key}"
        why: Injection attempt.
        references: [https://example.org]
        fix:
          action: rename
          key: "{key}"
          new_key: "state.backend.type\\nrest.bind-address: 0.0.0.0\\nx"
          safe: true
        examples:
          pass:
            - config: {a: "1"}
          fail:
            - config: {state.backend: rocksdb}
        """), "FTX903-inject.yaml")
    conf = tmp_path / "flink-conf.yaml"
    original = b"state.backend: rocksdb\nparallelism.default: 2\n"
    conf.write_bytes(original)
    result = CliRunner().invoke(app, ["lint", "--fix", "--no-bundled-rules", "--rules", str(rules),
                                      "--format", "text", str(conf)])
    after = conf.read_bytes()
    assert b"rest.bind-address" not in after, after
    assert result.exit_code in (0, 1, 2), result.output
    if after != original:   # if anything was written, it is exactly one well-formed line per key
        assert read_config_text(after.decode(), str(conf))[0].get("rest.bind-address") is None


# --- the CLI a CI job runs on a pull request -----------------------------------------------


def test_rules_check_reports_hostile_files_as_problems_with_exit_1(tmp_path: Path, canary: Path) -> None:
    for i, condition in enumerate(attacks(canary)[:12]):
        write_rule(tmp_path, rule_text(condition).replace("FTX901", f"FTX{100 + i}").replace(
            "hostile-rule", f"hostile-rule-{i}"), f"FTX{100 + i}.yaml")
    result = CliRunner().invoke(app, ["rules", "check", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "problem" in result.output
    assert "Traceback" not in result.output
    assert not canary.exists()


def test_rules_check_on_an_unreadable_or_binary_rule_exits_cleanly(tmp_path: Path) -> None:
    (tmp_path / "FTX950.yaml").write_bytes(b"\x00\x01\xff binary")
    (tmp_path / "FTX951.yaml").write_bytes(b"\xff\xfe not utf-8")
    (tmp_path / "FTX952.yaml").write_text("code: [unclosed\n", encoding="utf-8")
    (tmp_path / "FTX953.yaml").write_text("a: &a [x]\nb: [*a, *a]\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["rules", "check", str(tmp_path)])
    assert result.exit_code in (1, 2), result.output
    assert "Traceback" not in result.output


def test_rules_check_in_a_real_process_prints_no_traceback(tmp_path: Path, canary: Path) -> None:
    write_rule(tmp_path, rule_text(f"__import__('os').system('touch {canary}')"))
    proc = subprocess.run([sys.executable, "-m", "flinktune", "rules", "check", str(tmp_path)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "starts with '_'" in proc.stdout
    assert not canary.exists()


def test_no_module_can_execute_text_or_construct_objects_from_yaml() -> None:
    """Static guard over flinktune/: no call of eval/exec/compile/__import__, no pickle/marshal, and
    every yaml.load names a safe loader (a cheap check that keeps a future edit honest)."""
    import ast

    root = Path(__file__).resolve().parents[2] / "flinktune"
    # Each exception says why no outside input can reach the call.
    allowed = {
        # The lint workers' results: bytes from a pipe this process made to its own fork, which no other
        # process reads or writes (flinktune/lint/workers.py).
        "lint/workers.py: pickle.loads()",
        "lint/workers.py: pickle.dumps()",
    }
    offenders = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            attribute = isinstance(func, ast.Attribute)
            name = func.id if isinstance(func, ast.Name) else func.attr if attribute else ""  # type: ignore[union-attr]
            owner = func.value.id if attribute and isinstance(func.value, ast.Name) else ""  # type: ignore[union-attr]
            where = f"{path.relative_to(root)}:{node.lineno}"
            if isinstance(func, ast.Name) and name in ("eval", "exec", "compile", "__import__"):
                offenders.append(f"{where}: {name}()")
            if owner in ("pickle", "marshal", "shelve") or (owner == "yaml" and name in (
                    "unsafe_load", "full_load", "unsafe_load_all", "full_load_all")):
                offenders.append(f"{where}: {owner}.{name}()")
            if owner == "yaml" and name in ("load", "load_all"):
                loader = next((k.value for k in node.keywords if k.arg == "Loader"), None)
                text = ast.unparse(loader) if loader is not None else ""
                if "Safe" not in text and text not in ("loader", "_SAFE_LOADER", "FlinkYamlLoader"):
                    offenders.append(f"{where}: yaml.{name}(Loader={text or 'missing'})")
    assert [o for o in offenders if o.split(":", 1)[0] + ":" + o.split(":", 2)[2] not in allowed] == []
    # The exceptions are still there (a stale one would let the next call of the same kind in unseen).
    assert {o.split(":", 1)[0] + ":" + o.split(":", 2)[2] for o in offenders} == allowed


def test_flinktune_error_family_is_what_loading_raises(tmp_path: Path) -> None:
    write_rule(tmp_path, rule_text("("))
    with pytest.raises(FlinktuneError):
        load_rules([tmp_path], bundled=False)
