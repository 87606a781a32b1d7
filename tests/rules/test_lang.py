"""The closed condition language: parsing, evaluation, and its defences against hostile rule text."""

from __future__ import annotations

import pytest

from flinktune.errors import ConditionError
from flinktune.rules.functions import FUNCTIONS
from flinktune.rules.lang import MAX_DEPTH, Budget, Condition, check_names, evaluate, parse, tokenize


def run(text: str, **names: object) -> object:
    return evaluate(parse(text), names, FUNCTIONS, None)


@pytest.mark.parametrize(("text", "expected"), [
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("7 // 2", 3),
    ("7 % 4", 3),
    ("7 / 2", 3.5),
    ("2 ** 10", 1024),
    ("-3 + 1", -2),
    ("32kb", 32768),
    ("64mb == 64 * 1024 * 1024", True),
    ("1gb > 512mb", True),
    ("100ms", 100),
    ("1s == 1000", True),
    ("1min == 60s", True),
    ("1.5s", 1500),
    ("'a' + \"b\"", "ab"),
    ("'it\\'s'", "it's"),
    ("1 < 2 and 2 < 3", True),
    ("1 > 2 or not false", True),
    ("2 in [1, 2, 3]", True),
    ("4 not in [1, 2, 3]", True),
    ("'mem' in 'taskmanager.memory'", True),
    ("[1, 2][1]", 2),
    ("[1, 2][5]", None),
    ("null + 1", None),
    ("null > 1", False),
    ("null == null", True),
    ("1 / 0", None),
    ("true == 1", False),
    ("1 == 1.0", True),
    ("if(1 > 2, 'a', 'b')", "b"),
    ("coalesce(null, null, 3)", 3),
    ("min(3, null, 1)", 1),
    ("max([4, 9, 2])", 9),
    ("is_power_of_two(32768)", True),
    ("is_power_of_two(3000)", False),
    ("memory('1536m')", 1536 * 1024 * 1024),
    ("memory('1.5g')", None),
    ("duration('1 min')", 60_000),
    ("starts_with('-1', '-')", True),
    ("len('abc')", 3),
    ("ceil(2.1)", 3),
])
def test_evaluates(text: str, expected: object) -> None:
    assert run(text) == expected


def test_names_and_fields() -> None:
    env = {"parallelism": 4, "nested": {"x-y": 1}}
    assert run("env.parallelism * 2", env=env) == 8
    assert run("env.missing == null", env=env) is True
    assert run("env.nested['x-y']", env=env) == 1
    assert run("issue.kind in ['duplicate-key']", issue={"kind": "duplicate-key"}) is True


def test_if_is_lazy() -> None:
    # The untaken branch would fail ('-' on a string); if() must not evaluate it.
    assert run("if(true, 1, -'x')") == 1


def test_and_or_short_circuit() -> None:
    assert run("false and (-'x' > 1)") is False
    assert run("true or (-'x' > 1)") is True


@pytest.mark.parametrize("text", [
    "'a' + 1",
    "'a' < 1",
    "-'a'",
    "1 and 2",
    "not 3",
    "(1).x",
    "2 ** 65",
    "2 ** -1",
    "(2 ** 33) ** 2",
    "999999999999999999999999 * 999999999999999999999999",
    "len(3)",
])
def test_type_errors_raise_condition_error(text: str) -> None:
    with pytest.raises(ConditionError):
        run(text)


