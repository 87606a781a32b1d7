"""What every command shares: exit codes and turning the library's errors into one line."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

from flinktune.errors import FlinktuneError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2

T = TypeVar("T")


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit 2."""
    import typer  # here, not at the top: `flinktune lint` imports this module without typer

    typer.echo(f"flinktune: error: {' '.join(message.split())}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def guarded(action: Callable[[], T]) -> T:
    """Run ``action``; any FlinktuneError becomes one line on stderr and exit code 2."""
    try:
        return action()
    except FlinktuneError as error:
        fail(error.one_line())
    except KeyboardInterrupt:
        import typer

        typer.echo("flinktune: interrupted", err=True)
        raise typer.Exit(130) from None


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()
