"""The ``flinktune`` application: one typer app, each command in a module of its own.

Start-up time matters (``flinktune lint`` runs as a fresh process in CI and pre-commit), so this
module imports typer only when the typer app is actually needed: ``main`` gives a plain
``flinktune lint ...`` or config-only ``flinktune recommend ...`` command line to the typer-free
route in ``lint_run.py`` / ``recommend_run.py`` (FAST_ROUTES), and otherwise builds an app with
only the command being run registered (all of them for ``--help`` or an unknown command).
``from flinktune.cli.app import app`` still gives the full app.
"""

from __future__ import annotations

import gc
import importlib
import signal
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from flinktune import __version__

if TYPE_CHECKING:
    import typer

# Each module defines ``register(app)``; the command's heavy imports happen inside the command.
COMMAND_MODULES: tuple[str, ...] = (
    "flinktune.cli.lint_cmd",
    "flinktune.cli.rules_cmd",
    "flinktune.cli.model_cmd",
    "flinktune.cli.simulate_cmd",
    "flinktune.cli.analyze_cmd",
    "flinktune.cli.recommend_cmd",
    "flinktune.cli.collect_cmd",
    "flinktune.cli.compare_cmd",
)

# Commands with a typer-free route for plain command lines (typer + pydantic cost more than the
# work): the module's ``main_fast(argv)`` returns the exit code, or None to leave it to typer.
FAST_ROUTES: dict[str, str] = {
    "lint": "flinktune.cli.lint_run",
    "recommend": "flinktune.cli.recommend_run",
}


def _command_module(command: str) -> str | None:
    """The module registering ``command`` (modules are named ``<command>_cmd``)."""
    wanted = f"flinktune.cli.{command}_cmd"
    return wanted if wanted in COMMAND_MODULES else None


def _version_callback(value: bool) -> None:
    if value:
        import typer

        typer.echo(f"flinktune {__version__}")
        raise typer.Exit(0)


def build_app(modules: tuple[str, ...] = COMMAND_MODULES) -> typer.Typer:
    """The typer app with the commands of ``modules`` registered."""
    import typer

    new_app = typer.Typer(
        name="flinktune",
        help="Tuning advisor for Apache Flink's network stack.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @new_app.callback()
    def _root(
        version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True,
                                     help="Print the version and exit."),
    ) -> None:
        """Tuning advisor for Apache Flink's network stack."""

    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            # While the command set is being built, a command module may not exist yet.
            if error.name == name:
                continue
            raise
        module.register(new_app)
    return new_app


def __getattr__(name: str) -> Any:
    # ``app`` (the full typer app, for tests and embedding) is built on first use.
    if name == "app":
        full = build_app()
        globals()["app"] = full
        return full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    try:
        # First thing, inside the try: a signal during the imports below is still one line.
        from flinktune.cli.common import install_signal_handlers

        install_signal_handlers()
        _main()
    except KeyboardInterrupt as stop:
        # Outside a command's own handling (imports, argument parsing): still one line, 130/143.
        _interrupted(getattr(stop, "signum", None))
    except SystemExit:
        from flinktune.cli.common import interrupted_announced, received_signal

        # typer turns a KeyboardInterrupt it sees while parsing the arguments into a silent exit 130
        # (older click: "Aborted!" and exit 1): the same one line and 130/143 as everywhere else.
        if received_signal() and not interrupted_announced():
            _interrupted(None)
        raise
    finally:
        _end_spark()


def _end_spark() -> None:
    """The command is done (or failed): a Spark JVM it started that may end at once is ended now,
    not after this process exits (flinktune.spark.session.end_at_exit)."""
    session = sys.modules.get("flinktune.spark.session")
    if session is not None:
        session.end_at_exit()


def _interrupted(signum: int | None) -> NoReturn:
    from flinktune.cli.common import announce_interrupted, interrupted_exit_code, stop_children

    code = interrupted_exit_code(signum)

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_IGN)   # a second Ctrl-C must not cut the clean-up short
    stop_children()
    announce_interrupted(code)
    sys.exit(code)


def _main() -> None:
    argv = sys.argv[1:]
    fast = FAST_ROUTES.get(argv[0]) if argv else None
    if fast is not None:
        # A lint or a config-only recommend is a short process whose many small objects (classes,
        # rules, the catalog) live to its end: collecting young objects every 50,000 allocations
        # instead of every 700 saves a few per cent of its run time and still bounds memory.
        gc.set_threshold(50_000, 10, 10)
        code = importlib.import_module(fast).main_fast(argv[1:])
        if code is not None:
            sys.exit(code)
    module = _command_module(argv[0]) if argv else None
    build_app((module,) if module else COMMAND_MODULES)()
