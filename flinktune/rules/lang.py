"""The closed condition language of rule files: tokenizer, parser, frozen AST, evaluator.

Rule files are untrusted input (users add their own with ``--rules DIR``), so this language is
deliberately small and never touches Python's own machinery: no ``eval``, no ``ast.parse``, no
attribute access on Python objects. Values are plain data only: null, booleans, numbers,
strings, lists and string-keyed mappings. Every evaluation runs under a step budget, parsing
bounds nesting depth and input length, and arithmetic refuses numbers beyond a fixed magnitude.

Grammar (lowest precedence first)::

    expr     := or
    or       := and ("or" and)*
    and      := not ("and" not)*
    not      := "not" not | compare
    compare  := sum (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not" "in") sum)?
    sum      := product (("+" | "-") product)*
    product  := unary (("*" | "/" | "//" | "%") unary)*
    unary    := "-" unary | power
    power    := postfix ("**" unary)?
    postfix  := primary ("." NAME | "[" expr "]")*
    primary  := NUMBER | NUMBER UNIT | STRING | "true" | "false" | "null" | NAME
              | NAME "(" [expr ("," expr)*] ")" | "(" expr ")" | "[" [expr ("," expr)*] "]"
              | "[" expr "for" NAME "in" expr ["if" expr] "]"      (a list comprehension)

Units on number literals: memory ``b kb mb gb tb`` (powers of 1024, value in bytes) and
duration ``ns us ms s min h d`` (value in milliseconds), so ``32kb == 32768`` and
``1s == 1000``. ``null`` propagates through arithmetic; ordering comparisons with ``null`` are
false; division by zero gives ``null``.

Over 500 lines: one closed language (tokenizer, parser, AST and evaluator share its grammar and
error positions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from flinktune.errors import ConditionError
from flinktune.record import Record, set_field, store
from flinktune.units import DURATION_UNIT_NANOS, MEMORY_UNIT_BYTES

# Bounds for untrusted rule text.
MAX_SOURCE_CHARS = 4000
MAX_TOKENS = 2000
MAX_DEPTH = 40
MAX_TREE_DEPTH = 120          # left-associative chains (a + b + c ...) deepen the tree too
MAX_NUMBER_DIGITS = 30
MAX_STRING_CHARS = 10_000
MAX_INT_ABS = 2**80
MAX_FLOAT_ABS = 1e30
MAX_EXPONENT = 64
MAX_LIST_ITEMS = 10_000
DEFAULT_STEP_BUDGET = 20_000

KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false", "null"})

# The rule language's units are flinktune's short unit names (units.py). Durations are carried in
# milliseconds, the unit Flink assumes for a bare number.
MEMORY_UNITS: dict[str, int] = MEMORY_UNIT_BYTES
DURATION_UNITS_MS: dict[str, float] = {name: nanos / 1e6 for name, nanos in DURATION_UNIT_NANOS.items()}

Value = None | bool | int | float | str | tuple[object, ...] | Mapping[str, object]


# ---------------------------------------------------------------------------------------------
# Tokens


# Tokens and AST nodes are slotted records rather than dataclasses: every lint defines them at
# start-up, where dataclass generation cost more than the parsing they serve (and slots make
# evaluation's attribute reads faster).
_Frozen = Record
_set = set_field


class Token(_Frozen):
    __slots__ = ("kind", "pos", "text", "value")
    _fields = ("kind", "text", "value", "pos")

    def __init__(self, kind: str, text: str, value: object, pos: int) -> None:
        _set(self, "kind", kind)      # NUM, STR, NAME, OP, END
        _set(self, "text", text)
        _set(self, "value", value)
        _set(self, "pos", pos)        # 1-based column in the condition text


# ASCII only: str.isdigit() accepts '²' and friends, which int() then refuses.
_DIGITS = frozenset("0123456789")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NAME_CHARS = _DIGITS | _LETTERS | {"_"}

_OPERATORS = ("**", "//", "==", "!=", "<=", ">=", "(", ")", "[", "]", ",", ".", "+", "-", "*", "/", "%",
              "<", ">")


def _error(message: str, pos: int, source: str) -> ConditionError:
    snippet = source if len(source) <= 80 else source[:77] + "..."
    return ConditionError(f"{message} at column {pos} in condition '{snippet}'")


def tokenize(source: str) -> list[Token]:
    if not isinstance(source, str):
        raise ConditionError("a condition must be a string")
    if len(source) > MAX_SOURCE_CHARS:
        raise ConditionError(f"condition is {len(source)} characters long (at most {MAX_SOURCE_CHARS})")
    tokens: list[Token] = []
    i, n = 0, len(source)
    while i < n:
        if len(tokens) > MAX_TOKENS:
            raise _error(f"too many tokens (at most {MAX_TOKENS})", i + 1, source)
        ch = source[i]
        if ch in " \t\r\n":
            i += 1
            continue
        start = i
        if ch in _DIGITS or (ch == "." and i + 1 < n and source[i + 1] in _DIGITS):
            while i < n and source[i] in _DIGITS:
                i += 1
            is_float = False
            if i < n and source[i] == "." and i + 1 < n and source[i + 1] in _DIGITS:
                is_float = True
                i += 1
                while i < n and source[i] in _DIGITS:
                    i += 1
            digits = source[start:i]
            if len(digits) > MAX_NUMBER_DIGITS:
                raise _error("number literal too long", start + 1, source)
            unit_start = i
            while i < n and source[i] in _LETTERS:
                i += 1
            unit = source[unit_start:i].lower()
            number: int | float = float(digits) if is_float else int(digits)
            value: object
            if not unit:
                value = number
            elif unit in MEMORY_UNITS:
                value = int(number * MEMORY_UNITS[unit])
            elif unit in DURATION_UNITS_MS:
                scaled = number * DURATION_UNITS_MS[unit]
                value = int(scaled) if float(scaled).is_integer() else float(scaled)
            else:
                raise _error(f"unknown unit '{source[unit_start:i]}' (memory: b kb mb gb tb; "
                             "duration: ns us ms s min h d)", unit_start + 1, source)
            tokens.append(Token("NUM", source[start:i], value, start + 1))
            continue
        if ch in _LETTERS or ch == "_":
            while i < n and source[i] in _NAME_CHARS:
                i += 1
            word = source[start:i]
            if word.startswith("_"):
                raise _error(f"name '{word}' starts with '_' (not allowed)", start + 1, source)
            tokens.append(Token("NAME", word, word, start + 1))
            continue
        if ch in "'\"":
            quote = ch
            i += 1
            chars: list[str] = []
            while True:
                if i >= n:
                    raise _error("unterminated string", start + 1, source)
                c = source[i]
                if c == quote:
                    i += 1
                    break
                if c == "\\":
                    if i + 1 >= n:
                        raise _error("unterminated string", start + 1, source)
                    esc = source[i + 1]
                    mapped = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}.get(esc)
                    if mapped is None:
                        raise _error(f"unknown escape '\\{esc}' in string", i + 1, source)
                    chars.append(mapped)
                    i += 2
                    continue
                chars.append(c)
                i += 1
            tokens.append(Token("STR", source[start:i], "".join(chars), start + 1))
            continue
        for op in _OPERATORS:
            if source.startswith(op, i):
                tokens.append(Token("OP", op, op, start + 1))
                i += len(op)
                break
        else:
            raise _error(f"unexpected character '{ch}'", start + 1, source)
    tokens.append(Token("END", "", None, n + 1))
    return tokens


# ---------------------------------------------------------------------------------------------
# AST (frozen)


class Node(_Frozen):
    __slots__ = ("pos",)
    _fields = ("pos",)

    def __init__(self, pos: int) -> None:
        _set(self, "pos", pos)


class Literal(Node):
    __slots__ = ("value",)
    _fields = ("pos", "value")

    def __init__(self, pos: int, value: object) -> None:
        _set(self, "pos", pos)
        _set(self, "value", value)


class Name(Node):
    __slots__ = ("name",)
    _fields = ("pos", "name")

    def __init__(self, pos: int, name: str) -> None:
        _set(self, "pos", pos)
        _set(self, "name", name)


class Attr(Node):
    __slots__ = ("name", "target")
    _fields = ("pos", "target", "name")

    def __init__(self, pos: int, target: Node, name: str) -> None:
        _set(self, "pos", pos)
        _set(self, "target", target)
        _set(self, "name", name)


class Index(Node):
    __slots__ = ("index", "target")
    _fields = ("pos", "target", "index")

    def __init__(self, pos: int, target: Node, index: Node) -> None:
        _set(self, "pos", pos)
        _set(self, "target", target)
        _set(self, "index", index)


class ListExpr(Node):
    __slots__ = ("items",)
    _fields = ("pos", "items")

    def __init__(self, pos: int, items: tuple[Node, ...]) -> None:
        _set(self, "pos", pos)
        _set(self, "items", items)


class Unary(Node):
    __slots__ = ("op", "operand")
    _fields = ("pos", "op", "operand")

    def __init__(self, pos: int, op: str, operand: Node) -> None:
        _set(self, "pos", pos)
        _set(self, "op", op)              # "-" or "not"
        _set(self, "operand", operand)


class Binary(Node):
    __slots__ = ("left", "op", "right")
    _fields = ("pos", "op", "left", "right")

    def __init__(self, pos: int, op: str, left: Node, right: Node) -> None:
        _set(self, "pos", pos)
        _set(self, "op", op)
        _set(self, "left", left)
        _set(self, "right", right)


class BoolOp(Node):
    __slots__ = ("op", "operands")
    _fields = ("pos", "op", "operands")

    def __init__(self, pos: int, op: str, operands: tuple[Node, ...]) -> None:
        _set(self, "pos", pos)
        _set(self, "op", op)              # "and" / "or"
        _set(self, "operands", operands)


class Comprehension(Node):
    """``[element for name in iterable if condition]``: a list built item by item; ``name`` is bound
    inside the element and the condition only."""

    __slots__ = ("condition", "element", "iterable", "var")
    _fields = ("pos", "element", "var", "iterable", "condition")

    def __init__(self, pos: int, element: Node, var: str, iterable: Node, condition: Node | None) -> None:
        _set(self, "pos", pos)
        _set(self, "element", element)
        _set(self, "var", var)
        _set(self, "iterable", iterable)
        _set(self, "condition", condition)


class Call(Node):
    __slots__ = ("args", "func")
    _fields = ("pos", "func", "args")

    def __init__(self, pos: int, func: str, args: tuple[Node, ...]) -> None:
        _set(self, "pos", pos)
        _set(self, "func", func)
        _set(self, "args", args)


class Condition(_Frozen):
    """A parsed condition: the source text and its AST.

    ``Condition.deferred(source)`` parses on first use of ``root``: the rule loader builds rules
    that way from rule files whose exact text compiled cleanly before (its validated cache says
    so), so a lint parses only the conditions it evaluates.
    """

    __slots__ = ("_root", "source")
    _fields = ("source", "root")

    def __init__(self, source: str, root: Node) -> None:
        _set(self, "source", source)
        _set(self, "_root", root)

    @classmethod
    def deferred(cls, source: str) -> Condition:
        condition = cls.__new__(cls)
        _set(condition, "source", source)
        _set(condition, "_root", None)
        return condition

    @property
    def root(self) -> Node:
        root = self._root
        if root is None:
            encoded = _PARSED.get(self.source)
            root = parse(self.source).root if encoded is None else decode_tree(encoded)
            _set(self, "_root", root)
        return root

    def names(self) -> frozenset[str]:
        """Free names the expression reads (not function names)."""
        return frozenset(_walk_names(self.root))

    def functions(self) -> frozenset[str]:
        return frozenset(_walk_calls(self.root))


# ---------------------------------------------------------------------------------------------
# Trees as plain tuples: the bundled rules' expressions ship parsed (flinktune/data/bundled_rules_trees.json,
# tools/rules/build_bundled_data.py): building all 433 trees from tuples takes about 4.5 ms where
# parsing their text takes 34 ms, which a lint of many files paid as it met each rule.

# Per node type: its tag, and how each field after ``pos`` is held: "n" a node, "t" a tuple of
# nodes, "o" a node or None, "v" a plain value.
_SHAPES: dict[type, tuple[int, str]] = {}
_BY_TAG: dict[int, tuple[type, str]] = {}
# source text -> encoded tree, for the expressions whose parsed form shipped (see use_parsed_trees).
_PARSED: dict[str, tuple[object, ...]] = {}


def _register_shapes() -> None:
    shapes = ((Literal, "v"), (Name, "v"), (Attr, "nv"), (Index, "nn"), (ListExpr, "t"), (Unary, "vn"),
              (Binary, "vnn"), (BoolOp, "vt"), (Comprehension, "nvno"), (Call, "vt"))
    for tag, (cls, shape) in enumerate(shapes):
        _SHAPES[cls] = (tag, shape)
        _BY_TAG[tag] = (cls, shape)


def encode_tree(node: Node) -> tuple[object, ...]:
    """``node`` as nested tuples of plain values (JSON-able); ``decode_tree`` inverts it (from tuples
    or JSON's lists)."""
    tag, shape = _SHAPES[type(node)]
    out: list[object] = [tag, node.pos]
    for kind, name in zip(shape, node._fields[1:], strict=True):
        value = getattr(node, name)
        if kind == "n" or (kind == "o" and value is not None):
            value = encode_tree(value)
        elif kind == "t":
            value = tuple(encode_tree(item) for item in value)
        out.append(value)
    return tuple(out)


def decode_tree(encoded: tuple[object, ...]) -> Node:
    cls, shape = _BY_TAG[encoded[0]]  # type: ignore[index]
    args: list[object] = [encoded[1]]
    for kind, value in zip(shape, encoded[2:], strict=True):
        if kind == "n" or (kind == "o" and value is not None):
            value = decode_tree(value)  # type: ignore[arg-type]
        elif kind == "t":
            value = tuple(decode_tree(item) for item in value)  # type: ignore[union-attr]
        args.append(value)
    return cls(*args)  # type: ignore[no-any-return]


def use_parsed_trees(trees: Mapping[str, tuple[object, ...]]) -> None:
    """Take these expressions' trees (source text -> ``encode_tree``) instead of parsing them."""
    _PARSED.update(trees)


_register_shapes()


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Attr):
        return (node.target,)
    if isinstance(node, Index):
        return (node.target, node.index)
    if isinstance(node, ListExpr):
        return node.items
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, BoolOp):
        return node.operands
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Comprehension):
        return (node.element, node.iterable) + ((node.condition,) if node.condition is not None else ())
    return ()


