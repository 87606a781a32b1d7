"""``flinktune recommend FILE``: what the config should say, as a diff with reasons (docs/recommend.md).

Dry run by default; ``--write`` edits the file in place (atomic, ``.bak`` backup, untouched bytes
kept), ``-o FILE`` writes the recommended config elsewhere. ``--metrics`` runs the Spark analysis
(imported only then) and uses what it measured instead of assumptions.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from flinktune.cli.common import EXIT_OK, guarded

if TYPE_CHECKING:
    from flinktune.situation import Environment

_FORMATS = ("text", "json", "html")


def _load_plan(path: Path, what: str = "the plan") -> dict[str, Any]:
    from flinktune.situation.plan import read_json_object

    return read_json_object(path, what)


def _load_job_plan(path: Path) -> dict[str, Any]:
    """The plan, checked as a job graph up front so that a bad one is one line naming its file."""
    from flinktune.errors import ConfigError, FlinktuneError
    from flinktune.model.batch import check_plan

    plan = _load_plan(path)
    try:
        check_plan(plan)
    except FlinktuneError as error:
        raise ConfigError(error.message, file=str(path)) from None
    return plan


def _beside(metrics: list[str], *names: str) -> Path | None:
    """The first of ``names`` found in the folder of a metrics input."""
    for item in metrics:
        path = Path(item)
        folder = path if path.is_dir() else path.parent
        for name in names:
            if (folder / name).is_file():
                return folder / name
    return None


def _plan_beside(metrics: list[str]) -> Path | None:
    return _beside(metrics, "plan.json")


def _placement_beside(metrics: list[str]) -> Any:
    """Where each subtask ran, from `flinktune collect`'s job.json (or a REST job-vertices.json)."""
    from flinktune.model.buffers import placement_from_job_json

    path = _beside(metrics, "job.json", "job-vertices.json")
    if path is None:
        return None
    return placement_from_job_json(_load_plan(path, "the job placement"))


def recommend(
    file: Annotated[Path, typer.Argument(
        metavar="FILE", show_default=False,
        help="flink-conf.yaml, config.yaml or a FlinkDeployment manifest.")],
    flink_version: Annotated[str | None, typer.Option(
        "--flink-version", metavar="X.Y",
        help="Target Flink version; default: the profile's, the file's (a '# flinktune: flink-version=' "
             "comment, spec.flinkVersion), what its keys imply, else 1.20 (as lint).")] = None,
    rtt: Annotated[str | None, typer.Option(
        "--rtt", help="Round trip between TaskManagers, e.g. 2ms (default: 1ms, assumed, said so).")] = None,
    bandwidth: Annotated[str | None, typer.Option(
        "--bandwidth",
        help="NIC bandwidth of a TaskManager, e.g. 25Gbit/s (default: 10Gbit/s, for model numbers only).")
    ] = None,
    parallelism: Annotated[str | None, typer.Option("--parallelism", help="Job parallelism.")] = None,
    slots: Annotated[str | None, typer.Option("--slots", help="Slots per TaskManager.")] = None,
    taskmanagers: Annotated[str | None, typer.Option("--taskmanagers", help="TaskManagers.")] = None,
    exchanges: Annotated[str | None, typer.Option(
        "--exchanges", help="All-to-all exchanges in the job when no plan is given (default: a "
        "pessimistic 3, see docs/recommend.md, 'The job graph').")] = None,
    record_size: Annotated[str | None, typer.Option(
        "--record-size", help="Serialized record size, e.g. 200b (default: measured with --metrics, else "
        "unknown).")] = None,
    rate: Annotated[str | None, typer.Option(
        "--rate", help="Records per second one producer subtask emits, e.g. 60000 (default: measured "
        "with --metrics, else unknown).")] = None,
    latency_target: Annotated[str | None, typer.Option(
        "--latency-target", help="End-to-end latency target, e.g. 20ms (default: none).")] = None,
    skew: Annotated[str | None, typer.Option("--skew", help="Hottest channel's load over the mean.")] = None,
    workload: Annotated[str | None, typer.Option(
        "--workload", metavar="streaming|batch",
        help="Default: batch when execution.runtime-mode is BATCH or the plan's type is BATCH, else "
             "streaming.")] = None,
    profile: Annotated[Path | None, typer.Option(
        "--profile", metavar="FILE", help="YAML mapping of the options above (flags win).")] = None,
    metrics: Annotated[list[str] | None, typer.Option(
        "--metrics", metavar="DUMP", help="Metrics dump to analyse (repeatable; runs Spark).")] = None,
    plan: Annotated[Path | None, typer.Option(
        "--plan", metavar="FILE", help="Job plan JSON (/jobs/:jobid/plan) for the buffer demand.")] = None,
    headroom: Annotated[str | None, typer.Option(
        "--headroom", metavar="PCT",
        help="Margin of a network-memory fix above Flink's exact requirement (default 25%).")] = None,
    write: Annotated[bool, typer.Option(
        "--write", help="Apply the changes to FILE (backup FILE.bak).")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Write the recommended config (not the report: that stays on stdout) to FILE instead of "
             "editing FILE; atomic.")] = None,
    output_format: Annotated[str, typer.Option(
        "--format", "-f", help="text, json or html (one self-contained page).")] = "text",
    follow_symlinks: Annotated[bool, typer.Option(
        "--follow-symlinks", help="Let --write write through a symlink into another folder.")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress (--metrics) and no notes ('wrote ...') on stderr; errors only.")
    ] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also say on stderr which Flink version each document was judged by and "
        "why; with --metrics, show Spark's own log.")] = False,
    no_color: Annotated[bool, typer.Option(
        "--no-color", help="No ANSI colours (recommend's report never has any; accepted as in every "
        "command).")] = False,
) -> None:
    """Recommend network-stack settings for a Flink config, with the model's numbers and a diff."""

    # The report is plain text, JSON or HTML, never ANSI-coloured: --no-color has nothing to turn off.
    del no_color

    def run() -> int:
        from flinktune.errors import UsageError
        from flinktune.situation import Environment, parse_parameters, read_profile

        fmt = output_format.lower()
        if fmt not in _FORMATS:
            raise UsageError(f"--format must be text, json or html, not '{output_format}'")
        if write and output is not None:
            raise UsageError("--write and --output exclude each other")
        if fmt == "html":
            from flinktune.report.html import environment

            environment()  # the html extra, checked before any analysis runs
        flags = {"rtt": rtt, "bandwidth": bandwidth, "parallelism": parallelism, "slots": slots,
                 "taskmanagers": taskmanagers, "exchanges": exchanges, "record-size": record_size,
                 "rate": rate,
                 "latency-target": latency_target, "skew": skew, "workload": workload,
                 "flink-version": flink_version}
        env = Environment()
        if profile is not None:
            env = read_profile(profile).apply(env)
        env = env.with_values(parse_parameters(flags), "flag")
        plan_data = _load_job_plan(plan) if plan is not None else None
        if verbose and metrics:
            import os

            os.environ["FLINKTUNE_SPARK_VERBOSE"] = "1"  # as analyze -v: Spark's own log on stderr
        return _run(file, env, plan_data, plan, metrics or [], write, output, fmt, follow_symlinks,
                    margins=_margins(headroom), quiet=quiet, verbose=verbose)

    code = guarded(run)
    raise typer.Exit(code)