@pytest.mark.parametrize(("text", "fragment"), [
    ("__import__('os')", "starts with '_'"),
    ("env.__class__", "starts with '_'"),
    ("_secret", "starts with '_'"),
    ("lambda: 1", "unexpected character ':'"),
    ("[x for 1 in env]", "expected a name after 'for'"),
    ("[x for x env]", "expected 'in'"),
    ("open('/etc/passwd').read()", "unexpected"),
    ("1 if true else 2", "unexpected 'if'"),
    ("a = 1", "unexpected character '='"),
    ("x; y", "unexpected character ';'"),
    ("1 < 2 < 3", "chained comparisons"),
    ("'unterminated", "unterminated string"),
    ("12parsecs", "unknown unit"),
    ("", "empty"),
    ("(" * (MAX_DEPTH + 5) + "1" + ")" * (MAX_DEPTH + 5), "nests deeper"),
    ("-" * 200 + "1", "nests deeper"),
    ("not " * 200 + "true", "nests deeper"),
    ("1" * 40, "too long"),
    ("x" * 5000, "characters long"),
    ("²", "unexpected character"),
    ("1²", "unexpected character"),
    ("naïve", "unexpected character"),
    ("a.b.c ** 2 ** 3 `", "unexpected character '`'"),
])
def test_hostile_or_broken_text_is_rejected_at_parse_time(text: str, fragment: str) -> None:
    with pytest.raises(ConditionError) as info:
        parse(text)
    assert fragment in info.value.message


def test_parse_error_names_the_column() -> None:
    with pytest.raises(ConditionError) as info:
        parse("config('x') > > 3")
    assert "column 15" in info.value.message


def test_method_call_syntax_is_not_a_call() -> None:
    # Calls take a bare function name only: ``x.y()`` cannot be written, so no method is reachable.
    with pytest.raises(ConditionError):
        parse("env.keys()")


def test_unknown_names_and_functions_are_reported_before_evaluation() -> None:
    condition = parse("foo > 1 and eval('1') and min()")
    problems = check_names(condition, {"env"}, FUNCTIONS)
    assert any("unknown name 'foo'" in p for p in problems)
    assert any("unknown function 'eval'" in p for p in problems)
    assert any("'min' takes 1 to 16" in p for p in problems)


def test_step_budget_bounds_evaluation() -> None:
    # A long (but shallow) chain of additions: fine with the default budget, refused with a tiny one.
    text = " + ".join(["1"] * 100)
    assert run(text) == 100
    with pytest.raises(ConditionError, match="step budget"):
        evaluate(parse(text), {}, FUNCTIONS, None, Budget(50))


def test_long_operator_chains_are_bounded() -> None:
    with pytest.raises(ConditionError, match="nests deeper"):
        parse(" + ".join(["1"] * 500))


def test_bound_data_cannot_expose_python_objects() -> None:
    class Secret:
        def __str__(self) -> str:
            return "just text"

    # Bindings are converted to plain data first: a foreign object becomes its text.
    from flinktune.rules.lang import to_value

    assert run("thing == 'just text'", thing=to_value(Secret())) is True
    # Field access works only on mappings, never on strings or other values.
    with pytest.raises(ConditionError):
        run("thing.upper", thing="abc")


def test_ast_is_frozen() -> None:
    condition = parse("1 + 2")
    assert isinstance(condition, Condition)
    with pytest.raises(AttributeError):
        condition.root.op = "-"  # type: ignore[misc]


def test_tokens_carry_positions() -> None:
    tokens = tokenize("a  >= 32kb")
    assert [(t.kind, t.pos) for t in tokens] == [("NAME", 1), ("OP", 4), ("NUM", 7), ("END", 11)]


def test_list_comprehensions_filter_and_map_with_the_name_bound_inside_only() -> None:
    # The language's one iteration construct: bounded by the step budget like everything else.
    items = ({"role": "jobmanager", "mb": 1024}, {"role": "taskmanager", "mb": 2048},
             {"role": "taskmanager", "mb": 512})
    names = {"ps": items}
    assert evaluate(parse('[p.mb for p in ps if p.role == "taskmanager"]'), names, {}) == (2048, 512)
    assert evaluate(parse("[p.mb * 2 for p in ps]"), names, {}) == (2048, 4096, 1024)
    assert evaluate(parse("[p for p in null]"), names, {}) == ()
    # the bound name does not leak out of the brackets
    with pytest.raises(ConditionError, match="unknown name 'p'"):
        evaluate(parse("[1 for p in ps] == [] or p == 1"), names, {})
    with pytest.raises(ConditionError, match="needs a list"):
        evaluate(parse("[x for x in 3]"), names, {})
    with pytest.raises(ConditionError, match="budget"):
        evaluate(parse("[[y for y in xs] for x in xs]"), {"xs": tuple(range(500))}, {})
