"""``flinktune recommend FILE``: what the config should say, as a diff with reasons (docs/recommend.md).

Dry run by default; ``--write`` edits the file in place (atomic, ``.bak`` backup, untouched bytes
kept), ``-o FILE`` writes the recommended config elsewhere. ``--metrics`` runs the Spark analysis
(imported only then) and uses what it measured instead of assumptions.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from flinktune.cli.common import EXIT_OK, guarded

if TYPE_CHECKING:
    from flinktune.advise import Environment

_FORMATS = ("text", "json")


def _load_plan(path: Path, what: str = "the plan") -> dict[str, Any]:
    from flinktune.config.safe_load import load_json
    from flinktune.errors import ConfigError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read {what}: {error.strerror or error}", file=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} is not JSON: not UTF-8 text", file=str(path)) from None
    data = load_json(text, file=str(path), prefix=f"{what} is not JSON")
    if not isinstance(data, dict):
        raise ConfigError(f"{what} must be a JSON object", file=str(path))
    return data


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
        help="Target Flink version; default: the profile, the file (spec.flinkVersion, a "
             "'# flinktune: flink-version=' comment), else 1.20.")] = None,
    rtt: Annotated[str | None, typer.Option("--rtt", help="Round trip between TaskManagers (1ms).")] = None,
    bandwidth: Annotated[str | None, typer.Option(
        "--bandwidth", help="NIC bandwidth of a TaskManager (10Gbit/s).")] = None,
    parallelism: Annotated[str | None, typer.Option("--parallelism", help="Job parallelism.")] = None,
    slots: Annotated[str | None, typer.Option("--slots", help="Slots per TaskManager.")] = None,
    taskmanagers: Annotated[str | None, typer.Option("--taskmanagers", help="TaskManagers.")] = None,
    exchanges: Annotated[str | None, typer.Option(
        "--exchanges", help="All-to-all exchanges in the job when no plan is given (default 1).")] = None,
    record_size: Annotated[str | None, typer.Option(
        "--record-size", help="Serialized record size (200b).")] = None,
    rate: Annotated[str | None, typer.Option(
        "--rate", help="Records per second one producer subtask emits.")] = None,
    latency_target: Annotated[str | None, typer.Option(
        "--latency-target", help="End-to-end latency target (20ms).")] = None,
    skew: Annotated[str | None, typer.Option("--skew", help="Hottest channel's load over the mean.")] = None,
    workload: Annotated[str | None, typer.Option(
        "--workload", metavar="streaming|batch", help="Default: from execution.runtime-mode.")] = None,
    profile: Annotated[Path | None, typer.Option(
        "--profile", metavar="FILE", help="YAML mapping of the options above (flags win).")] = None,
    metrics: Annotated[list[str] | None, typer.Option(
        "--metrics", metavar="DUMP", help="Metrics dump to analyse (repeatable; runs Spark).")] = None,
    plan: Annotated[Path | None, typer.Option(
        "--plan", metavar="FILE", help="Job plan JSON (/jobs/:jobid/plan) for the buffer demand.")] = None,
    write: Annotated[bool, typer.Option(
        "--write", help="Apply the changes to FILE (backup FILE.bak).")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", help="Write the recommended config to FILE instead.")] = None,
    output_format: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    follow_symlinks: Annotated[bool, typer.Option(
        "--follow-symlinks", help="Let --write write through a symlink into another folder.")] = False,
) -> None:
    """Recommend network-stack settings for a Flink config, with the model's numbers and a diff."""

    def run() -> int:
        from flinktune.advise import Environment, parse_parameters
        from flinktune.advise.environment import load_profile
        from flinktune.errors import UsageError

        fmt = output_format.lower()
        if fmt not in _FORMATS:
            raise UsageError(f"--format must be text or json, not '{output_format}'")
        if write and output is not None:
            raise UsageError("--write and --output exclude each other")
        flags = {"rtt": rtt, "bandwidth": bandwidth, "parallelism": parallelism, "slots": slots,
                 "taskmanagers": taskmanagers, "exchanges": exchanges, "record-size": record_size,
                 "rate": rate,
                 "latency-target": latency_target, "skew": skew, "workload": workload,
                 "flink-version": flink_version}
        env = Environment()
        if profile is not None:
            env = env.with_values(load_profile(profile), "profile")
        env = env.with_values(parse_parameters(flags), "flag")
        plan_data = _load_plan(plan) if plan is not None else None
        return _run(file, env, plan_data, plan, metrics or [], write, output, fmt, follow_symlinks)

    code = guarded(run)
    raise typer.Exit(code)


