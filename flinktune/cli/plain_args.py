"""A typer-free reader of plain command lines, for the commands whose start-up is most of their cost.

typer validates every parameter through pydantic, which costs more than a ``lint`` or a config-only
``recommend`` itself. ``flinktune.cli.app.main`` hands such a command line to this parser first: it
reads only well-formed lines exactly as typer would and returns None for anything else (``--help``,
unknown options, missing or odd values, bundled short flags, ``-`` ...), which then goes through the
typer command, so usage errors and help keep typer's wording.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

# Option kinds: "flag" (no value), "str", "path", "int" (a whole number >= 1), "str*" / "path*"
# (repeatable, collected in order into a tuple).
Options = dict[str, tuple[str, str]]


def parse_plain(argv: list[str], options: Options) -> tuple[dict[str, object], list[str]] | None:
    """``argv`` (after the command's name) as (option field -> value, positional arguments), or None
    when typer should read it. ``options`` maps each spelling (``--format``, ``-f``) to (field, kind)."""
    values: dict[str, object] = {}
    lists: dict[str, list[object]] = {}
    positionals: list[str] = []
    only_positionals = False
    index = 0
    while index < len(argv):
        arg = argv[index]
        index += 1
        if only_positionals or not arg.startswith("-"):
            positionals.append(arg)
            continue
        if arg == "--":
            only_positionals = True
            continue
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        spec = options.get(name)
        if spec is None:
            return None                      # --help, unknown options, bundled short flags, "-"
        field_name, kind = spec
        if kind == "flag":
            if equals:
                return None
            values[field_name] = True
            continue
        if not equals:
            if index >= len(argv):
                return None
            value = argv[index]
            index += 1
        if not value or value.startswith("-"):
            return None                      # let typer decide what an empty or dash value means
        converted: object = value
        if kind.startswith("path"):
            converted = Path(value)
        elif kind == "int":
            if not value.isascii() or not value.isdigit() or int(value) < 1:
                return None
            converted = int(value)
        if kind.endswith("*"):
            lists.setdefault(field_name, []).append(converted)
        else:
            values[field_name] = converted
    for field_name, items in lists.items():
        values[field_name] = tuple(items)
    return values, positionals


def finish(run: Callable[[], int]) -> int:
    """The exit code of a typer-free route's ``run``, its report flushed; a reader that left
    (``flinktune ... | head``) stops it quietly with exit 1, as click does."""
    try:
        code = run()
        sys.stdout.flush()
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not complain again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return code