def _margins(headroom: str | None) -> Any:
    """``--headroom 25%`` -> Margins(network_headroom=1.25); a bare number is refused (one unit rule)."""
    from flinktune.advise.limits import Margins
    from flinktune.errors import UsageError

    if headroom is None:
        return None
    text = headroom.strip()
    try:
        if not text.endswith("%"):
            raise ValueError
        return Margins(network_headroom=1 + float(text[:-1]) / 100)
    except ValueError:
        raise UsageError(f"--headroom: '{headroom}' is not a percentage; write e.g. 25%") from None


def _run(file: Path, env: Environment, plan_data: dict[str, Any] | None, plan_path: Path | None,
         metrics: list[str], write: bool, output: Path | None, fmt: str, follow_symlinks: bool,
         margins: Any = None, quiet: bool = False, verbose: bool = False) -> int:
    from flinktune.advise.engine import recommend_text
    from flinktune.config.textio import read_text_file
    from flinktune.lint.suppress import parse_directives
    from flinktune.report.recommend import render_recommendation_json, render_recommendation_text
    from flinktune.situation import detect_version, resolve_version

    decoded = read_text_file(file)
    text = decoded.text
    _require_flink_config(text, str(file))
    directive = parse_directives(text).flink_version
    if plan_data is None and metrics:
        beside = _plan_beside(metrics)
        if beside is not None:
            plan_path, plan_data = beside, _load_job_plan(beside)

    def note(line: str) -> None:
        # --quiet: errors only; every other line on stderr is a note.
        if not quiet:
            typer.echo(line, err=True)

    said: set[tuple[str | None, str]] = set()

    def version_of(document: Any) -> Any:
        version = detect_version(document, flag=env.flink_version, directive=directive)[0]
        if verbose and (document.name, str(version)) not in said:
            # What lint -v prints in its report, here on stderr (recommend's JSON/HTML stay as they are).
            said.add((document.name, str(version)))
            found = resolve_version(document, flag=env.flink_version, directive=directive,
                                    flag_source=env.source("flink-version") or "flag")
            name = f" ({document.name})" if document.name else ""
            note(f"flinktune: {file}{name}: recommendations for Flink {version} ({found.describe()})")
        return version

    # The HTML report draws the analysis too: the analysis result is kept for it.
    analyses: list[Any] | None = [] if fmt == "html" else None

    def measured_for(document: Any, version: Any) -> Any:
        return _measure(metrics, plan_path, document, version, env, analyses, quiet) if metrics else None

    placement = _placement_beside(metrics) if metrics and plan_data is not None else None
    recs = recommend_text(text, str(file), env, version_of=version_of, measured_for=measured_for,
                          plan=plan_data, placement=placement, margins=margins)
    current = recs[-1].new_text
    if fmt == "json":
        from flinktune.cli.common import json_output

        doc = render_recommendation_json(recs)
        typer.echo(json_output("recommend", [str(file), *metrics], doc), nl=False)
    elif fmt == "html":
        from flinktune import __version__
        from flinktune.report.html import render_recommend_html

        typer.echo(render_recommend_html(recs, path=str(file), original_text=text, new_text=current,
                                         analysis=analyses[-1] if analyses else None,
                                         tool_version=__version__), nl=False)
    else:
        for i, rec in enumerate(recs):
            last = i == len(recs) - 1
            # One diff for the whole file, after the last document.
            body = render_recommendation_text(rec, diff=False)
            typer.echo(body, nl=False)
            if last:
                from flinktune.report.diff import unified_diff

                patch = unified_diff(text, current, str(file))
                if patch:
                    typer.echo("\n" + patch, nl=False)
    if current == text:
        if write or output is not None:
            note("flinktune: nothing to change")
        if output is not None:
            _write(output, decoded.encode(current), None, follow_symlinks)
        return EXIT_OK
    if write:
        backup = _write(file, decoded.encode(current), ".bak", follow_symlinks)
        note(f"flinktune: wrote {file}" + (f" (backup {backup})" if backup else ""))
    elif output is not None:
        _write(output, decoded.encode(current), None, follow_symlinks)
        note(f"flinktune: wrote the recommended config to {output}")
    if (write or output is not None) and any(r.manual for r in recs):
        note("flinktune: note: some changes are outside the config and must be made by hand "
             "(see 'by hand' above)")
    return EXIT_OK


