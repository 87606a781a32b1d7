"""What every command shares: exit codes, signals, and turning the library's errors into one line."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from flinktune.errors import FlinktuneError

if TYPE_CHECKING:
    from pathlib import Path

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
# The shell's convention for a process ended by a signal: 128 + the signal's number.
EXIT_SIGINT = 128 + signal.SIGINT  # 130
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143

T = TypeVar("T")


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived. A KeyboardInterrupt, so ``except Exception`` in library code
    (and py4j's socket code) lets it through to the ``finally`` blocks that stop children."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


# The first signal received by this process (0: none). A library error raised after it (a Spark
# job cancelled under us, a half-read socket) is a consequence of the interruption, not of the input.
_received: list[int] = [0]
# Whether the one "interrupted by" line was printed (typer turns an interrupt during argument parsing
# into a silent exit 130; the entry point then prints it).
_announced: list[bool] = [False]


def _on_signal(signum: int, _frame: object) -> None:
    if not _received[0]:
        _received[0] = signum
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    """SIGINT and SIGTERM raise ``Interrupted`` in the main thread, so the code running unwinds
    through its ``finally`` blocks (children stopped, temp files removed) instead of dying where
    it stands (SIGTERM's default)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler):
            try:
                signal.signal(signum, _on_signal)
            except ValueError:  # not the main thread (an embedding caller): leave signals alone
                return


def received_signal() -> int:
    """The first SIGINT/SIGTERM this process received through our handler, else 0."""
    return _received[0]


def announce_interrupted(code: int, detail: str = "", write: Callable[[str], None] | None = None) -> None:
    """Print the one line for an interruption, once per process (``detail`` follows the signal's name;
    ``write``: where lines go, stderr by default)."""
    if _announced[0]:
        return
    _announced[0] = True
    line = f"flinktune: interrupted by {signal.Signals(code - 128).name}{detail}"
    if write is not None:
        write(line)
        return
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def interrupted_announced() -> bool:
    return _announced[0]


def interrupted_exit_code(signum: int | None = None) -> int:
    number = signum or _received[0] or signal.SIGINT
    return 128 + int(number)


def stop_children() -> None:
    """End every process flinktune started in this run (the Spark JVM and what it spawned) and
    remove their temp files; a no-op when none was started."""
    session = sys.modules.get("flinktune.spark.session")
    if session is not None:
        session.stop_started_processes()


def stopped(signum: int | None = None) -> int:
    """Stop children, print one line; the exit code, 130 (SIGINT) or 143 (SIGTERM)."""
    import threading

    if threading.current_thread() is threading.main_thread():
        # A second Ctrl-C must not cut the clean-up short.
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, signal.SIG_IGN)
    stop_children()
    code = interrupted_exit_code(signum)
    announce_interrupted(code)
    return code


def interrupted(signum: int | None = None) -> NoReturn:
    """Stop children, print one line, exit 130 (SIGINT) or 143 (SIGTERM)."""
    import typer

    raise typer.Exit(stopped(signum))


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit 2."""
    import typer  # here, not at the top: `flinktune lint` imports this module without typer

    typer.echo(f"flinktune: error: {' '.join(message.split())}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def error_line(message: str) -> int:
    """``fail`` for the typer-free routes: the same line on stderr; the exit code, 2."""
    sys.stderr.write(f"flinktune: error: {' '.join(message.split())}\n")
    sys.stderr.flush()
    return EXIT_BAD_INPUT


def guarded(action: Callable[[], T], *, error: Callable[[str], Any] = fail,
            stop: Callable[[int | None], Any] = interrupted) -> T:
    """Run ``action``; any FlinktuneError becomes one line on stderr and exit code 2; SIGINT and
    SIGTERM end started children and exit 130 / 143 with one line. Under typer the exit is raised
    (``fail``, ``interrupted``); a typer-free route passes ``error=error_line, stop=stopped`` and
    gets the exit code back instead."""
    install_signal_handlers()
    try:
        return action()
    except FlinktuneError as problem:
        if received_signal():
            return stop(None)  # type: ignore[no-any-return]
        return error(problem.one_line())  # type: ignore[no-any-return]
    except KeyboardInterrupt as interruption:
        return stop(getattr(interruption, "signum", None))  # type: ignore[no-any-return]


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def color_allowed(no_color: bool = False) -> bool:
    """Whether ANSI sequences may be written at all: never with --no-color or NO_COLOR set
    (no-color.org), on stdout (colours) and stderr (live status lines) alike."""
    import os

    return not no_color and "NO_COLOR" not in os.environ


def use_color(no_color: bool = False) -> bool:
    """Colors only on a terminal, never with --no-color or NO_COLOR set (no-color.org)."""
    return color_allowed(no_color) and sys.stdout.isatty()


def live_stderr(no_color: bool = False) -> bool:
    """A live (redrawn, ANSI) progress display on stderr: only on a terminal and when colour is
    allowed; otherwise progress is plain lines, so ``--no-color`` output holds no ESC at all."""
    return color_allowed(no_color) and sys.stderr.isatty()


def checked_format(command: str, name: str) -> str:
    """``-f NAME`` checked against the command's reports (flinktune.report.emit), ``auto`` resolved."""
    from flinktune.report.emit import resolve_format

    return resolve_format(command, name)


