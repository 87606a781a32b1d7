"""``flinktune recommend FILE``: every configuration in one file, as the command judges it.

``recommend_file`` reads the file (refusing what is not a Flink config), settles each document's
version, measures the dump when ``--metrics`` is given (Spark, imported only then; a ``plan.json``
and ``job.json`` beside the dump are used), and returns a ``RecommendResult``: the
recommendations, the file's text before and after, and how to encode it back (``--write``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinktune.advise.change import Recommendation
from flinktune.advise.limits import Margins
from flinktune.advise.measured import Measured
from flinktune.situation.environment import Environment


@dataclass(frozen=True)
class RecommendResult:
    """What ``recommend`` says about one file (its documents in order)."""

    path: str
    recommendations: tuple[Recommendation, ...]
    original_text: str
    new_text: str                         # with every change that may be written (manual ones never are)
    encode: Callable[[str], bytes]        # text -> bytes in the file's own encoding and byte-order mark
    inputs: tuple[str, ...] = ()          # the file and the metrics dumps read
    # The errors lint reports for new_text: what these changes do not fix (the command adds them,
    # flinktune.lint.runner.lint_errors_in_text); findings.Finding values.
    lint_errors: tuple[Any, ...] = ()

    @property
    def changed(self) -> bool:
        return self.new_text != self.original_text

    @property
    def manual(self) -> bool:
        """Some change is outside what the writer edits and must be made by hand."""
        return any(r.manual for r in self.recommendations)

    @property
    def analysis(self) -> Any:
        """The last analysis of the dump with its time series (kept when asked for), else None."""
        kept = [r.measured.analysis for r in self.recommendations
                if r.measured is not None and r.measured.analysis is not None]
        return kept[-1] if kept else None


def recommend_file(path: Path, env: Environment, *, plan: Path | None = None, metrics: Sequence[str] = (),
                   margins: Margins | None = None, timeline: bool = False, spark_log: bool = False,
                   progress: Callable[[str], None] | None = None,
                   explain: Callable[[str], None] | None = None, scaling: Any = None) -> RecommendResult:
    """Recommend for every configuration in ``path``.

    ``plan``: the job plan (else ``plan.json`` beside the metrics); ``timeline``: keep the
    analysis's time series (an HTML report draws them); ``progress``: the measurement's stages;
    ``explain``: one line per document on which Flink version it was judged by and why;
    ``scaling``: flinktune.analysis.parallelism.ScalingOptions (``--target-rate``,
    ``--target-utilization``), completed per document with ``--rate`` and ``pipeline.max-parallelism``."""
    from flinktune.advise.engine import recommend_text
    from flinktune.config.textio import read_text_file
    from flinktune.situation import detect_version, resolve_version
    from flinktune.situation.version import version_directive

    plan_data = load_job_plan(plan) if plan is not None else None
    decoded = read_text_file(path)
    text = decoded.text
    _require_flink_config(text, str(path))
    stated = version_directive(text)           # '# flinktune: flink-version=X', as lint reads it
    directive = stated[0] if stated else None
    plan_path = plan
    if plan_data is None and metrics:
        beside = _beside(metrics, "plan.json")
        if beside is not None:
            plan_path, plan_data = beside, load_job_plan(beside)
    said: set[tuple[str | None, str]] = set()

    def version_of(document: Any) -> Any:
        version = detect_version(document, flag=env.flink_version, directive=directive)[0]
        if explain is not None and (document.name, str(version)) not in said:
            # What lint -v prints in its report (recommend's JSON/HTML stay as they are).
            said.add((document.name, str(version)))
            found = resolve_version(document, flag=env.flink_version, directive=directive,
                                    flag_source=env.source("flink-version") or "flag")
            name = f" ({document.name})" if document.name else ""
            explain(f"flinktune: {path}{name}: recommendations for Flink {version} ({found.describe()})")
        return version

    def measured_for(document: Any, version: Any) -> Measured | None:
        if not metrics:
            return None
        from flinktune.advise.measured import measure
        from flinktune.config.effective import EffectiveConfig

        eff = EffectiveConfig(document, version)
        segment = eff.memory_bytes("taskmanager.memory.segment-size")
        return measure(metrics, plan_path=str(plan_path) if plan_path else None, version=version,
                       segment_bytes=segment or 32 * 1024, env=env, progress=progress, timeline=timeline,
                       spark_log=spark_log, scaling=scaling_for(scaling, env, eff))

    placement = _placement_beside(metrics) if metrics and plan_data is not None else None
    recs = recommend_text(text, str(path), env, version_of=version_of, measured_for=measured_for,
                          plan=plan_data, placement=placement, margins=margins)
    return RecommendResult(str(path), tuple(recs), text, recs[-1].new_text, decoded.encode,
                           (str(path), *metrics))


def scaling_for(scaling: Any, env: Environment, eff: Any) -> Any:
    """The ScalingOptions for one document: the flags', with ``--rate`` when stated (flag or profile)
    and the max parallelism the file sets (``pipeline.max-parallelism``)."""
    from flinktune.analysis.parallelism import ScalingOptions
    from flinktune.errors import FlinktuneError
    from flinktune.record import replace

    stated = env.rate_per_subtask if env.source("rate") in ("flag", "profile") else None
    try:
        limit = eff.integer("pipeline.max-parallelism") if eff.is_set("pipeline.max-parallelism") else None
    except FlinktuneError:
        limit = None     # a value Flink refuses is lint's to report
    return replace(scaling or ScalingOptions(), rate_per_subtask=stated,
                   max_parallelism=limit if limit and limit > 0 else None)


def load_job_plan(path: Path) -> dict[str, Any]:
    """The plan, checked as a job graph up front so that a bad one is one line naming its file."""
    from flinktune.errors import ConfigError, FlinktuneError
    from flinktune.model.batch import check_plan
    from flinktune.situation.plan import read_json_object

    plan = read_json_object(path)
    try:
        check_plan(plan)
    except FlinktuneError as error:
        raise ConfigError(error.message, file=str(path)) from None
    return plan


def _beside(metrics: Sequence[str], *names: str) -> Path | None:
    """The first of ``names`` found in the folder of a metrics input."""
    for item in metrics:
        path = Path(item)
        folder = path if path.is_dir() else path.parent
        for name in names:
            if (folder / name).is_file():
                return folder / name
    return None


def _placement_beside(metrics: Sequence[str]) -> Any:
    """Where each subtask ran, from `flinktune collect`'s job.json (or a REST job-vertices.json)."""
    from flinktune.model.buffers import placement_from_job_json
    from flinktune.situation.plan import read_json_object

    path = _beside(metrics, "job.json", "job-vertices.json")
    if path is None:
        return None
    return placement_from_job_json(read_json_object(path, "the job placement"))


