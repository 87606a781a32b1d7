"""Two analysed runs of one job -> a Comparison: every figure with its interval and verdict.

Pure: takes what the analysis returned for each side (the diagnosis and the per-window figures,
analysis/windows.py) and the checkpoints read beside each dump; the statistics are in stats.py and
the figures in figures.py. docs/compare.md describes the method for users.

Over 500 lines: every figure compare judges (job and vertex, rates, time shares, checkpoints) with
its interval, in one place so they are judged alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from flinktune.analysis.checkpoints import CheckpointLog
from flinktune.analysis.diagnose import JobDiagnosis, job_status
from flinktune.analysis.plan import JobPlan
from flinktune.analysis.windows import JobWindows, VertexWindows
from flinktune.compare import figures as fg
from flinktune.compare import stats
from flinktune.compare.figures import Figure
from flinktune.compare.match import Matching, match_vertices
from flinktune.compare.value import (
    Comparison,
    FigureChange,
    Prediction,
    SeriesPair,
    SideInfo,
    VertexComparison,
)

NOTE_FEW = "too few samples for an interval"
NOTE_WIDE = "interval too wide to judge"

# A figure needs this many windows on each side to be judged (two batches of two), or this many
# checkpoints: checkpoints are separate events, not readings of a refreshed counter (stats.MIN_BATCH).
MIN_SAMPLES = 4
MIN_CHECKPOINTS = 3


@dataclass(frozen=True, eq=False)
class Run:
    """One side: the job the analysis found (one job), its windows and its checkpoints."""

    label: str
    inputs: tuple[str, ...]
    job: JobDiagnosis
    windows: JobWindows | None
    checkpoints: CheckpointLog | None = None
    plan: JobPlan | None = None
    plan_file: str | None = None
    checkpoints_file: str | None = None


@dataclass(eq=False)
class _Candidate:
    """One figure to judge: each side's window values (or a per-batch function for skew)."""

    figure: Figure
    scope: str  # "job" or the after side's vertex key
    before: np.ndarray
    after: np.ndarray
    # For skew: windows -> one value per batch (the values above are then the windows' validity).
    per_batch: tuple[Callable[[slice], float], Callable[[slice], float]] | None = None
    label: str = ""
    shown: tuple[float | None, float | None] = (None, None)
    sides: tuple[stats.Side | None, stats.Side | None] = (None, None)
    extra: dict[str, object] = field(default_factory=dict)


def _values(vw: VertexWindows | None, series: str, n: int) -> np.ndarray:
    if vw is None or series not in vw.values:
        return np.full(n, np.nan)
    return np.asarray(vw.values[series], dtype=np.float64)


def _is_source(before: VertexWindows | None, after: VertexWindows | None) -> bool:
    """A vertex that takes no records in and sends records out (on both sides)."""

    def quiet_in(vw: VertexWindows | None) -> bool:
        if vw is None:
            return True
        x = vw.values.get("records_in_per_s")
        y = vw.values.get("records_out_per_s")
        got_in = x is not None and bool(np.nansum(np.nan_to_num(x)) > 0)
        got_out = y is not None and bool(np.nansum(np.nan_to_num(y)) > 0)
        return not got_in and got_out

    return quiet_in(before) and quiet_in(after)


def _sinks(job: JobDiagnosis, plan: JobPlan | None, windows: JobWindows) -> tuple[list[str], str]:
    """The vertices whose records make the job's throughput, and which rate to read: the sinks'
    records in (the sinks: vertices nothing consumes in the plan, else those that send no records),
    else the sources' records out (vertices that take none in)."""
    keys = [v.vertex_key for v in job.vertices if v.vertex_key in windows.vertices]
    if plan is not None and job.has_plan:
        consumed = {u for k in keys for u in plan.upstream(k)}
        found = [k for k in keys if k not in consumed]
        if found:
            return found, "records_in_per_s"

    def sends_nothing(key: str, series: str) -> bool:
        y = windows.vertices[key].values.get(series)
        return y is None or not np.nansum(np.nan_to_num(y)) > 0

    sinks = [
        k for k in keys if sends_nothing(k, "records_out_per_s") and not sends_nothing(k, "records_in_per_s")
    ]
    if sinks:
        return sinks, "records_in_per_s"
    return [k for k in keys if sends_nothing(k, "records_in_per_s")], "records_out_per_s"