def _walk_names(node: Node) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Name):
            found.append(current.name)
        stack.extend(_children(current))
    return found


def _walk_calls(node: Node) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Call):
            found.append(current.func)
        stack.extend(_children(current))
    return found


# ---------------------------------------------------------------------------------------------
# Parser

_COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
_SUM_OPS = frozenset({"+", "-"})
_PRODUCT_OPS = frozenset({"*", "/", "//", "%"})


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.index = 0
        self.depth = 0

    def peek(self, offset: int = 0) -> Token:
        # ``index`` never passes the END token (``next`` stops there), so offset 0 needs no clamp.
        if not offset:
            return self.tokens[self.index]
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def next(self) -> Token:
        token = self.tokens[self.index]
        if token.kind != "END":
            self.index += 1
        return token

    def error(self, message: str, token: Token | None = None) -> ConditionError:
        token = token or self.peek()
        return _error(message, token.pos, self.source)

    def at_op(self, op: str) -> bool:
        token = self.tokens[self.index]
        return token.kind == "OP" and token.text == op

    def at_ops(self, ops: frozenset[str]) -> bool:
        token = self.tokens[self.index]
        return token.kind == "OP" and token.text in ops

    def at_word(self, word: str) -> bool:
        token = self.tokens[self.index]
        return token.kind == "NAME" and token.text == word

    def expect_op(self, op: str) -> Token:
        if not self.at_op(op):
            found = self.peek().text or "end of condition"
            raise self.error(f"expected '{op}' but found '{found}'")
        return self.next()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"condition nests deeper than {MAX_DEPTH} levels")

    def leave(self) -> None:
        self.depth -= 1

    def parse(self) -> Node:
        if self.peek().kind == "END":
            raise self.error("condition is empty")
        node = self.parse_or()
        if self.peek().kind != "END":
            raise self.error(f"unexpected '{self.peek().text}'")
        return node

    def parse_or(self) -> Node:
        self.enter()
        first = self.parse_and()
        operands = [first]
        while self.at_word("or"):
            self.next()
            operands.append(self.parse_and())
        self.leave()
        return first if len(operands) == 1 else BoolOp(first.pos, "or", tuple(operands))

    def parse_and(self) -> Node:
        first = self.parse_not()
        operands = [first]
        while self.at_word("and"):
            self.next()
            operands.append(self.parse_not())
        return first if len(operands) == 1 else BoolOp(first.pos, "and", tuple(operands))

    def parse_not(self) -> Node:
        if self.at_word("not"):
            token = self.next()
            self.enter()
            operand = self.parse_not()
            self.leave()
            return Unary(token.pos, "not", operand)
        return self.parse_compare()

    def parse_compare(self) -> Node:
        left = self.parse_sum()
        token = self.peek()
        op: str | None = None
        if token.kind == "OP" and token.text in _COMPARE_OPS:
            op = token.text
            self.next()
        elif self.at_word("in"):
            op = "in"
            self.next()
        elif self.at_word("not") and self.peek(1).kind == "NAME" and self.peek(1).text == "in":
            op = "not in"
            self.next()
            self.next()
        if op is None:
            return left
        right = self.parse_sum()
        after = self.peek()
        if (after.kind == "OP" and after.text in _COMPARE_OPS) or self.at_word("in"):
            raise self.error("chained comparisons are not supported; join them with 'and'", after)
        return Binary(token.pos, op, left, right)

    def parse_sum(self) -> Node:
        node = self.parse_product()
        while self.at_ops(_SUM_OPS):
            token = self.next()
            node = Binary(token.pos, token.text, node, self.parse_product())
        return node

    def parse_product(self) -> Node:
        node = self.parse_unary()
        while self.at_ops(_PRODUCT_OPS):
            token = self.next()
            node = Binary(token.pos, token.text, node, self.parse_unary())
        return node

    def parse_unary(self) -> Node:
        if self.at_op("-"):
            token = self.next()
            self.enter()
            operand = self.parse_unary()
            self.leave()
            return Unary(token.pos, "-", operand)
        return self.parse_power()

    def parse_power(self) -> Node:
        base = self.parse_postfix()
        if self.at_op("**"):
            token = self.next()
            self.enter()
            exponent = self.parse_unary()
            self.leave()
            return Binary(token.pos, "**", base, exponent)
        return base

    def parse_postfix(self) -> Node:
        node = self.parse_primary()
        while True:
            if self.at_op("."):
                self.next()
                token = self.peek()
                if token.kind != "NAME" or token.text in KEYWORDS:
                    raise self.error("expected a field name after '.'")
                self.next()
                node = Attr(token.pos, node, token.text)
            elif self.at_op("["):
                token = self.next()
                self.enter()
                index = self.parse_or()
                self.leave()
                self.expect_op("]")
                node = Index(token.pos, node, index)
            else:
                return node

    def parse_args(self, closing: str) -> tuple[Node, ...]:
        items: list[Node] = []
        if self.at_op(closing):
            self.next()
            return ()
        while True:
            self.enter()
            items.append(self.parse_or())
            self.leave()
            if self.at_op(","):
                self.next()
                continue
            if self.at_op(closing):
                self.next()
                return tuple(items)
            found = self.peek().text or "end of condition"
            raise self.error(f"expected ',' or '{closing}' but found '{found}'")

    def parse_primary(self) -> Node:
        token = self.peek()
        if token.kind == "NUM" or token.kind == "STR":
            self.next()
            return Literal(token.pos, token.value)
        if token.kind == "NAME":
            self.next()
            word = token.text
            if word == "true":
                return Literal(token.pos, True)
            if word == "false":
                return Literal(token.pos, False)
            if word == "null":
                return Literal(token.pos, None)
            if word in KEYWORDS:
                raise self.error(f"unexpected '{word}'", token)
            if self.at_op("("):
                self.next()
                return Call(token.pos, word, self.parse_args(")"))
            return Name(token.pos, word)
        if token.kind == "OP" and token.text == "(":
            self.next()
            self.enter()
            node = self.parse_or()
            self.leave()
            self.expect_op(")")
            return node
        if token.kind == "OP" and token.text == "[":
            self.next()
            if not self.at_op("]"):
                # "[x for x in xs if cond]": a comprehension, told apart by "for" after the first item.
                mark = self.index
                self.enter()
                first = self.parse_or()
                self.leave()
                if self.at_word("for"):
                    return self.parse_comprehension(token, first)
                self.index = mark
            return ListExpr(token.pos, self.parse_args("]"))
        if token.kind == "END":
            raise self.error("condition ends too early")
        raise self.error(f"unexpected '{token.text}'")


    def parse_comprehension(self, token: Token, element: Node) -> Node:
        self.next()   # for
        name = self.peek()
        if name.kind != "NAME" or name.text in KEYWORDS or name.text in ("for", "if"):
            raise self.error("expected a name after 'for'")
        self.next()
        if not self.at_word("in"):
            raise self.error("expected 'in' after the comprehension's name")
        self.next()
        self.enter()
        iterable = self.parse_or()
        condition = None
        if self.at_word("if"):
            # Here "if" can only be the filter: the iterable has ended (a filter may itself call if()).
            self.next()
            condition = self.parse_or()
        self.leave()
        self.expect_op("]")
        return Comprehension(token.pos, element, name.text, iterable, condition)


