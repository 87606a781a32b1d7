"""Which key-scope rules can fire for a config entry, worked out once per condition text: a first
test of the key (``key == "k"``, ``status(key) == ...``, ``deprecated(key)``), of the entry's raw text
(``"$" in raw``) or of the document alone lets the engine skip a rule for an entry, or a whole
document, without running it. Each skip is exact: where the test is false the condition is."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flinktune.rules.functions import FUNCTIONS, RuleContext
from flinktune.rules.lang import (
    Binary,
    BoolOp,
    Call,
    Comprehension,
    Condition,
    ListExpr,
    Literal,
    Name,
    Node,
    Unary,
)
from flinktune.rules.ruleset import Rule


def key_guard(condition: Condition) -> frozenset[str] | None:
    """The keys a key-scope condition can be true for, when it starts with ``key == "k"`` or
    ``key in ["k1", "k2"]`` (alone or as the first operand of ``and``): for any other key that
    first test is false, so the condition is, without touching anything else. None otherwise.
    ``key`` is always the entry's key here (let-names may not shadow bindings)."""
    root = condition.root
    first = root.operands[0] if isinstance(root, BoolOp) and root.op == "and" else root
    if not (isinstance(first, Binary) and first.op in ("==", "in") and isinstance(first.left, Name)
            and first.left.name == "key"):
        return None
    if first.op == "==":
        items: tuple[object, ...] = (first.right,)
    elif isinstance(first.right, ListExpr):
        items = first.right.items
    else:
        return None
    if not all(isinstance(item, Literal) and isinstance(item.value, str) for item in items):
        return None
    return frozenset(item.value for item in items)  # type: ignore[attr-defined]


# Functions whose value depends on their arguments and the target version only (the option catalog,
# plain text tests): a test built from them and ``key`` has one value per key and version.
KEY_PURE = frozenset({"status", "known", "canonical", "deprecated", "credential_key", "starts_with",
                       "ends_with"})


def key_form(node: Node) -> tuple[object, ...] | None:
    """A hashable form of ``node`` when its value depends on ``key`` and the version only, else None."""
    if isinstance(node, Name):
        return ("key",) if node.name == "key" else None
    if isinstance(node, Literal):
        return ("lit", type(node.value).__name__, node.value)
    if isinstance(node, ListExpr):
        items = [key_form(item) for item in node.items]
        return None if any(i is None for i in items) else ("list", *items)
    if isinstance(node, Unary) and node.op == "not":
        inner = key_form(node.operand)
        return None if inner is None else ("not", inner)
    if isinstance(node, Binary) and node.op in ("==", "!=", "in"):
        left, right = key_form(node.left), key_form(node.right)
        return None if left is None or right is None else (node.op, left, right)
    if isinstance(node, Call) and node.func in KEY_PURE:
        args = [key_form(arg) for arg in node.args]
        return None if any(a is None for a in args) else ("call", node.func, *args)
    return None


def raw_test(node: Node) -> Callable[[str | None], bool] | None:
    """``node`` as a plain function of the entry's raw text, when it is built from ``"lit" in raw``,
    ``"lit" not in raw``, ``not``, ``and`` and ``or`` only (``("$" in raw or "_" in raw)``): the
    evaluator's values for those forms (a null raw contains nothing). None for any other shape."""
    if isinstance(node, Binary) and node.op in ("in", "not in") and isinstance(node.left, Literal) \
            and isinstance(node.left.value, str) and isinstance(node.right, Name) \
            and node.right.name == "raw":
        text = node.left.value
        if node.op == "in":
            return lambda raw: raw is not None and text in raw
        return lambda raw: raw is None or text not in raw
    if isinstance(node, Unary) and node.op == "not":
        inner = raw_test(node.operand)
        return None if inner is None else (lambda raw: not inner(raw))
    if isinstance(node, BoolOp) and node.op in ("and", "or"):
        parts = [raw_test(operand) for operand in node.operands]
        if any(part is None for part in parts):
            return None
        tests = tuple(part for part in parts if part is not None)
        if node.op == "and":
            return lambda raw: all(test(raw) for test in tests)
        return lambda raw: any(test(raw) for test in tests)
    return None


def first_raw_test(condition: Condition) -> Callable[[str | None], bool] | None:
    """The first test of a key-scope condition (alone, or the first operand of ``and``) as a function of
    the entry's raw text (``raw_test``): where it is false the condition is, so the rule is skipped
    for that entry without a run."""
    root = condition.root
    first = root.operands[0] if isinstance(root, BoolOp) and root.op == "and" else root
    return raw_test(first)


RAW_PLANS: dict[str, Callable[[str | None], bool] | None] = {}


def raw_plan(condition: Condition) -> Callable[[str | None], bool] | None:
    """``first_raw_test`` worked out once per condition text."""
    if condition.source not in RAW_PLANS:
        RAW_PLANS[condition.source] = first_raw_test(condition)
    return RAW_PLANS[condition.source]