def _write(path: Path, data: bytes, backup_suffix: str | None, follow_symlinks: bool) -> Path | None:
    from flinktune.config.writer import write_file_atomic

    return write_file_atomic(path, data, backup_suffix=backup_suffix, follow_symlinks=follow_symlinks)


def _measure(metrics: list[str], plan_path: Path | None, document: Any, version: Any,
             env: Environment, analyses: list[Any] | None = None, quiet: bool = False) -> Any:
    from flinktune.advise.measured import measure
    from flinktune.config.effective import EffectiveConfig

    eff = EffectiveConfig(document, version)
    segment = eff.memory_bytes("taskmanager.memory.segment-size") or 32 * 1024

    def progress(message: str) -> None:
        if not quiet:
            typer.echo(f"flinktune: {message}", err=True)

    from flinktune.cli.common import around_spark_run

    with around_spark_run(quiet):
        if analyses is not None:
            return _measure_keeping(metrics, plan_path, version, segment, env, progress, analyses)
        return measure(metrics, plan_path=str(plan_path) if plan_path else None, version=version,
                       segment_bytes=segment, env=env, progress=progress)


def _measure_keeping(metrics: list[str], plan_path: Path | None, version: Any, segment: int,
                     env: Environment, progress: Any, analyses: list[Any]) -> Any:
    """As advise.measured.measure, keeping the analysis (with its time series) for the HTML report."""
    from flinktune.advise.measured import measured_from_analysis
    from flinktune.analysis import AnalysisOptions, analyze

    options = AnalysisOptions(
        inputs=tuple(metrics), plan_path=str(plan_path) if plan_path else None, version=version,
        env=env, segment_bytes=segment, timeline=True,
    )
    result = analyze(options, progress=progress)
    analyses.append(result)
    return measured_from_analysis(result, segment)


def register(app: typer.Typer) -> None:
    app.command(name="recommend")(recommend)


# A Flink option key: dotted lower-case segments (Flink's ConfigOptions, e.g.
# taskmanager.memory.process.size); flattened nested config.yaml keys look the same.
_FLINK_KEY = re.compile(r"[a-z][a-z0-9-]*(\.[A-Za-z0-9_-]+)+")


def _require_flink_config(text: str, file: str) -> None:
    """Refuse, with one line, a file that is not a Flink config (a metrics CSV, a plan.json, an
    empty file): advice for it would be advice for Flink's defaults, not for the user's cluster."""
    from flinktune.config.reader import read_config_text
    from flinktune.config.types import ConfigFormat
    from flinktune.errors import ConfigError

    hint = ("give flink-conf.yaml, config.yaml or a FlinkDeployment; a metrics dump goes to --metrics, "
            "a job plan to --plan")
    if not text.strip():
        raise ConfigError(f"empty file, not a Flink config ({hint})", file=file)
    documents = read_config_text(text, file)
    for doc in documents:
        if doc.format in (ConfigFormat.DEPLOYMENT, ConfigFormat.CONFIGMAP):
            return
        if any(_FLINK_KEY.fullmatch(entry.key) for entry in doc.entries):
            return
    first = next((i for doc in documents for i in doc.issues if i.line is not None), None)
    raise ConfigError(f"not a Flink config: no Flink option like 'taskmanager.numberOfTaskSlots: 2' "
                      f"in it ({hint})", file=file, line=first.line if first else None)