def _tree_depth(root: Node) -> int:
    deepest = 0
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in _children(node))
    return deepest


def parse(source: str) -> Condition:
    """Parse a condition; raises ConditionError naming the column on any problem."""
    root = _Parser(source).parse()
    if _tree_depth(root) > MAX_TREE_DEPTH:
        raise _error(f"condition nests deeper than {MAX_TREE_DEPTH} levels (split it with let-names)",
                     1, source)
    return Condition(source, root)


def _all_nodes(root: Node) -> list[Node]:
    found: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(_children(node))
    return found


def check_names(condition: Condition, names: set[str] | frozenset[str],
                functions: Mapping[str, Function]) -> list[str]:
    """Problems with names and calls (unknown names, unknown functions, wrong arity)."""
    problems: list[str] = []
    bound = {node.var for node in _all_nodes(condition.root) if isinstance(node, Comprehension)}
    names = set(names) | bound
    stack: list[Node] = [condition.root]
    while stack:
        node = stack.pop()
        if isinstance(node, Name) and node.name not in names:
            problems.append(f"unknown name '{node.name}' at column {node.pos}")
        elif isinstance(node, Call):
            spec = functions.get(node.func)
            if spec is None:
                problems.append(f"unknown function '{node.func}' at column {node.pos}")
            elif not spec.min_args <= len(node.args) <= spec.max_args:
                problems.append(f"function '{node.func}' takes {spec.arity_text()} argument(s), "
                                f"got {len(node.args)} at column {node.pos}")
        stack.extend(_children(node))
    return sorted(problems)