def emit(command: str, result: object, fmt: str, *, output: Path | None = None,
         out: Callable[[str], None] | None = None, no_color: bool = False, verbose: bool = False,
         inputs: Iterable[object] = (), fail_on: str | None = None) -> None:
    """The command's report of ``result`` in ``fmt`` (checked) on stdout, or with ``-o FILE`` in FILE,
    written atomically (the previous report kept as FILE.bak): the same bytes either way, ending
    in one newline. Colours only for a text report on a terminal (never --no-color / NO_COLOR)."""
    from flinktune import __version__
    from flinktune.report.emit import How, render, write_report

    color = fmt == "text" and output is None and use_color(no_color)
    how = How(color=color, verbose=verbose, inputs=tuple(str(i) for i in inputs), tool_version=__version__,
              fail_on=fail_on)
    write_report(render(command, result, fmt, how), output, out or _echo)


def _echo(text: str) -> None:
    import typer

    typer.echo(text, nl=False)


@contextlib.contextmanager
def stage_progress(command: str, *, enabled: bool = True,
                   live: bool = True) -> Iterator[Callable[[str], None]]:
    """Progress for long work, always on stderr (stdout holds the report): a rich status line on
    a terminal (unless ``live`` is False: --no-color), plain ``flinktune <command>: <stage>`` lines
    otherwise, nothing when disabled (--quiet). Yields the function that reports a stage."""
    if not enabled:
        yield lambda _stage: None
        return
    if live and sys.stderr.isatty():
        from rich.console import Console

        with Console(stderr=True).status(f"flinktune {command}") as status:
            yield lambda stage: status.update(f"flinktune {command}: {stage}")
        return

    def plain(stage: str) -> None:
        sys.stderr.write(f"flinktune {command}: {stage}\n")
        sys.stderr.flush()

    yield plain


@contextlib.contextmanager
def around_spark_run(quiet: bool = False) -> Iterator[None]:
    """Around a Spark run:

    - library logging never reaches the user: py4j logs a whole traceback through the root logger
      (``logging.exception``, which configures a stderr handler when there is none) when a signal
      interrupts a call into the JVM; the CLI reports an interruption in one line instead;
    - one line on stderr, after the run, when it started the one-time background build of Spark's
      class-data archive (flinktune/spark/class_cache.py), with the way to turn it off. Nothing
      when the run failed (no build starts then) or with ``quiet``.
    """
    import logging

    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())
    cache = None
    if not quiet:
        try:
            from flinktune.spark import class_cache

            cache = class_cache.locate()
            if not class_cache.first_build_pending(cache):
                cache = None
        except Exception:  # the notice must never fail a run
            cache = None
    yield
    if cache is not None and (cache.lock.exists() or cache.archive.is_file()):
        from flinktune.spark.class_cache import SWITCH_ENV

        sys.stderr.write(
            f"flinktune: note: first Spark run here: a background `java -Xshare:dump` now keeps a "
            f"~190 MB class-data archive in {cache.directory} so Spark starts faster next time "
            f"({SWITCH_ENV}=0 turns this off)\n"
        )


def newer_than_catalog_note(version: object) -> str | None:
    """The note for a stated Flink version newer than the newest option catalog: which catalog
    the files were judged by (versions older than the oldest catalog are refused by parse_version)."""
    if version is None:
        return None
    from flinktune.versions import newest_known

    newest = newest_known()
    if version > newest:  # type: ignore[operator]
        return (f"flinktune: note: Flink {version} is newer than the newest option catalog flinktune has; "
                f"judged by Flink {newest}'s options and rules")
    return None


def scaling_options(target_rates: list[str] | None, target_utilization: str | None,
                    rate_per_subtask: float | None = None, max_parallelism: int | None = None) -> Any:
    """``--target-rate NAME=RATE`` (repeatable; a bare RATE for a job with one source) and
    ``--target-utilization PCT`` as flinktune.analysis.parallelism.ScalingOptions."""
    from flinktune.analysis.parallelism import ScalingOptions
    from flinktune.errors import UsageError
    from flinktune.model.scaling import DEFAULT_TARGET_UTILIZATION

    rates: list[tuple[str, float]] = []
    for item in target_rates or []:
        name, sep, value = item.rpartition("=")
        key = name.strip() if sep else "*"
        try:
            rate = float(value.strip())
        except ValueError:
            rate = float("nan")
        if not (rate > 0 and rate != float("inf")) or (sep and not key):
            raise UsageError(f"--target-rate {item}: expected SOURCE=RECORDS_PER_S (e.g. "
                             "'Source: Kafka=20000'), or RECORDS_PER_S for a job with one source")
        rates.append((key, rate))
    utilization = DEFAULT_TARGET_UTILIZATION
    if target_utilization is not None:
        utilization = target_utilization_share(target_utilization)
    return ScalingOptions(target_utilization=utilization, target_rates=tuple(rates),
                          rate_per_subtask=rate_per_subtask, max_parallelism=max_parallelism)


def percentage(text: str, flag: str, example: str) -> float:
    """``25%`` -> 0.25 for a PCT flag; a bare number is refused (one unit rule): one line, exit 2."""
    from flinktune.errors import UsageError

    body = text.strip()
    try:
        if not body.endswith("%"):
            raise ValueError
        value = float(body[:-1]) / 100
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError
    except ValueError:
        raise UsageError(f"{flag}: '{text}' is not a percentage; write e.g. {example}") from None
    return value


def target_utilization_share(text: str) -> float:
    """``--target-utilization 70%`` -> 0.7, above 0% and at most 100%."""
    from flinktune.errors import UsageError

    value = percentage(text, "--target-utilization", "70%")
    if not 0 < value <= 1:
        raise UsageError(f"--target-utilization: '{text}' is not above 0% and at most 100%; write e.g. 70%")
    return value