# A Flink option key: dotted lower-case segments (Flink's ConfigOptions, e.g.
# taskmanager.memory.process.size); flattened nested config.yaml keys look the same.
_FLINK_KEY = re.compile(r"[a-z][a-z0-9-]*(\.[A-Za-z0-9_-]+)+")


_DEPLOYMENT_FILES = {"compose": "a docker-compose file", "dockerfile": "a Dockerfile",
                     "helm": "a Helm chart's values or template"}


def _require_flink_config(text: str, file: str) -> None:
    """Refuse, with one line, a file that is not a Flink config (a metrics CSV, a plan.json, an
    empty file): advice for it would be advice for Flink's defaults, not for the user's cluster."""
    from flinktune.config.reader import NO_OPTION, holds_no_option, read_config_text
    from flinktune.config.types import ConfigFormat
    from flinktune.errors import ConfigError

    hint = ("give flink-conf.yaml, config.yaml or a FlinkDeployment; a metrics dump goes to --metrics, "
            "a job plan to --plan")
    from flinktune.deployment.readers import recognise

    # A compose file's or a manifest's flattened keys (services.jobmanager.image) look like options.
    kind = recognise(file, text[:4096])
    if kind in _DEPLOYMENT_FILES:
        raise ConfigError(f"{_DEPLOYMENT_FILES[kind]}, not a Flink config: recommend tunes the config file "
                          "the deployment runs with (flink-conf.yaml, config.yaml or a FlinkDeployment), and "
                          "`flinktune lint` on the folder checks the deployment around it", file=file)
    documents = read_config_text(text, file)
    if holds_no_option(documents):
        raise ConfigError(f"{NO_OPTION}, not a Flink config ({hint})", file=file)
    for doc in documents:
        if doc.format in (ConfigFormat.DEPLOYMENT, ConfigFormat.CONFIGMAP):
            return
        if kind is None and any(_FLINK_KEY.fullmatch(entry.key) for entry in doc.entries):
            return
    if kind is not None:
        raise ConfigError(f"a Kubernetes manifest with neither a FlinkDeployment nor a ConfigMap holding "
                          f"flink-conf.yaml or config.yaml, not a Flink config ({hint})", file=file)
    first = next((i for doc in documents for i in doc.issues if i.line is not None), None)
    raise ConfigError(f"not a Flink config: no Flink option like 'taskmanager.numberOfTaskSlots: 2' "
                      f"in it ({hint})", file=file, line=first.line if first else None)