def check_constants(condition: Condition) -> list[str]:
    """Evaluate every constant sub-expression (no names, no calls) once, so that overflowing
    arithmetic, huge exponents and type errors in literals are reported when the rule is loaded."""
    problems: list[str] = []

    def visit(node: Node) -> bool:
        children = _children(node)
        flags = [visit(child) for child in children]
        constant = not isinstance(node, Name | Call) and all(flags)
        if not constant:
            for child, flag in zip(children, flags, strict=True):
                if flag and not isinstance(child, Literal):
                    _try(child)
        return constant

    def _try(node: Node) -> None:
        try:
            Evaluator({}, {}, None, condition.source, Budget(DEFAULT_STEP_BUDGET)).eval(node)
        except ConditionError as error:
            problems.append(error.message)

    if visit(condition.root) and not isinstance(condition.root, Literal):
        _try(condition.root)
    return problems


# ---------------------------------------------------------------------------------------------
# Values


class PlainMapping(dict):  # type: ignore[type-arg]
    """A mapping ``to_value`` made: plain all the way down, so converting it again returns it as is
    (a function's memoised result, read by many rules, is converted once)."""

    __slots__ = ()


class PlainList(tuple):  # type: ignore[type-arg]
    """A list ``to_value`` made (see PlainMapping)."""

    __slots__ = ()