def _run(file: Path, env: Environment, plan_data: dict[str, Any] | None, plan_path: Path | None,
         metrics: list[str], write: bool, output: Path | None, fmt: str, follow_symlinks: bool) -> int:
    from flinktune.advise.engine import recommend_text
    from flinktune.config.textio import read_text_file
    from flinktune.lint.suppress import parse_directives
    from flinktune.lint.versioning import detect_version
    from flinktune.report.recommend import render_recommendation_json, render_recommendation_text

    decoded = read_text_file(file)
    text = decoded.text
    directive = parse_directives(text).flink_version
    if plan_data is None and metrics:
        beside = _plan_beside(metrics)
        if beside is not None:
            plan_path, plan_data = beside, _load_plan(beside)

    def version_of(document: Any) -> Any:
        return detect_version(document, flag=env.flink_version, directive=directive)[0]

    def measured_for(document: Any, version: Any) -> Any:
        return _measure(metrics, plan_path, document, version, env) if metrics else None

    placement = _placement_beside(metrics) if metrics and plan_data is not None else None
    recs = recommend_text(text, str(file), env, version_of=version_of, measured_for=measured_for,
                          plan=plan_data, placement=placement)
    current = recs[-1].new_text
    if fmt == "json":
        typer.echo(render_recommendation_json(recs), nl=False)
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
            typer.echo("flinktune: nothing to change", err=True)
        if output is not None:
            _write(output, decoded.encode(current), None, follow_symlinks)
        return EXIT_OK
    if write:
        backup = _write(file, decoded.encode(current), ".bak", follow_symlinks)
        typer.echo(f"flinktune: wrote {file}" + (f" (backup {backup})" if backup else ""), err=True)
    elif output is not None:
        _write(output, decoded.encode(current), None, follow_symlinks)
        typer.echo(f"flinktune: wrote the recommended config to {output}", err=True)
    if (write or output is not None) and any(c.action == "manual" for r in recs for c in r.changes):
        typer.echo("flinktune: note: some changes are outside the config and must be made by hand "
                   "(see 'by hand' above)", err=True)
    return EXIT_OK


def _write(path: Path, data: bytes, backup_suffix: str | None, follow_symlinks: bool) -> Path | None:
    from flinktune.config.writer import write_file_atomic

    return write_file_atomic(path, data, backup_suffix=backup_suffix, follow_symlinks=follow_symlinks)


def _measure(metrics: list[str], plan_path: Path | None, document: Any, version: Any,
             env: Environment) -> Any:
    from flinktune.advise.measured import measure
    from flinktune.config.effective import EffectiveConfig

    eff = EffectiveConfig(document, version)
    slots = env.slots or eff.integer("taskmanager.numberOfTaskSlots") or 1
    segment = eff.memory_bytes("taskmanager.memory.segment-size") or 32 * 1024

    def progress(message: str) -> None:
        typer.echo(f"flinktune: {message}", err=True)

    return measure(metrics, plan_path=str(plan_path) if plan_path else None, version=version, slots=slots,
                   segment_bytes=segment, rtt_s=env.rtt_s, bandwidth_bytes_per_s=env.bandwidth_bytes_per_s,
                   progress=progress)


def register(app: typer.Typer) -> None:
    app.command(name="recommend")(recommend)
