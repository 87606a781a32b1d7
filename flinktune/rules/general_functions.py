"""General rule-language helpers for lists and text (no Flink knowledge): the pieces conditions need to
filter and combine plain data with list comprehensions, and ``fact(table, key)``, the one lookup into the
fact tables of flinktune/rules/facts.py."""

from __future__ import annotations

from typing import Any

from flinktune.errors import ConditionError
from flinktune.rules.lang import MAX_LIST_ITEMS, Function


def _words(_ctx: Any, text: object) -> object:
    """The whitespace-separated words of a text (JVM options, command lines)."""
    if not isinstance(text, str):
        return ()
    words = text.split()
    if len(words) > MAX_LIST_ITEMS:
        raise ConditionError(f"more than {MAX_LIST_ITEMS} words")
    return tuple(words)


def _number(_ctx: Any, text: object) -> object:
    """A number from its text (``"4"`` -> 4, ``"0.5"`` -> 0.5), a number as is, else null."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return text
    if not isinstance(text, str):
        return None
    value = text.strip().strip("\"'")
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and abs(number) < 1e30 else None


def _sum(_ctx: Any, items: object) -> object:
    if items is None:
        return 0
    if not isinstance(items, tuple):
        raise ConditionError("sum() needs a list of numbers")
    total: int | float = 0
    for item in items:
        if item is None:
            continue
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise ConditionError("sum() needs a list of numbers")
        total += item
    return total


def _distinct(_ctx: Any, items: object) -> object:
    """The list without repeated items, in first-seen order."""
    if items is None:
        return ()
    if not isinstance(items, tuple):
        raise ConditionError("distinct() needs a list")
    out: list[object] = []
    for item in items:
        if item not in out:
            out.append(item)
    return tuple(out)


def _upper(_ctx: Any, text: object) -> object:
    return text.upper() if isinstance(text, str) else None


def _basename(_ctx: Any, text: object) -> object:
    """The last part of a path (``/opt/flink/conf/flink-conf.yaml`` -> ``flink-conf.yaml``)."""
    return text.rstrip("/").rsplit("/", 1)[-1] if isinstance(text, str) else None


def _replace(_ctx: Any, text: object, old: object, new: object) -> object:
    if not isinstance(text, str) or not isinstance(old, str) or not isinstance(new, str) or not old:
        return text if isinstance(text, str) else None
    out = text.replace(old, new)
    if len(out) > 10_000:
        raise ConditionError("replace(): text too long")
    return out


def _join(_ctx: Any, items: object, separator: object = " ") -> object:
    """The items as one text (``join(["a", "b"], ", ")`` -> ``"a, b"``); null items are left out."""
    if items is None:
        return ""
    if not isinstance(items, tuple) or not isinstance(separator, str):
        raise ConditionError("join() needs a list and a text")
    out = separator.join(str(item) for item in items if item is not None)
    if len(out) > 10_000:
        raise ConditionError("join(): text too long")
    return out


def _prefixes(_ctx: Any, text: object, separator: object = ".") -> object:
    """The leading parts of a dotted name, shortest first (``a.b.c`` -> ``a``, ``a.b``)."""
    if not isinstance(text, str) or not isinstance(separator, str) or not separator:
        return ()
    parts = text.split(separator)
    return tuple(separator.join(parts[:n]) for n in range(1, len(parts)))


def _trim(_ctx: Any, text: object, chars: object = None) -> object:
    """``text`` without leading and trailing whitespace, or without the given characters."""
    if not isinstance(text, str):
        return None
    if chars is not None and not isinstance(chars, str):
        raise ConditionError("trim() needs a text of characters")
    return text.strip(chars)


def _fact(_ctx: Any, table: object, key: object) -> object:
    """The entry for ``key`` in a fact table (flinktune/rules/facts.py), or null."""
    from flinktune.rules.facts import FACTS

    if not isinstance(table, str):
        raise ConditionError("fact() needs a table name")
    found = FACTS.get(table)
    if found is None:
        raise ConditionError(f"unknown fact table '{table[:80]}' (one of {', '.join(FACTS)})")
    return found.get(key) if isinstance(key, str) else None


def _location(_ctx: Any, file: object, line: object = None, note: object = None) -> object:
    """A mapping {file, line, note}: a place a finding rests on (a rule's ``related``)."""
    if not isinstance(file, str):
        return None
    return {"file": file, "line": line if isinstance(line, int) and not isinstance(line, bool) else None,
            "note": note if isinstance(note, str) else ""}


def function(name: str, arity: tuple[int, int], impl: Any, doc: str) -> Function:
    """A rule-language function entry (name, (min, max) arguments, implementation, one-line doc)."""
    return Function(name=name, min_args=arity[0], max_args=arity[1], impl=impl, doc=doc)


_f = function


GENERAL_FUNCTIONS: dict[str, Function] = {fn.name: fn for fn in (
    _f("words", (1, 1), _words, "words(text): the whitespace-separated words of a text"),
    _f("number", (1, 1), _number, "number(text): the number a text spells (\"4\" -> 4), or null"),
    _f("sum", (1, 1), _sum, "sum(list): the sum of a list of numbers (nulls ignored)"),
    _f("distinct", (1, 1), _distinct, "distinct(list): the list without repeated items"),
    _f("upper", (1, 1), _upper, "upper(text): upper-case text"),
    _f("basename", (1, 1), _basename, "basename(path): the last part of a path"),
    _f("replace", (3, 3), _replace, "replace(text, old, new): text with every old replaced by new"),
    _f("join", (1, 2), _join, "join(list, separator): the items as one text, separated (default a space)"),
    _f("prefixes", (1, 2), _prefixes,
       "prefixes(name, separator): the leading parts of a dotted name, shortest first (a.b.c -> a, a.b)"),
    _f("trim", (1, 2), _trim,
       "trim(text, chars): text without leading and trailing whitespace (or the given characters)"),
    _f("fact", (2, 2), _fact,
       "fact(table, key): the entry for key in a fact table, or null: reporter_factories (reporter class -> "
       "its factory class), removed_jvm_flags (option name as jvm_options gives it -> jdk, instead), "
       "newest_release (release line 1.20 or major 1 -> the newest patch release flinktune knows)"),
    _f("location", (1, 3), _location,
       "location(file, line, note): a place as a mapping (for a rule's related places)"),
)}