def to_value(obj: object, *, depth: int = 0) -> Value:
    """Turn bound data into the language's plain values; anything else becomes its text."""
    kind = type(obj)
    if kind is PlainMapping or kind is PlainList or kind is str or obj is None:
        return obj  # type: ignore[return-value]
    if depth > 12:
        raise ConditionError("bound data nests too deeply")
    if isinstance(obj, bool | str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj
    if isinstance(obj, Mapping):
        return PlainMapping({str(k): to_value(v, depth=depth + 1) for k, v in obj.items()})
    if isinstance(obj, list | tuple | set | frozenset):
        items = list(obj)
        if len(items) > MAX_LIST_ITEMS:
            raise ConditionError(f"bound list has more than {MAX_LIST_ITEMS} items")
        return PlainList(to_value(v, depth=depth + 1) for v in items)
    # Enums, numpy scalars and the like: expose their plain form only.
    plain = getattr(obj, "value", None)
    if isinstance(plain, str | int | float | bool):
        return plain
    try:
        number = float(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(obj)
    return int(number) if number.is_integer() and abs(number) < MAX_INT_ABS else number


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, tuple):
        return "list"
    if isinstance(value, Mapping):
        return "mapping"
    return "value"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_number(value: int | float, node: Node, source: str) -> int | float:
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or abs(value) > MAX_FLOAT_ABS:
            raise _error("number out of range", node.pos, source)
        return value
    if abs(value) > MAX_INT_ABS:
        raise _error("number out of range", node.pos, source)
    return value


def truthy(value: object) -> bool:
    """Rules fire only on a real ``true``; numbers and strings are not silently truthy."""
    return value is True


def _equal(left: object, right: object) -> bool:
    kind = type(left)
    if kind is type(right) and (kind is str or kind is int or kind is float or left is None):
        return left == right                  # the common case, decided as below but sooner
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    if _is_number(left) and _is_number(right):
        return left == right
    if type_name(left) != type_name(right):
        return False
    return left == right


# ---------------------------------------------------------------------------------------------
# Evaluator


class Function(Record):
    """A named function rules may call. ``impl(context, *args)`` returns plain data."""

    __slots__ = _fields = ("name", "min_args", "max_args", "impl", "doc", "lazy")
    name: str
    min_args: int
    max_args: int
    impl: Callable[..., object]
    doc: str
    lazy: bool                # receives unevaluated thunks (for if/coalesce)

    def __init__(self, name: str, min_args: int, max_args: int, impl: Callable[..., object], doc: str = "",
                 lazy: bool = False) -> None:
        store(self, (name, min_args, max_args, impl, doc, lazy))

    def arity_text(self) -> str:
        if self.min_args == self.max_args:
            return str(self.min_args)
        return f"{self.min_args} to {self.max_args}"


_BUDGET_EXCEEDED = "condition exceeded its evaluation step budget"


class _Scope(Mapping[str, object]):
    """The names of an enclosing evaluation plus one name a comprehension binds."""

    def __init__(self, parent: Mapping[str, object], name: str, value: object) -> None:
        self._parent = parent
        self._name = name
        self._value = value

    def __getitem__(self, name: str) -> object:
        if name == self._name:
            return self._value
        return self._parent[name]

    def __contains__(self, name: object) -> bool:
        return name == self._name or name in self._parent

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter([self._name, *(n for n in self._parent if n != self._name)])

    def __len__(self) -> int:
        return len(set(self._parent) | {self._name})


class Budget:
    """Counts evaluation steps so a condition cannot run without bound."""

    def __init__(self, steps: int = DEFAULT_STEP_BUDGET) -> None:
        self.remaining = steps

    def spend(self, node: Node, source: str) -> None:
        self.remaining -= 1
        if self.remaining < 0:
            raise _error(_BUDGET_EXCEEDED, node.pos, source)


class Evaluator:
    def __init__(self, names: Mapping[str, object], functions: Mapping[str, Function], context: object,
                 source: str, budget: Budget | None = None) -> None:
        self.names = names
        self.functions = functions
        self.context = context
        self.source = source
        self.budget = budget or Budget()

    def fail(self, message: str, node: Node) -> ConditionError:
        return _error(message, node.pos, self.source)

    def eval(self, node: Node) -> Value:
        # The hot path of every lint: the common node types by exact type first (the step is
        # spent the same way as Budget.spend), everything else through the general chain below.
        budget = self.budget
        budget.remaining -= 1
        if budget.remaining < 0:
            raise _error(_BUDGET_EXCEEDED, node.pos, self.source)
        kind = type(node)
        if kind is Literal:
            return node.value  # type: ignore[attr-defined,return-value]
        if kind is Name:
            names = self.names
            name = node.name  # type: ignore[attr-defined]
            if name not in names:
                raise self.fail(f"unknown name '{name}'", node)
            return names[name]  # type: ignore[return-value]
        if kind is Binary:
            return self._binary(node)  # type: ignore[arg-type]
        if kind is Call:
            return self._call(node)  # type: ignore[arg-type]
        return self._eval_node(node)

    def _eval_node(self, node: Node) -> Value:
        if isinstance(node, Literal):
            return node.value  # type: ignore[return-value]
        if isinstance(node, Name):
            if node.name not in self.names:
                raise self.fail(f"unknown name '{node.name}'", node)
            return self.names[node.name]  # type: ignore[return-value]
        if isinstance(node, Attr):
            target = self.eval(node.target)
            if target is None:
                return None
            if not isinstance(target, Mapping):
                raise self.fail(f"'.{node.name}' on a {type_name(target)} (only mappings have fields)", node)
            return target.get(node.name)  # type: ignore[return-value]
        if isinstance(node, Index):
            return self._index(node)
        if isinstance(node, ListExpr):
            return tuple(self.eval(item) for item in node.items)
        if isinstance(node, Unary):
            operand = self.eval(node.operand)
            if node.op == "not":
                if operand is None:
                    return True
                if not isinstance(operand, bool):
                    raise self.fail(f"'not' needs a boolean, got a {type_name(operand)}", node)
                return not operand
            if operand is None:
                return None
            if not _is_number(operand):
                raise self.fail(f"'-' needs a number, got a {type_name(operand)}", node)
            return _check_number(-operand, node, self.source)  # type: ignore[operator]
        if isinstance(node, BoolOp):
            for operand_node in node.operands:
                value = self.eval(operand_node)
                if value is not None and not isinstance(value, bool):
                    raise self.fail(f"'{node.op}' needs booleans, got a {type_name(value)}", operand_node)
                if node.op == "and" and not value:
                    return False
                if node.op == "or" and value is True:
                    return True
            return node.op == "and"
        if isinstance(node, Binary):
            return self._binary(node)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, Comprehension):
            return self._comprehension(node)
        raise self.fail("unsupported expression", node)

    def _comprehension(self, node: Comprehension) -> Value:
        items = self.eval(node.iterable)
        if items is None:
            return ()
        if isinstance(items, Mapping):
            items = tuple(items)
        if not isinstance(items, tuple):
            raise self.fail(f"'for' needs a list, got a {type_name(items)}", node)
        out: list[object] = []
        for item in items:
            scope = _Scope(self.names, node.var, item)
            inner = Evaluator(scope, self.functions, self.context, self.source, self.budget)
            if node.condition is not None:
                keep = inner.eval(node.condition)
                if keep is not None and not isinstance(keep, bool):
                    raise self.fail(f"a comprehension's 'if' needs a boolean, got a {type_name(keep)}", node)
                if keep is not True:
                    continue
            out.append(inner.eval(node.element))
        return tuple(out)

    def _index(self, node: Index) -> Value:
        target = self.eval(node.target)
        index = self.eval(node.index)
        if target is None or index is None:
            return None
        if isinstance(target, Mapping):
            if not isinstance(index, str):
                raise self.fail("a mapping is indexed by a string", node)
            return target.get(index)  # type: ignore[return-value]
        if isinstance(target, tuple | str):
            if not isinstance(index, int) or isinstance(index, bool):
                raise self.fail("a list is indexed by a whole number", node)
            if -len(target) <= index < len(target):
                return target[index]  # type: ignore[return-value]
            return None
        raise self.fail(f"cannot index a {type_name(target)}", node)

    def _binary(self, node: Binary) -> Value:
        left = self.eval(node.left)
        right = self.eval(node.right)
        op = node.op
        if op == "==":
            return _equal(left, right)
        if op == "!=":
            return not _equal(left, right)
        if op in ("in", "not in"):
            if right is None:
                return op == "not in"
            if isinstance(right, str):
                if not isinstance(left, str):
                    raise self.fail(f"'in' on a string needs a string, got a {type_name(left)}", node)
                found = left in right
            elif isinstance(right, tuple):
                found = any(_equal(left, item) for item in right)
            elif isinstance(right, Mapping):
                found = isinstance(left, str) and left in right
            else:
                raise self.fail(f"'in' needs a list, string or mapping, got a {type_name(right)}", node)
            return found if op == "in" else not found
        if left is None or right is None:
            return False if op in _COMPARE_OPS else None
        if op in ("<", "<=", ">", ">="):
            if (_is_number(left) and _is_number(right)) or (isinstance(left, str) and isinstance(right, str)):
                pass
            else:
                raise self.fail(f"cannot compare a {type_name(left)} with a {type_name(right)}", node)
            if op == "<":
                return left < right  # type: ignore[operator]
            if op == "<=":
                return left <= right  # type: ignore[operator]
            if op == ">":
                return left > right  # type: ignore[operator]
            return left >= right  # type: ignore[operator]
        if op == "+" and isinstance(left, str) and isinstance(right, str):
            if len(left) + len(right) > MAX_STRING_CHARS:
                raise self.fail("string too long", node)
            return left + right
        if op == "+" and isinstance(left, tuple) and isinstance(right, tuple):
            if len(left) + len(right) > MAX_LIST_ITEMS:
                raise self.fail("list too long", node)
            return left + right
        if not (_is_number(left) and _is_number(right)):
            raise self.fail(f"'{op}' needs numbers, got a {type_name(left)} and a {type_name(right)}", node)
        a, b = left, right
        if op == "+":
            result = a + b  # type: ignore[operator]
        elif op == "-":
            result = a - b  # type: ignore[operator]
        elif op == "*":
            result = a * b  # type: ignore[operator]
        elif op in ("/", "//", "%"):
            if b == 0:
                return None
            if op == "/":
                result = a / b  # type: ignore[operator]
            elif op == "//":
                result = a // b  # type: ignore[operator]
            else:
                result = a % b  # type: ignore[operator]
        elif op == "**":
            if not isinstance(b, int) or b < 0 or b > MAX_EXPONENT:
                raise self.fail(f"exponent must be a whole number from 0 to {MAX_EXPONENT}", node)
            if abs(a) > 2**32:  # type: ignore[arg-type]
                raise self.fail("base of '**' too large", node)
            result = a**b  # type: ignore[operator]
        else:
            raise self.fail(f"unknown operator '{op}'", node)
        return _check_number(result, node, self.source)  # type: ignore[arg-type]

    def _call(self, node: Call) -> Value:
        spec = self.functions.get(node.func)
        if spec is None:
            raise self.fail(f"unknown function '{node.func}'", node)
        if not spec.min_args <= len(node.args) <= spec.max_args:
            raise self.fail(f"function '{node.func}' takes {spec.arity_text()} argument(s)", node)
        if spec.lazy:
            thunks = tuple((lambda arg=arg: self.eval(arg)) for arg in node.args)
            result = spec.impl(self.context, *thunks)
        else:
            args = [self.eval(arg) for arg in node.args]
            try:
                result = spec.impl(self.context, *args)
            except ConditionError as error:
                raise self.fail(f"{node.func}(): {error.message}", node) from None
        value = to_value(result)
        if _is_number(value):
            _check_number(value, node, self.source)  # type: ignore[arg-type]
        return value


def evaluate(condition: Condition, names: Mapping[str, object], functions: Mapping[str, Function],
             context: object = None, budget: Budget | None = None) -> Value:
    """Evaluate a parsed condition against bound plain data."""
    return Evaluator(names, functions, context, condition.source, budget).eval(condition.root)