def _sum_rows(rows: Sequence[np.ndarray], n: int) -> np.ndarray:
    if not rows:
        return np.full(n, np.nan)
    stacked = np.vstack(rows)
    return np.where(np.isnan(stacked).any(axis=0), np.nan, np.nansum(stacked, axis=0))


def _max_rows(rows: Sequence[np.ndarray], n: int) -> np.ndarray:
    if not rows:
        return np.full(n, np.nan)
    stacked = np.vstack(rows)
    present = ~np.isnan(stacked)
    return np.where(present.any(axis=0), np.where(present, stacked, -np.inf).max(axis=0), np.nan)


def _skew_of(matrix: np.ndarray, valid: np.ndarray) -> Callable[[slice], float]:
    """Per batch (a slice of the valid windows): the busiest subtask's mean rate over the mean."""
    columns = np.flatnonzero(valid)

    def skew(batch: slice) -> float:
        block = matrix[:, columns[batch]]
        with np.errstate(invalid="ignore"):
            rates = np.array([np.nanmean(r) if (~np.isnan(r)).any() else np.nan for r in block])
        rates = rates[~np.isnan(rates)]
        if len(rates) < 2 or rates.mean() <= 0:
            return math.nan
        return float(rates.max() / rates.mean())

    return skew


def _checkpoint_values(
    log: CheckpointLog | None, window: tuple[int, int] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Durations (s), full sizes (B) and completion times of the checkpoints triggered and completed
    in the window (after the warm-up: the first checkpoints of a run wait behind buffers that are
    still filling, and one that straddles the warm-up's end made a side's durations a ramp)."""
    if log is None:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    done = log.completed_between(*(window or (None, None)), started_inside=True)
    duration = np.array([c.duration_ms / 1000.0 if c.duration_ms is not None else np.nan for c in done])
    size = np.array([c.full_size_bytes if c.full_size_bytes is not None else np.nan for c in done])
    when = np.array([float(c.ack_ms if c.ack_ms is not None else (c.trigger_ms or 0) + (c.duration_ms or 0))
                     for c in done])
    return duration, size, when


def _candidates(
    before: Run, after: Run, matching: Matching
) -> tuple[list[_Candidate], dict[str, SeriesPair]]:
    series: dict[str, SeriesPair] = {}
    out: list[_Candidate] = []
    wb, wa = before.windows, after.windows
    nb = wb.windows if wb else 0
    na = wa.windows if wa else 0

    def times(w: JobWindows | None, n: int) -> np.ndarray:
        return (np.arange(n) + 0.5) * (w.slot_ms / 1000.0) if w else np.zeros(0)

    tb, ta = times(wb, nb), times(wa, na)

    def add(candidate: _Candidate, key: str) -> None:
        out.append(candidate)
        if candidate.per_batch is None:
            label = candidate.label or candidate.figure.label
            series[key] = SeriesPair(label, candidate.figure.unit, tb, candidate.before, ta, candidate.after)

    # The job: what the sinks take in, and the worst back pressure of any vertex.
    if wb and wa:
        (keys_b, rate_b), (keys_a, rate_a) = (
            _sinks(before.job, before.plan, wb),
            _sinks(after.job, after.plan, wa),
        )
        where = "into the sinks" if rate_a == "records_in_per_s" else "out of the sources"
        add(
            _Candidate(
                fg.THROUGHPUT,
                "job",
                _sum_rows([wb.vertices[k].values[rate_b] for k in keys_b], nb),
                _sum_rows([wa.vertices[k].values[rate_a] for k in keys_a], na),
                label=f"throughput (records/s {where})",
            ),
            "job:throughput",
        )
        bp_b = [vw.values["backpressured_max"] for vw in wb.vertices.values()]
        bp_a = [vw.values["backpressured_max"] for vw in wa.vertices.values()]
        add(
            _Candidate(
                fg.BACKPRESSURED,
                "job",
                _max_rows(bp_b, nb),
                _max_rows(bp_a, na),
                label="back-pressured (worst subtask of any vertex)",
            ),
            "job:backpressured",
        )
    else:
        for figure in (fg.THROUGHPUT, fg.BACKPRESSURED):
            out.append(_Candidate(figure, "job", np.full(nb, np.nan), np.full(na, np.nan)))
    duration_b, size_b, when_b = _checkpoint_values(before.checkpoints, before.job.window_ms)
    duration_a, size_a, when_a = _checkpoint_values(after.checkpoints, after.job.window_ms)
    start_b = before.job.window_ms[0] if before.job.window_ms else 0
    start_a = after.job.window_ms[0] if after.job.window_ms else 0
    for figure, vb, va in (
        (fg.CHECKPOINT_DURATION, duration_b, duration_a),
        (fg.CHECKPOINT_SIZE, size_b, size_a),
    ):
        c = _Candidate(figure, "job", vb, va)
        out.append(c)
        series[f"job:{figure.name}"] = SeriesPair(
            figure.label.replace(" (median", " (each").replace(", full)", ")"),
            figure.unit,
            (when_b - start_b) / 1000.0,
            vb,
            (when_a - start_a) / 1000.0,
            va,
        )

    for pair in matching.pairs:
        vb = wb.vertices.get(pair.before.vertex_key) if wb else None
        va = wa.vertices.get(pair.after.vertex_key) if wa else None
        scope = pair.after.vertex_key
        source = _is_source(vb, va)
        rate = "records_out_per_s" if source else "records_in_per_s"
        rate_b, rate_a = _values(vb, rate, nb), _values(va, rate, na)
        add(
            _Candidate(
                fg.THROUGHPUT,
                scope,
                rate_b,
                rate_a,
                label="throughput (records/s out)" if source else "throughput (records/s in)",
            ),
            f"{scope}:throughput",
        )
        for figure in fg.VERTEX_FIGURES:
            if figure.name in fg.WINDOW_SERIES:
                name = fg.WINDOW_SERIES[figure.name]
                add(
                    _Candidate(figure, scope, _values(vb, name, nb), _values(va, name, na)),
                    f"{scope}:{figure.name}",
                )
        if not source and vb is not None and va is not None:
            valid_b = ~np.isnan(rate_b)
            valid_a = ~np.isnan(rate_a)
            out.append(
                _Candidate(
                    fg.SKEW,
                    scope,
                    np.where(valid_b, 0.0, np.nan),
                    np.where(valid_a, 0.0, np.nan),
                    per_batch=(_skew_of(vb.records_in, valid_b), _skew_of(va.records_in, valid_a)),
                )
            )
        else:
            out.append(_Candidate(fg.SKEW, scope, np.full(nb, np.nan), np.full(na, np.nan)))
    return out, series


def _least(figure: Figure) -> int:
    return MIN_CHECKPOINTS if figure.name.startswith("checkpoint") else MIN_SAMPLES


def _transform(figure: Figure, x: np.ndarray) -> np.ndarray:
    if not figure.log:
        return x
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), np.nan)


def _count(x: np.ndarray) -> int:
    return int((~np.isnan(x)).sum())


def _side(candidate: _Candidate, which: int, acf: np.ndarray, b: int) -> stats.Side | None:
    values = _transform(candidate.figure, candidate.before if which == 0 else candidate.after)
    if candidate.per_batch is None:
        return stats.side(values, acf, b)
    count = _count(values)
    if count == 0:
        return None
    slices = stats.batch_slices(count, b)
    per = np.array([candidate.per_batch[which](sl) for sl in slices])
    per = per[~np.isnan(per)]
    if len(per) == 0:
        return None
    return stats.from_batches(per, acf, slices[0].stop - slices[0].start)


def _shown(figure: Figure, raw: np.ndarray, side: stats.Side | None) -> float | None:
    """The side's figure: the median for a log figure, else the mean of the batches used (of every
    window when the side was not batched because the other side has nothing)."""
    x = raw[~np.isnan(raw)]
    if len(x) == 0:
        return None
    if figure.log:
        return float(np.median(x))
    return side.mean if side is not None else float(x.mean())


def _verdict(
    figure: Figure, interval: stats.Interval, before: float | None
) -> tuple[str, float, float, float]:
    """(verdict, delta, low, high) in the figure's terms (relative for log figures)."""
    if figure.log:
        delta, low, high = (math.expm1(x) for x in (interval.delta, interval.low, interval.high))
        size = abs(delta)
        big = size >= figure.floor and (before is None or abs(before * delta) >= figure.min_abs)
    else:
        delta, low, high = interval.delta, interval.low, interval.high
        reference = abs(before) if before else 0.0
        big = (
            abs(delta)
            >= (
                figure.floor * reference
                if figure.relative and reference > 0
                else (figure.floor if not figure.relative else 0.0)
            )
            and abs(delta) >= figure.min_abs
        )
        big = big and delta != 0.0
    half = (high - low) / 2.0
    if figure.unit in ("share", "usage") and before is not None:
        # A share of time or a pool's usage stays within 0..1: so does the difference's interval.
        low, high = max(low, -before), min(high, max(1.0 - before, 0.0))
    elif figure.unit == "records/s" and before is not None and not figure.log:
        low = max(low, -before)
    if not interval.excludes_zero() or not big:
        if not figure.log and figure.relative and half > 0:
            half = half / abs(before) if before else math.inf
        # An interval wider than the figure's "wide" says nothing either way: still no measurable
        # change, with a note (the runs are too short or too unsteady for this figure).
        return (fg.SAME if half <= figure.wide else fg.TOO_WIDE), delta, low, high
    up = delta > 0
    if figure.better == fg.NEITHER:
        return (fg.HIGHER if up else fg.LOWER), delta, low, high
    good = up if figure.better == fg.HIGHER else not up
    return (fg.BETTER if good else fg.WORSE), delta, low, high


