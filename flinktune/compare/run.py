"""``compare``'s library entry: both runs analysed in one Spark session, then judged (judge.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flinktune.analysis import checkpoints as ckpt
from flinktune.analysis.job import AnalysisOptions, AnalysisResult, analyze_all, run_analysis
from flinktune.analysis.plan import find_plan_beside
from flinktune.compare.judge import Run, compare_runs
from flinktune.compare.value import Comparison
from flinktune.errors import UsageError
from flinktune.record import replace
from flinktune.situation.environment import Environment
from flinktune.versions import DEFAULT_VERSION, FlinkVersion


@dataclass(frozen=True)
class CompareOptions:
    before: tuple[str, ...]
    after: tuple[str, ...]
    before_plan: str | None = None
    after_plan: str | None = None
    before_job: str | None = None  # id or name; None: the side's only job
    after_job: str | None = None
    warmup: str = "10%"
    confidence: float = 0.95  # family-wise, over every figure judged
    expected: str | None = None  # a recommendation's JSON (or the config recommend --write wrote)
    env: Environment = field(default_factory=Environment)
    segment_bytes: int = 32 * 1024
    version: FlinkVersion = DEFAULT_VERSION

    def __post_init__(self) -> None:
        if not 0.5 <= self.confidence < 1.0:
            raise UsageError(f"--confidence must be at least 50% and below 100%, not {self.confidence:.4g}")


def _analysis(
    options: CompareOptions, inputs: tuple[str, ...], plan: str | None, job: str | None
) -> AnalysisOptions:
    return AnalysisOptions(
        inputs=inputs,
        plan_path=plan,
        job=job,
        warmup=options.warmup,
        env=options.env,
        segment_bytes=options.segment_bytes,
        version=options.version,
        windows=True,
    )


def _run(label: str, result: AnalysisResult, inputs: tuple[str, ...], job: str | None) -> Run:
    if not result.jobs:
        raise UsageError(f"{label.upper()} holds no job the analysis could read", file=inputs[0])
    if len(result.jobs) > 1:
        listed = ", ".join(
            f"{j.job_name or j.job_key}" + (f" ({j.job_id})" if j.job_id and j.job_name else "")
            for j in result.jobs[:10]
        )
        raise UsageError(
            f"{label.upper()} holds {len(result.jobs)} jobs ({listed}); choose one with "
            f"--{label}-job or --job",
            file=inputs[0],
        )
    diag = result.jobs[0]
    found = ckpt.find_beside(list(inputs))
    log = ckpt.read(found) if found is not None else None
    if log is not None and log.job_id and diag.job_id and log.job_id != diag.job_id:
        log = None  # another job's checkpoints beside this dump
    return Run(
        label,
        inputs,
        diag,
        result.windows.get(diag.job_key),
        log,
        result.plan,
        result.plan_file,
        str(found) if log is not None else None,
    )


def compare(
    options: CompareOptions,
    master: str = "local[*]",
    conf: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
    session: Any = None,
    spark_log: bool = False,
) -> Comparison:
    """Analyse BEFORE and AFTER (one Spark session, the analysis ``analyze`` runs, warm-up skipped on
    both) and compare them. ``session``: a Spark session to use instead of starting one."""
    from flinktune.compare import expected as exp

    recommendation = exp.read_expected(options.expected) if options.expected else None
    say = progress or (lambda _msg: None)
    plans = (options.before_plan or _beside(options.before), options.after_plan or _beside(options.after))
    runs = [
        _analysis(options, options.before, plans[0], options.before_job),
        _analysis(options, options.after, plans[1], options.after_job),
    ]
    if session is not None:
        results = [run_analysis(session, run, progress) for run in runs]
    else:
        results = analyze_all(runs, master, conf, progress, spark_log)
    say("comparing")
    before = _run("before", results[0], options.before, options.before_job)
    after = _run("after", results[1], options.after, options.after_job)
    pair = (lambda job: exp.predictions(recommendation, job)) if recommendation is not None else None
    comparison = compare_runs(before, after, options.confidence, pair)
    if options.expected:
        comparison = replace(comparison, notes=(*comparison.notes, f"predictions from {options.expected}"))
    return comparison


def _beside(inputs: tuple[str, ...]) -> str | None:
    found = find_plan_beside(list(inputs))
    return str(found) if found else None
