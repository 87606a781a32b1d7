"""What ``flinktune recommend`` does once its arguments are known, and its typer-free route.

A config-only recommend (no ``--metrics``) is a short process whose start-up was most of its time:
typer validates every parameter through pydantic. ``flinktune.cli.app.main`` hands a plain
``recommend`` command line to ``parse_recommend_args`` (plain_args.py); anything it does not read
exactly as typer would, and any ``--metrics`` run (Spark, minutes), goes through the typer command in
``recommend_cmd.py``. Both routes end in ``run_recommend``; tests/cli/test_fast_recommend.py checks
they agree.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from flinktune.cli.common import (
    EXIT_OK,
    around_spark_run,
    checked_format,
    emit,
    error_line,
    guarded,
    scaling_options,
    stopped,
)
from flinktune.cli.plain_args import Options, finish, parse_plain


class RecommendArgs(NamedTuple):
    """The parsed ``flinktune recommend`` command line (recommend_cmd.py says what each option means)."""

    file: Path
    flink_version: str | None = None
    rtt: str | None = None
    bandwidth: str | None = None
    parallelism: str | None = None
    slots: str | None = None
    taskmanagers: str | None = None
    exchanges: str | None = None
    record_size: str | None = None
    rate: str | None = None
    latency_target: str | None = None
    skew: str | None = None
    workload: str | None = None
    profile: Path | None = None
    metrics: tuple[str, ...] = ()
    plan: Path | None = None
    target_rate: tuple[str, ...] = ()
    target_utilization: str | None = None
    headroom: str | None = None
    write: bool = False
    output: Path | None = None
    output_format: str = "text"
    follow_symlinks: bool = False
    quiet: bool = False
    verbose: bool = False
    no_color: bool = False


# The recommend command's options: flag spelling -> (RecommendArgs field, kind of plain_args).
OPTIONS: Options = {
    "--flink-version": ("flink_version", "str"),
    "--rtt": ("rtt", "str"),
    "--bandwidth": ("bandwidth", "str"),
    "--parallelism": ("parallelism", "str"),
    "--slots": ("slots", "str"),
    "--taskmanagers": ("taskmanagers", "str"),
    "--exchanges": ("exchanges", "str"),
    "--record-size": ("record_size", "str"),
    "--rate": ("rate", "str"),
    "--latency-target": ("latency_target", "str"),
    "--skew": ("skew", "str"),
    "--workload": ("workload", "str"),
    "--profile": ("profile", "path"),
    "--metrics": ("metrics", "str*"),
    "--plan": ("plan", "path"),
    "--target-rate": ("target_rate", "str*"),
    "--target-utilization": ("target_utilization", "str"),
    "--headroom": ("headroom", "str"),
    "--write": ("write", "flag"),
    "--output": ("output", "path"),
    "-o": ("output", "path"),
    "--format": ("output_format", "str"),
    "-f": ("output_format", "str"),
    "--follow-symlinks": ("follow_symlinks", "flag"),
    "--quiet": ("quiet", "flag"),
    "-q": ("quiet", "flag"),
    "--verbose": ("verbose", "flag"),
    "-v": ("verbose", "flag"),
    "--no-color": ("no_color", "flag"),
}


def parse_recommend_args(argv: list[str]) -> RecommendArgs | None:
    """``argv`` after ``recommend`` as RecommendArgs, or None when typer should handle it (help,
    errors, anything this small parser does not read exactly as typer would)."""
    parsed = parse_plain(argv, OPTIONS)
    if parsed is None or len(parsed[1]) != 1:
        return None
    values, (file,) = parsed
    return RecommendArgs(Path(file), **values)  # type: ignore[arg-type]


def run_recommend(args: RecommendArgs) -> int:
    """Recommend as the command line asks: the report on stdout, notes on stderr, the file written
    with ``--write`` / ``-o``; the exit code. Raises FlinktuneError on bad input (the caller's guard
    makes it one line and exit 2)."""
    from flinktune.advise.file import recommend_file
    from flinktune.errors import UsageError
    from flinktune.situation import Environment, parse_parameters, read_profile

    def note(line: str) -> None:
        # --quiet: errors only; every other line on stderr is a note.
        if not args.quiet:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    fmt = checked_format("recommend", args.output_format)   # the html extra is checked before any analysis
    if args.write and args.output is not None:
        raise UsageError("--write and --output exclude each other")
    flags = {"rtt": args.rtt, "bandwidth": args.bandwidth, "parallelism": args.parallelism,
             "slots": args.slots, "taskmanagers": args.taskmanagers, "exchanges": args.exchanges,
             "record-size": args.record_size, "rate": args.rate, "latency-target": args.latency_target,
             "skew": args.skew, "workload": args.workload, "flink-version": args.flink_version}
    env = Environment()
    if args.profile is not None:
        env = read_profile(args.profile).apply(env)
    env = env.with_values(parse_parameters(flags), "flag")
    margins = _margins(args.headroom)
    # Checked before Spark starts; without them and without --metrics nothing scales (and the fast
    # route does not import the analysis).
    scaling = (scaling_options(list(args.target_rate) or None, args.target_utilization)
               if args.metrics or args.target_rate or args.target_utilization is not None else None)
    with around_spark_run(args.quiet) if args.metrics else contextlib.nullcontext():
        result = recommend_file(args.file, env, plan=args.plan, metrics=args.metrics, margins=margins,
                                scaling=scaling, timeline=fmt == "html", spark_log=args.verbose,
                                progress=lambda message: note(f"flinktune: {message}"),
                                explain=note if args.verbose else None)
    result = _with_lint_errors(result, env)
    emit("recommend", result, fmt, out=sys.stdout.write, no_color=args.no_color, inputs=result.inputs)
    _write(result, args.write, args.output, args.follow_symlinks, note)
    return EXIT_OK


def _with_lint_errors(result: Any, env: Any) -> Any:
    """The result with the errors lint still reports on the recommended config: what these changes do
    not fix is said, never left for the user to find after --write. Lint judges the file as recommend
    did: the same --flink-version and job (parallelism, slots, TaskManagers, exchanges)."""
    from flinktune.lint.model import LintOptions
    from flinktune.lint.runner import lint_errors_in_text
    from flinktune.record import replace

    job = tuple((name, env.value(name)) for name in ("parallelism", "slots", "taskmanagers", "exchanges")
                if env.value(name) is not None)
    options = LintOptions(flink_version=env.flink_version, env=job)
    return replace(result, lint_errors=tuple(lint_errors_in_text(result.new_text, result.path, options)))


def _margins(headroom: str | None) -> Any:
    """``--headroom 25%`` -> Margins(network_headroom=1.25); a bare number is refused (one unit rule)."""
    from flinktune.advise.limits import Margins
    from flinktune.cli.common import percentage

    if headroom is None:
        return None
    return Margins(network_headroom=1 + percentage(headroom, "--headroom", "25%"))


def _write(result: Any, write: bool, output: Path | None, follow_symlinks: bool,
           note: Callable[[str], None]) -> None:
    """--write: the file itself (atomic, FILE.bak); -o: the recommended config elsewhere (atomic)."""
    from flinktune.config.writer import write_file_atomic

    data = result.encode(result.new_text)
    if (write or output is not None) and result.lint_errors:
        note(f"flinktune: note: {output or result.path} still has {len(result.lint_errors)} lint error(s) "
             "that no network setting fixes (listed above)")
    if not result.changed:
        if write or output is not None:
            note("flinktune: nothing to change")
        if output is not None:
            write_file_atomic(output, data, backup_suffix=None, follow_symlinks=follow_symlinks)
        return
    if write:
        backup = write_file_atomic(result.path, data, backup_suffix=".bak", follow_symlinks=follow_symlinks)
        note(f"flinktune: wrote {result.path}" + (f" (backup {backup})" if backup else ""))
        beside = _recommendation_beside(result)
        note(f"flinktune: the recommendation applied is in {beside}: `flinktune compare BEFORE AFTER "
             f"--expected {result.path}` shows its predictions against the next run")
    elif output is not None:
        write_file_atomic(output, data, backup_suffix=None, follow_symlinks=follow_symlinks)
        note(f"flinktune: wrote the recommended config to {output}")
    if (write or output is not None) and result.manual:
        note("flinktune: note: some changes are outside the config and must be made by hand "
             "(see 'by hand' above)")


def main_fast(argv: list[str]) -> int | None:
    """Run ``flinktune recommend`` without typer when ``argv`` (after ``recommend``) is a plain,
    well-formed command line without ``--metrics``; None when typer should take it."""
    args = parse_recommend_args(argv)
    if args is None or args.metrics:
        return None
    return finish(lambda: guarded(lambda: run_recommend(args), error=error_line, stop=stopped))


def _recommendation_beside(result: Any) -> Path:
    """The JSON report of what --write applied, beside the file (FILE.recommendation.json, replaced
    at each --write), for ``compare --expected`` (docs/compare.md)."""
    from flinktune import __version__
    from flinktune.compare.expected import sidecar
    from flinktune.config.writer import write_file_atomic
    from flinktune.report.emit import How, render

    path = sidecar(Path(result.path))
    text = render("recommend", result, "json", How(inputs=tuple(result.inputs), tool_version=__version__))
    write_file_atomic(path, text.encode("utf-8"), backup_suffix=None)
    return path