def _origins(job: JobDiagnosis) -> tuple[tuple[str, str], ...]:
    return tuple((o.name, o.cause) for o in job.origins)


def _origin_text(before: JobDiagnosis, after: JobDiagnosis, matching: Matching) -> str:
    ob, oa = _origins(before), _origins(after)
    after_name = {p.before.name: p.after.name for p in matching.pairs}

    def words(origins: Sequence[tuple[str, str]]) -> str:
        return ", ".join(f"{name} ({cause.replace('_', ' ')})" for name, cause in origins)

    if not ob and not oa:
        return "no back-pressure origin on either side"
    if ob and not oa:
        return f"back pressure gone: it started at {words(ob)} before; no origin after"
    if oa and not ob:
        return f"back pressure appeared: it starts at {words(oa)} after; no origin before"
    if sorted(after_name.get(n, n) for n, _ in ob) == sorted(n for n, _ in oa):
        if sorted(c for _, c in ob) == sorted(c for _, c in oa):
            return f"back pressure still starts at {words(oa)}"
        return f"back pressure still starts at the same vertex; cause {words(ob)} -> {words(oa)}"
    return f"the back-pressure origin moved: {words(ob)} -> {words(oa)}"


def _side_info(run: Run, checkpoints: int | None) -> SideInfo:
    window = run.job.window_ms
    failed = run.checkpoints.failed_between(*window) if run.checkpoints is not None and window else None
    return SideInfo(
        label=run.label,
        inputs=run.inputs,
        job_key=run.job.job_key,
        job_id=run.job.job_id,
        job_name=run.job.job_name,
        window_ms=window,
        status=job_status(run.job),
        origins=_origins(run.job),
        checkpoints=checkpoints,
        failed_checkpoints=failed,
        plan_file=run.plan_file,
        checkpoints_file=run.checkpoints_file,
    )


