"""Helpers shared by tests in several folders (importable through tests/conftest.py)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, AnyStr

# DESIGN.md "Metrics dump": the canonical long-format columns, in order. Written out here rather
# than taken from flinktune.collect.writer so that the tests check the writer against the design.
DUMP_COLUMNS = [
    "ts",
    "job_id",
    "job_name",
    "vertex_id",
    "task_name",
    "subtask_index",
    "tm_id",
    "host",
    "metric",
    "value",
]


def shared_dir() -> Path:
    """``../shared`` (the corpus, the real dumps, the reference): beside this checkout, as CI has it, or
    beside the main checkout when this one is a git worktree of it. It may not exist: callers skip."""
    root = Path(__file__).resolve().parents[1]
    candidates = [root.parent / "shared"]
    git = root / ".git"
    if git.is_file():   # a worktree: "gitdir: <main checkout>/.git/worktrees/<name>"
        text = git.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            candidates.append(Path(text.split(":", 1)[1].strip()).parents[2].parent / "shared")
    return next((c for c in candidates if c.is_dir()), candidates[0])


def changed_lines(before: AnyStr, after: AnyStr) -> tuple[list[AnyStr], list[AnyStr]]:
    """Original lines removed or replaced, and lines added (with endings, byte-exact)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    removed: list[AnyStr] = []
    added: list[AnyStr] = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            removed += a[a0:a1]
            added += b[b0:b1]
    return removed, added


def default_sigint() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT: start it with SIGINT at its
    default, as a terminal would. A suite started in the background (``cmd &`` in a script) passes
    SIGINT on ignored, and flinktune, like any well-behaved tool, then keeps ignoring it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def check_plain_options(command: str, options: dict[str, tuple[str, str]], fields: tuple[str, ...],
                        positional: tuple[str, int]) -> None:
    """A typer-free route's option table (flinktune.cli.plain_args kinds) matches the typer command:
    every spelling, field, kind, minimum and repeatability; ``positional`` is the argument's name
    and nargs; ``fields`` the route's parsed-arguments fields."""
    from pathlib import Path

    import typer.main

    from flinktune.cli.app import app

    seen: set[str] = set()
    for param in typer.main.get_command(app).commands[command].params:  # type: ignore[attr-defined]
        if param.param_type_name == "argument":
            assert (param.name, param.nargs) == positional and param.required
            continue
        if param.name == "help":
            continue
        for flag in (*param.opts, *param.secondary_opts):
            assert flag in options, f"{flag}: an option of `flinktune {command}`, not in the fast route's"
            field, kind = options[flag]
            assert field == param.name, flag
            assert (kind == "flag") == bool(param.is_flag), flag
            assert kind.endswith("*") == bool(param.multiple), flag
            annotation = param.type_descriptor.annotation
            expected = {"flag": bool, "int": int, "str": str, "path": Path}[kind.rstrip("*")]
            if kind.endswith("*"):
                assert annotation == list[expected], (flag, annotation)  # type: ignore[valid-type]
            else:
                assert annotation is expected, (flag, annotation)
            assert param.min == (1 if kind == "int" else None), flag
            assert param.envvar is None, flag           # no environment variables to honour
            seen.add(flag)
    assert seen == set(options), f"options only in the fast route's table: {sorted(set(options) - seen)}"
    assert set(fields) == {field for field, _ in options.values()} | {positional[0]}


HEAVY_MODULES = ("typer", "click", "rich", "pydantic", "numpy", "pyspark", "yaml")


def heavy_imports(argv: list[str], cwd: object) -> tuple[object, set[str]]:
    """Run ``flinktune *argv`` in a fresh interpreter: its exit code and which of HEAVY_MODULES it
    imported (the typer-free routes must not need typer, pydantic, numpy or pyspark)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        f"sys.argv = ['flinktune', *{argv!r}]\n"
        "from flinktune.cli.app import main\n"
        "code = 0\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    code = done.code\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY_MODULES!r}))\n"
        "print('EXIT', code, 'HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    _, code, heavy = result.stdout.strip().splitlines()[-1].split(" ")
    names = heavy.removeprefix("HEAVY=")
    return int(code), set(names.split(",")) if names else set()


def typer_parsed(monkeypatch: Any, module: object, run_name: str, command: str, argv: list[str]) -> object:
    """The arguments the typer command ``command`` hands to ``module.run_name`` for ``argv`` (the
    run itself replaced), to compare with what a typer-free route parses."""
    from typer.testing import CliRunner

    from flinktune.cli.app import app

    captured: list[object] = []

    def fake_run(args: object, **_: object) -> int:
        captured.append(args)
        return 0

    monkeypatch.setattr(module, run_name, fake_run)
    result = CliRunner().invoke(app, [command, *argv])
    assert result.exit_code == 0, result.output
    return captured[0]
