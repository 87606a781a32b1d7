"""``recommend``: from a config, the environment and (optionally) measurements to a coherent set of
config changes, each with its reason, the evidence that justifies it and its effect in model numbers.

The planner is a list of steps (flinktune.advise.steps, one module per recommendation, in a declared
order) run by one loop (flinktune.advise.loop) on a working copy of the file's values. Principles
(docs/recommend.md): a setting moves away from Flink's default only on a measured or stated fact that
names it; the job graph is an input (plan, or a stated bound), never a guess; fixes carry headroom;
absurd values are reset, not accommodated; no memory size above the ceiling; causes buffers cannot
fix are said plainly. Each step accepts the current value inside a tolerance band and proposes a
value well inside it, so running ``recommend`` on its own output proposes nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from flinktune.advise.change import Effect, ProposedChange, Recommendation
from flinktune.advise.job import resolve_job
from flinktune.advise.limits import IN_POOL_HELD, Margins
from flinktune.advise.loop import run
from flinktune.advise.measured import NOT_NETWORK, Measured
from flinktune.advise.plan import Evidence, Plan
from flinktune.advise.predict import barrier_wait_s
from flinktune.advise.state import KEY_PROCESS
from flinktune.advise.steps import ORDER
from flinktune.advise.text import mem_value, rate_text
from flinktune.change import writable
from flinktune.config.catalog import Catalog, load_catalog
from flinktune.config.types import ConfigDocument, ConfigValue
from flinktune.config.writer import apply_changes
from flinktune.errors import ModelInputError
from flinktune.model import buffers as mb
from flinktune.model.operator_memory import operator_comparison
from flinktune.record import replace
from flinktune.releases import BUFFERS_FIXED
from flinktune.situation import Environment, Situation, Sourced, resolve_situation
from flinktune.situation.resolve import shows_complete
from flinktune.versions import FlinkVersion


def _cause_notes(plan: Plan) -> None:
    """What buffers cannot fix, said plainly (before any change is judged)."""
    m = plan.measured
    if m is None:
        return
    if m.cause in NOT_NETWORK:
        plan.notes.append(f"Back pressure starts at {m.origin or 'a task'}: {NOT_NETWORK[m.cause]}. Buffer "
                          "tuning will not fix it (network memory is still checked so that the job can "
                          "start).")
    elif plan.link_saturated or m.cause == "network_bottleneck":
        load = (f" (measured {rate_text(m.remote_in_bytes_per_s)} received by the busiest TaskManager, "
                f"{m.remote_in_bytes_per_s / plan.job.bandwidth_bytes_per_s:.0%} of the "
                f"{rate_text(plan.job.bandwidth_bytes_per_s)} given with --bandwidth)"
                if m.remote_in_bytes_per_s and plan.evidence.bandwidth else "")
        plan.notes.append(f"Back pressure starts at {m.origin or 'an exchange'}: the link is "
                          f"saturated{load}; "
                          "buffer tuning will not help. More credits cannot carry more than the link: fewer "
                          "remote channels (more slots per TaskManager), less data (compression, smaller "
                          "records) or a faster link can.")


class Started(NamedTuple):
    """What recommend() starts from: the plan, and the situation and environment it was made from."""

    plan: Plan
    situation: Situation
    environment: Environment
    assumptions: tuple[Any, ...]


def start_plan(document: ConfigDocument, text: str, version: FlinkVersion, env: Environment | None = None, *,
               measured: Measured | None = None, plan: dict[str, Any] | None = None,
               placement: mb.Placement | None = None, catalog: Catalog | None = None,
               margins: Margins | None = None, situation: Situation | None = None) -> Started:
    """The planner's working copy before any step ran: the situation resolved, the job and the evidence
    worked out (recommend() runs the steps on it; a test runs one step on it)."""
    catalog = catalog or load_catalog()
    env = env or Environment()
    if situation is None:
        situation = resolve_situation(document, text=text, environment=env, plan=plan, placement=placement,
                                      measured=measured, catalog=catalog)
    if situation.flink_version != version:
        situation = replace(situation, version=Sourced(version, "flag"))
    measured = measured if measured is not None else situation.measured
    spec = situation.spec
    overlay: dict[str, ConfigValue] = {}
    if spec.taskmanager_memory_bytes is not None:
        overlay[KEY_PROCESS] = mem_value(spec.taskmanager_memory_bytes)
    job, resolved_env, assumptions = resolve_job(situation, measured)
    evidence = Evidence.of(resolved_env, measured, job)
    work = Plan(document, version, catalog, job, spec, measured, evidence, margins or Margins(), overlay,
                graph_stated=job.exchanges_source != "default",
                parallelism_source=situation.parallelism.source, job_sources=dict(resolved_env.sources))
    return Started(work, situation, resolved_env, tuple(assumptions))


def recommend(document: ConfigDocument, text: str, version: FlinkVersion, env: Environment | None = None, *,
              measured: Measured | None = None, plan: dict[str, Any] | None = None,
              placement: mb.Placement | None = None, catalog: Catalog | None = None,
              margins: Margins | None = None, situation: Situation | None = None) -> Recommendation:
    """A coherent, version-aware set of changes for ``document`` (read from ``text``).

    ``situation``: the resolved Situation (flinktune.situation); resolved here from the other
    arguments when not given. ``version`` is the version the caller settled on."""
    work, situation, resolved_env, assumptions = start_plan(
        document, text, version, env, measured=measured, plan=plan, placement=placement, catalog=catalog,
        margins=margins, situation=situation)
    job, measured = work.job, work.measured
    _cause_notes(work)
    if BUFFERS_FIXED.applies(version):
        work.notes.append(f"Flink {version} removed buffers-per-channel (fixed 2), floating-buffers-per-gate "
                          "(8), "
                          "max-buffers-per-channel (10) and max-overdraft-buffers-per-gate (20): buffer "
                          "advice is "
                          "given through network memory, segment size, buffer timeout and debloating "
                          "instead.")
    original = work.original
    original_memory, original_error = original.memory_or_error()
    original_fit = original_minimum_fit = None
    try:
        if original_memory is not None:
            original_fit = original.fit(original_memory.network_buffers)
            if (not original_fit.fits and job.graph is None and job.exchanges_source == "default"
                    and job.exchanges > 1):
                # Only the pessimistic default bound was judged: one all-to-all exchange (what any job
                # with a keyBy needs) tells "fails for sure" from "fails at the bound".
                one = replace(original, job=replace(job, exchanges=1))
                original_minimum_fit = one.fit(original_memory.network_buffers)
    except ModelInputError as error:       # buffer values Flink refuses: absurd-values replaces them
        original_error = error.message
    changes = run(work, ORDER)
    final = work.sized     # the job as it will run: rescaled when the parallelism step rescaled it
    final_memory, final_error = final.memory_or_error()
    final_demand = final.demand
    final_fit = final.fit(final_memory.network_buffers) if final_memory is not None else None
    # --write is the user's opt-in to changes that alter what Flink runs with; manual ones are shown only.
    new_text = apply_changes(text, document, writable(changes, unsafe=True))
    # The prediction assumes full queues; it is made only where the dump shows the gates holding data.
    held = (measured is not None and measured.in_pool_usage is not None
            and measured.in_pool_usage >= IN_POOL_HELD)
    chain = measured.backpressured_exchanges if measured is not None and held else 0
    fill = measured.buffer_fill if measured is not None and measured.buffer_fill else 1.0
    # The measured back pressure is that of the job as it ran: its barrier wait, before and after the
    # settings (a rescale is sized to end it; its effect is measured on the rerun, not predicted here).
    wait = ((barrier_wait_s(original, chain, fill), barrier_wait_s(work.current, chain, fill)) if chain
            else (None, None))
    return Recommendation(
        path=document.path, format=document.format, name=document.name, version=version, job=job,
        environment=resolved_env, changes=tuple(changes), notes=tuple(work.notes), measured=measured,
        before=original.snapshot(), after=final.snapshot(), demand_assumption=final_demand.assumption,
        original_fit=original_fit, original_minimum_fit=original_minimum_fit,
        original_memory_error=original_error, final_fit=final_fit,
        final_memory_error=final_error, original_text=text, new_text=new_text, assumptions=tuple(assumptions),
        withheld=tuple(work.withheld), barrier_wait_s=wait, operator_network=operator_comparison(situation),
        complete=shows_complete(situation.document, situation.completeness),
    )


def recommend_text(text: str, path: str, env: Environment | None, *,
                   version_of: Callable[[ConfigDocument], FlinkVersion],
                   measured_for: Callable[[ConfigDocument, FlinkVersion], Measured | None] | None = None,
                   plan: dict[str, Any] | None = None, catalog: Catalog | None = None,
                   placement: mb.Placement | None = None, margins: Margins | None = None
                   ) -> list[Recommendation]:
    """Every Flink configuration in a file's ``text``, one after the other: each document is re-read
    from the text the previous one's edits produced, so the last ``new_text`` holds all changes."""
    from flinktune.config.reader import read_config_text
    from flinktune.errors import ConfigError

    catalog = catalog or load_catalog()
    count = len(read_config_text(text, path))
    if count == 0:
        raise ConfigError("holds no Flink configuration (no FlinkDeployment, ConfigMap or config keys)",
                          file=path)
    out: list[Recommendation] = []
    current = text
    for index in range(count):
        document = read_config_text(current, path)[index]
        version = version_of(document)
        measured = measured_for(document, version) if measured_for is not None else None
        rec = recommend(document, current, version, env, measured=measured, plan=plan, catalog=catalog,
                        placement=placement, margins=margins)
        out.append(rec)
        current = rec.new_text
    return out


__all__ = ["Effect", "ProposedChange", "Recommendation", "recommend", "recommend_text", "resolve_job"]