def compare_runs(
    before: Run,
    after: Run,
    confidence: float = 0.95,
    predictions: Callable[[tuple[FigureChange, ...]], tuple[Prediction, ...]] | None = None,
) -> Comparison:
    """Judge every figure of ``after`` against ``before``. ``confidence`` is family-wise: each
    figure's interval is at 1 - (1 - confidence) / m for the m figures judged (Bonferroni), so a
    run compared with a copy of itself shows any change at all with probability at most
    1 - confidence. ``predictions``: pairs the job-level changes with a recommendation's
    predictions (expected.py). Raises MetricsError for two different jobs."""
    matching = match_vertices(before.job, after.job)
    candidates, series = _candidates(before, after, matching)

    # The autocorrelation of each family, pooled over every series of it on both sides.
    pooled: dict[str, list[np.ndarray]] = {}
    for c in candidates:
        if c.per_batch is None and _least(c.figure) != MIN_CHECKPOINTS:
            pooled.setdefault(c.figure.family, []).extend(
                [_transform(c.figure, c.before), _transform(c.figure, c.after)]
            )
    longest = max((len(c.before) for c in candidates), default=0)
    longest = max([longest, *(len(c.after) for c in candidates)])
    acfs = {family: stats.pooled_autocorrelation(xs, max(1, longest)) for family, xs in pooled.items()}
    # The family: figures with enough samples on both sides to be judged (Bonferroni over them).
    family = sum(1 for c in candidates if min(_count(c.before), _count(c.after)) >= _least(c.figure))
    tail = (1.0 - confidence) / max(1, family) / 2.0
    judged = 0
    for c in candidates:
        n = min(_count(c.before), _count(c.after))
        if _count(c.before) == 0 or _count(c.after) == 0:
            continue
        least = _least(c.figure)
        if least == MIN_CHECKPOINTS:
            # Events, not windows: unbatched, with an assumed correlation (stats.EVENT_CORRELATION_FLOOR).
            before_x, after_x = _transform(c.figure, c.before), _transform(c.figure, c.after)
            rho = stats.event_correlation(before_x, after_x)
            c.sides = (stats.event_side(before_x, rho), stats.event_side(after_x, rho))
        else:
            acf = acfs.get(c.figure.family, np.array([1.0]))
            b = stats.batch_size(acf, n, stats.MIN_BATCH, tail) if n >= least else 1
            c.sides = (_side(c, 0, acf, b), _side(c, 1, acf, b))
        # A figure that does not vary on either side (back pressure at 0% all along) cannot be called
        # by chance: it spends none of the error rate.
        if (
            n >= least
            and all(s is not None and len(s.means) >= 2 for s in c.sides)
            and any(s is not None and s.variance_of_mean > 0 for s in c.sides)
        ):
            judged += 1
    per_figure = 1.0 - (1.0 - confidence) / max(1, judged)

    changes: dict[str, list[FigureChange]] = {}
    for c in candidates:
        sb, sa = c.sides
        shown_b = _shown(c.figure, c.before, sb) if c.per_batch is None else (sb.mean if sb else None)
        shown_a = _shown(c.figure, c.after, sa) if c.per_batch is None else (sa.mean if sa else None)
        samples = (_count(c.before), _count(c.after))
        figure = (
            c.figure
            if not c.label
            else Figure(
                c.figure.name,
                c.label,
                c.figure.unit,
                c.figure.better,
                c.figure.floor,
                c.figure.relative,
                c.figure.log,
                c.figure.family,
                c.figure.min_abs,
            )
        )
        if sb is None or sa is None:
            verdict, note = fg.NOT_MEASURED, _missing(c, samples)
            change = FigureChange(
                figure, shown_b, shown_a, None, None, None, None, verdict, samples, note=note
            )
        else:
            interval = stats.difference(sb, sa, per_figure) if min(samples) >= _least(c.figure) else None
            if interval is None:
                delta = None
                if shown_b is not None and shown_a is not None and not c.figure.log:
                    delta = shown_a - shown_b
                elif shown_b and shown_a is not None:
                    delta = shown_a / shown_b - 1.0
                change = FigureChange(
                    figure,
                    shown_b,
                    shown_a,
                    delta,
                    None,
                    None,
                    None,
                    fg.SAME,
                    samples,
                    (len(sb.means), len(sa.means)),
                    note=NOTE_FEW,
                    informative=False,
                )
            else:
                verdict, delta, low, high = _verdict(c.figure, interval, shown_b)
                wide = verdict == fg.TOO_WIDE
                verdict = fg.SAME if wide else verdict
                relative = None
                if not c.figure.log and shown_b:
                    relative = delta / abs(shown_b)
                change = FigureChange(
                    figure,
                    shown_b,
                    shown_a,
                    delta,
                    low,
                    high,
                    relative,
                    verdict,
                    samples,
                    (len(sb.means), len(sa.means)),
                    (sb.windows_per_batch, sa.windows_per_batch),
                    note=NOTE_WIDE if wide else "",
                    informative=not wide,
                )
        changes.setdefault(c.scope, []).append(change)

    job_changes = tuple(changes.get("job", ()))
    vertices = tuple(
        VertexComparison(
            p.after.vertex_key,
            p.after.name,
            p.before.name,
            p.by,
            (p.before.parallelism, p.after.parallelism),
            tuple(changes.get(p.after.vertex_key, ())),
        )
        for p in matching.pairs
    )
    dur = next(c for c in job_changes if c.figure.name == "checkpoint_duration")
    info_b = _side_info(before, dur.samples[0] if before.checkpoints is not None else None)
    info_a = _side_info(after, dur.samples[1] if after.checkpoints is not None else None)
    notes = []
    if before.checkpoints is None or after.checkpoints is None:
        missing = [r.label.upper() for r in (before, after) if r.checkpoints is None]
        notes.append(
            f"no checkpoint statistics for {' and '.join(missing)} (no checkpoints.json beside the dump: "
            "collect writes it for jobs that checkpoint)"
        )
    notes += [n for n in (_checkpoints_settling(r) for r in (before, after)) if n]
    comparison = Comparison(
        before=info_b,
        after=info_a,
        verdict="",
        headline="",
        job=job_changes,
        origin=_origin_text(before.job, after.job, matching),
        vertices=vertices,
        only_before=tuple(v.name for v in matching.only_before),
        only_after=tuple(v.name for v in matching.only_after),
        graph_notes=matching.notes,
        predictions=predictions(job_changes) if predictions else (),
        confidence=confidence,
        judged=judged,
        notes=tuple(notes),
        series=series,
    )
    verdict = overall_verdict(comparison)
    from flinktune.record import replace

    return replace(comparison, verdict=verdict, headline=headline(comparison, verdict))


