"""One report pipeline: a command's result value, rendered in one format, to stdout or a file.

Every command's emitters are registered once, in one module ``flinktune.report.emit.<command>``:

    RESULT = "flinktune.lint.model.LintResult"     # the result type(s) it renders (checked, not imported)
    SCHEMA_VERSION = 2                              # the version of the command's JSON document
    FORMATS = {"text": text, "json": json, ...}     # format name -> emitter(result, how) -> str

An emitter returns the report text; a ``json`` emitter returns the command's own fields (a dict
or JSON text), which this module puts in the shared envelope (``report/envelope.py``) as strict
JSON, with the command's schema (``flinktune/data/schemas/<command>.schema.json``). The ``-f``
choices are the keys of ``FORMATS`` (plus ``auto`` where ``github`` is one: github under GitHub
Actions, else text); ``-o FILE`` writes atomically, keeping the previous file as ``FILE.bak``.

Only the module of the command being run is imported, and an emitter imports what it renders
with inside its function: ``flinktune lint`` loads no other command's emitters (its cold start).

Adding a format to a command: one emitter function and one ``FORMATS`` entry in its module.
Adding a command: one module here (and its schema file if it speaks JSON).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from flinktune.errors import UsageError


class How(NamedTuple):
    """How to render: what the command line asked for beyond the format."""

    color: bool = False               # ANSI colours (text on a terminal, not --no-color / NO_COLOR)
    verbose: bool = False             # -v: the longer report where a command has one
    inputs: tuple[str, ...] = ()      # what the command read, for the JSON envelope
    tool_version: str = ""
    fail_on: str | None = None        # the severity that fails the run (junit marks those as failures)


# What holds for a format whatever the command (registered once, here):
# its output is finished here (the JSON envelope) ...
_ENVELOPED = ("json",)
# ... and what it needs installed, checked when the format is chosen, before any work is done.
_NEEDS: dict[str, Callable[[], object]] = {}


def _html_extra() -> object:
    from flinktune.report.html import environment

    return environment()      # UsageError naming the 'html' extra when jinja2 is missing


_NEEDS["html"] = _html_extra


def _module(command: str) -> Any:
    name = f"flinktune.report.emit.{command}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        raise UsageError(f"no reports for a command '{command}'") from None


def formats(command: str) -> tuple[str, ...]:
    """The ``-f`` choices of ``command``, in its module's order (``auto`` first where it applies)."""
    names = tuple(_module(command).FORMATS)
    return ("auto", *names) if "github" in names else names


def choices_text(command: str) -> str:
    """The choices as a phrase: ``text, json or html``."""
    names = formats(command)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def resolve_format(command: str, name: str, environ: Mapping[str, str] | None = None) -> str:
    """``name`` checked against the command's formats (any case), ``auto`` resolved, and what the
    format needs checked (the html extra). One line, the same for every command, when it is not
    one of them."""
    wanted = name.strip().lower()
    module = _module(command)
    if wanted == "auto" and "github" in module.FORMATS:
        environ = os.environ if environ is None else environ
        return "github" if environ.get("GITHUB_ACTIONS", "").lower() == "true" else "text"
    if wanted not in module.FORMATS:
        raise UsageError(f"--format must be {choices_text(command)}, not '{name}'")
    if wanted in _NEEDS:
        _NEEDS[wanted]()
    return wanted


def render(command: str, result: Any, fmt: str, how: How | None = None) -> str:
    """The report of ``result`` in ``fmt`` (resolved), ending in one newline."""
    how = how or How()
    module = _module(command)
    kind = f"{type(result).__module__}.{type(result).__qualname__}"
    renders = (module.RESULT,) if isinstance(module.RESULT, str) else module.RESULT
    if kind not in renders:
        raise TypeError(f"the {command} report renders {' or '.join(renders)}, not {kind}")
    body = module.FORMATS[fmt](result, how)
    text = envelope(command, body, how) if fmt in _ENVELOPED else body
    return text if text.endswith("\n") else text + "\n"


def envelope(command: str, body: Any, how: How) -> str:
    """The command's JSON fields in the shared envelope, as strict JSON."""
    from flinktune.report.envelope import dumps, rewrap, wrap

    version = schema_version(command)
    if isinstance(body, str):
        return rewrap(command, how.inputs, body, how.tool_version, version)
    return dumps(wrap(command, how.inputs, body, how.tool_version, version))


def schema_version(command: str) -> int:
    return int(getattr(_module(command), "SCHEMA_VERSION", 1))


def schema_path(command: str) -> Path:
    """The JSON Schema shipped for the command's ``json`` format."""
    return Path(__file__).resolve().parents[2] / "data" / "schemas" / f"{command}.schema.json"


def commands() -> tuple[str, ...]:
    """Every command with reports (for tests and docs; imports nothing)."""
    import pkgutil

    return tuple(sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])))


def write_report(text: str, output: Path | None, out: Callable[[str], None]) -> None:
    """The report to ``out`` (stdout), or with ``-o FILE`` into FILE, atomically with the previous
    report kept as FILE.bak: the same bytes either way."""
    if output is None:
        out(text)
        return
    from flinktune.config.writer import write_file_atomic

    write_file_atomic(output, text.encode("utf-8"))
