"""The flags commands share, declared once so they mean the same everywhere.

``-f/--format`` (its choices are the command's reports, flinktune.report.emit), ``-o/--output`` (the
report into a file), ``-q/--quiet``, ``-v/--verbose``, ``--no-color``, ``--flink-version`` and
``--profile``. A command takes one as ``quiet: Annotated[bool, Quiet()] = False``; where a flag's
effect depends on the command (what ``-v`` adds, where the version comes from by default), the
command says only that part.
"""

from __future__ import annotations

from typing import Any

import typer

# Functions named like the flags they declare (Format, Output, ...), used as types are in Annotated.


def Format(command: str) -> Any:
    from flinktune.report.emit import choices_text, formats

    names = formats(command)
    auto = " (auto: github under GitHub Actions, else text)" if "auto" in names else ""
    html = "; html is one self-contained page" if "html" in names else ""
    return typer.Option("--format", "-f", metavar="FORMAT",
                        help=f"The report: {choices_text(command)}{auto}{html}.")


def Output(*aliases: str) -> Any:
    return typer.Option("--output", "-o", *aliases, metavar="FILE",
                        help="Write the report to FILE instead of stdout (atomically; a previous FILE is "
                             "kept as FILE.bak).")


def Quiet() -> Any:
    return typer.Option("--quiet", "-q", help="No progress and no notes on stderr; errors only.")


def Verbose(adds: str) -> Any:
    return typer.Option("--verbose", "-v", help=f"Say more: {adds}")


def NoColor() -> Any:
    return typer.Option("--no-color", help="No ANSI colours in the report or on stderr (also: NO_COLOR set; "
                                           "never when the output is not a terminal).")


def FlinkVersion(default: str) -> Any:
    return typer.Option("--flink-version", metavar="X.Y", help=f"Target Flink version; default: {default}.")


def Profile(what: str) -> Any:
    return typer.Option("--profile", metavar="FILE", help=f"YAML mapping of {what} (flags win).")


# The Spark commands' flags (analyze, compare): where the analysis runs, and its progress display.


def Master() -> Any:
    return typer.Option("--master", help="Spark master: local[*] (embedded), spark://host:port, yarn, k8s://...")


def SparkConf() -> Any:
    return typer.Option("--conf", metavar="KEY=VALUE",
                        help="Extra Spark setting (repeatable); overrides the tuned defaults.")


def NoProgress() -> Any:
    return typer.Option("--no-progress", help="No progress display on stderr.")