def _checkpoints_settling(run: Run) -> str | None:
    """A note when a side's first checkpoints after the warm-up still belong to the start-up (under
    back pressure an aligned checkpoint waits for the in-flight buffers, which fill for a while
    after a start: on real Flink 4, 7 and 12 s before a steady 15 s). They stay in the figure, as
    the warm-up asked; the note says what a longer warm-up would leave out."""
    if run.checkpoints is None or not run.job.window_ms:
        return None
    start_ms = run.job.window_ms[0]
    done = run.checkpoints.completed_between(*run.job.window_ms, started_inside=True)
    seconds = np.array([(c.duration_ms or 0.0) / 1000.0 for c in done])
    lead = stats.leading_transient(np.log(np.maximum(seconds, 1e-3)))
    if lead == 0:
        return None
    steady_ms = done[lead].started_ms or start_ms
    head = ", ".join(f"{x:.3g} s" for x in seconds[:lead])
    rest = seconds[lead:]
    which, lies, them = ("checkpoint", "lies", "it") if lead == 1 else (f"{lead} checkpoints", "lie", "them")
    return (
        f"{run.label.upper()}'s first {which} after the warm-up ({head}) {lies} well outside the "
        f"{rest.min():.3g}-{rest.max():.3g} s of the {len(rest)} after {them}: its checkpoints were "
        f"still settling; a --warmup about {math.ceil(max(0, steady_ms - start_ms) / 1000.0)} s "
        "longer judges the steady ones only"
    )