KeyTest = tuple[tuple[object, ...], Callable[[RuleContext, str], bool]]
KEY_PLANS: dict[str, tuple[frozenset[str] | None, KeyTest | None]] = {}


def key_plan(condition: Condition) -> tuple[frozenset[str] | None, KeyTest | None]:
    """(``key_guard``, ``key_test``) of a key-scope condition, worked out once per condition text
    (every file of a lint runs the same rules)."""
    found = KEY_PLANS.get(condition.source)
    if found is None:
        found = KEY_PLANS[condition.source] = (key_guard(condition), key_test(condition))
    return found


def key_test(condition: Condition) -> tuple[tuple[object, ...], Callable[[RuleContext, str], bool]] | None:
    """The first test of a key-scope condition (alone, or the first operand of ``and``) when it
    depends on the key and the version only, compiled to a plain function of (context, key): where it
    is false (or null) the condition is false without anything else being evaluated, so the rule can be
    skipped for that key. None when the test has another shape (the rule then always runs)."""
    root = condition.root
    first = root.operands[0] if isinstance(root, BoolOp) and root.op == "and" else root
    form = key_form(first)
    if form is None or not mentions_key(form):
        return None
    test = compile_key_test(form)
    return None if test is None else (form, test)


# Bindings that change from one entry of a document to the next (key scope).
PER_ENTRY = frozenset({"key", "value", "raw", "line"})


def entry_free(node: object, lets: Mapping[str, Condition], seen: set[str]) -> bool:
    """``node`` reads no per-entry binding, directly or through the lets it uses: its value is the same for
    every entry of one document."""
    if isinstance(node, Name):
        if node.name in PER_ENTRY:
            return False
        if node.name in lets and node.name not in seen:
            seen.add(node.name)
            return entry_free(lets[node.name].root, lets, seen)
        return True
    if isinstance(node, Comprehension):
        return all(entry_free(part, lets, seen)
                   for part in (node.iterable, node.element, node.condition) if part is not None)
    for name in getattr(node, "__slots__", ()):
        if name == "pos":
            continue
        part = getattr(node, name, None)
        parts = part if isinstance(part, tuple) else (part,)
        if not all(entry_free(p, lets, seen) for p in parts if isinstance(p, Node)):
            return False
    return True


def document_test(rule: Rule) -> Condition | None:
    """The first test of a key-scope condition (alone, or the first operand of ``and``) when it reads no
    per-entry binding (``flat and ...`` with flat: doc.format == ...): it has one value per document, so
    where it is false the rule is skipped for every entry. None otherwise."""
    root = rule.condition.root
    first = root.operands[0] if isinstance(root, BoolOp) and root.op == "and" else root
    if not entry_free(first, rule.let_map, set()):
        return None
    return Condition(rule.condition.source, first)


def whole_document_test(rule: Rule) -> Condition | None:
    """The part of a key-scope rule's condition that does not depend on the key (false: the rule
    cannot fire anywhere in this document), worked out once per rule (a cache beside the frozen value)."""
    if "_document_test" not in rule.__dict__:
        rule.__dict__["_document_test"] = document_test(rule)
    return rule.__dict__["_document_test"]  # type: ignore[no-any-return]


def mentions_key(form: object) -> bool:
    return form == ("key",) or (isinstance(form, tuple) and any(mentions_key(part) for part in form))


def compile_key_test(form: tuple[object, ...]) -> Callable[[RuleContext, str], bool] | None:
    """``status(key) == "x"``, ``canonical(key) in [...]``, ``deprecated(key)``, ``known(key)``,
    ``credential_key(key)``, ``starts_with(key, "p")`` as Python: the same function implementations
    the evaluator calls, so the same values."""
    kind = form[0]
    if kind == "call" and form[2:] == (("key",),) and form[1] in ("deprecated", "known", "credential_key"):
        impl = FUNCTIONS[str(form[1])].impl
        return lambda ctx, key: impl(ctx, key) is True
    if kind == "call" and form[1] in ("starts_with", "ends_with") and form[2] == ("key",) \
            and isinstance(form[3], tuple) and form[3][:2] == ("lit", "str"):
        affix = str(form[3][2])
        if form[1] == "starts_with":
            return lambda _ctx, key: key.startswith(affix)
        return lambda _ctx, key: key.endswith(affix)
    if kind in ("==", "in") and isinstance(form[1], tuple) and form[1][0] == "call" \
            and form[1][1] in ("status", "canonical") and form[1][2:] == (("key",),):
        impl = FUNCTIONS[str(form[1][1])].impl
        right = form[2]
        if not isinstance(right, tuple):
            return None
        if kind == "==" and right[:2] == ("lit", "str"):
            wanted = frozenset((right[2],))
        elif kind == "in" and right[0] == "list" and all(
                isinstance(item, tuple) and item[:2] == ("lit", "str") for item in right[1:]):
            wanted = frozenset(item[2] for item in right[1:])  # type: ignore[index]
        else:
            return None
        return lambda ctx, key: impl(ctx, key) in wanted
    return None
