"""The ``flinktune`` application: one typer app, each command in a module of its own."""

from __future__ import annotations

import importlib

import typer

from flinktune import __version__

app = typer.Typer(
    name="flinktune",
    help="Tuning advisor for Apache Flink's network stack.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines ``register(app)``; the command's heavy imports happen inside the command.
COMMAND_MODULES: tuple[str, ...] = (
    "flinktune.cli.lint_cmd",
    "flinktune.cli.rules_cmd",
    "flinktune.cli.model_cmd",
    "flinktune.cli.simulate_cmd",
    "flinktune.cli.analyze_cmd",
    "flinktune.cli.recommend_cmd",
    "flinktune.cli.collect_cmd",
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"flinktune {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Tuning advisor for Apache Flink's network stack."""


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            # While the command set is being built, a command module may not exist yet.
            if error.name == name:
                continue
            raise
        module.register(app)


_register_all()


def main() -> None:
    app()