def _missing(c: _Candidate, samples: tuple[int, int]) -> str:
    sides = [label for label, n in zip(("BEFORE", "AFTER"), samples, strict=True) if n == 0]
    what = "checkpoints" if c.figure.name.startswith("checkpoint") else "samples"
    return f"no {what} in {' and '.join(sides)}" if sides else "no samples"


def overall_verdict(comparison: Comparison) -> str:
    changes = comparison.all_changes()
    if comparison.worse and comparison.better:
        return "mixed"
    if comparison.worse:
        return fg.WORSE
    if comparison.better:
        return fg.BETTER
    if comparison.changed:
        return "changed"
    if not any(c.informative and c.low is not None for c in changes):
        return fg.CANNOT_TELL
    return fg.SAME


def headline(comparison: Comparison, verdict: str) -> str:
    """One line: the verdict, then the job's figures, then how many vertex figures moved."""
    from flinktune.compare.text import change_phrase

    parts = [
        change_phrase(c)
        for c in comparison.job
        if c.verdict != fg.NOT_MEASURED and (c.figure.name != "checkpoint_size" or c.measurable)
    ]
    moved = [c for v in comparison.vertices for c in v.changes if c.measurable]
    if moved:
        counts = {}
        for c in moved:
            counts[c.verdict] = counts.get(c.verdict, 0) + 1
        parts.append("vertex figures: " + ", ".join(f"{n} {word}" for word, n in sorted(counts.items())))
    return f"{verdict.upper()}: " + "; ".join(parts) if parts else verdict.upper()
