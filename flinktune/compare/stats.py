"""Is a difference between two runs more than noise? An interval from each side's time windows.

The samples of one run are not independent: a gauge such as ``busyTimeMsPerSecond`` is itself an
average over Flink's last few seconds and the load drifts, so neighbouring time windows look alike
(measured on the real dumps in sample_data: lag-1 autocorrelation 0.3-0.9 for the time and pool
gauges at 2 s polls). A t interval over the windows as if they were independent claims far too much
(simulated: 25-50% false calls at a stated 5%). The method here, documented in docs/compare.md:

1. **Non-overlapping batch means.** Each side's windows (after the warm-up) are cut into batches of
   ``b`` consecutive windows and each batch is averaged; the batch means are much closer to
   independent than the windows.
2. **The batch size from the data.** The autocorrelation of the windows is estimated from every
   series of the same kind in both runs (all vertices, both sides: they share the sampling and
   Flink's averaging), corrected for the bias of demeaning short series, and ``b`` is the smallest
   size at which neighbouring batch means correlate by at most `CORRELATION_LIMIT`. When the runs
   are too short for that, two batches per side are used.
3. **What correlation remains** widens the variance of each side's mean (the exact factor for
   a mean of correlated batch means, and for the bias of their sample variance).
4. **Welch's t interval** for the difference of the two sides' means, with the
   Welch-Satterthwaite degrees of freedom. ``confidence`` is per figure; the caller divides the
   error rate over the figures it judges (Bonferroni).

Events (checkpoints) are too few to batch or to estimate their correlation from: each counts on its
own, under an assumed AR(1) correlation (``event_correlation``, ``event_side``).

Pure functions over numpy arrays; the t distribution is computed here (no scipy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Neighbouring batch means may correlate by at most this much (estimated) before a larger batch is
# tried. 0.1 keeps the false-call rate at or below the stated one in the simulations of
# tests/compare/test_stats.py (AR(1) noise up to 0.9 per window, 12 to 40 windows).
CORRELATION_LIMIT = 0.1
# A batch spans at least two windows. A rate from counters over one sampling interval is mostly the
# counter's refresh (Flink's REST API serves values refreshed every metrics.fetcher.update-interval):
# one window gets too few records, the next too many. Over two or more windows those errors cancel
# (the rate telescopes to the counter's change over the batch), which the autocorrelation, negative
# at lag 1 for such series, does not ask for by itself.
MIN_BATCH = 2
# Checkpoints are events, a handful per run: too few to estimate their correlation, or to batch them, and
# batching two per side leaves about one degree of freedom (an interval hundreds of standard errors
# wide). Their correlation is taken as at least an AR(1) of this lag-1 value: the steady checkpoint
# durations of real Flink 1.20 runs here correlate by 0.23 at lag 1 (pooled over 14 runs; 0.38 after
# the short-series correction). Estimated from the two runs only when each has EVENT_TRUST checkpoints
# or more, and then used where it is higher. Calibrated in tests/compare/test_stats.py.
EVENT_CORRELATION_FLOOR = 0.5
EVENT_TRUST = 12


# --- the t distribution -------------------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    value = d
    for m in range(1, 400):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            step = c * d
            value *= step
        if abs(step - 1.0) < 1e-15:
            break
    return value


def incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function, for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_tail(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (df may be fractional)."""
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


@lru_cache(maxsize=4096)
def t_quantile(tail: float, df: float) -> float:
    """The t with P(T > t) = ``tail`` (0 < tail < 0.5), by bisection on the tail."""
    if not 0.0 < tail < 0.5:
        raise ValueError(f"tail must be in (0, 0.5), not {tail}")
    lo, hi = 0.0, 1.0
    while t_tail(hi, df) > tail:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if t_tail(mid, df) > tail:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


# --- the autocorrelation of the windows -----------------------------------------------------------


def pooled_autocorrelation(series: Sequence[np.ndarray], max_lag: int) -> np.ndarray:
    """The autocorrelation at lags 0..max_lag of windows, pooled over ``series`` (NaN windows, which
    hold no sample, are left out: lags count samples; each series is demeaned on its own; constant
    series carry no information and are skipped). The pooled estimate is corrected for the bias
    that demeaning a short series puts on it (about -tau/n, tau the integrated autocorrelation
    time) and cut to zero from the first lag that is not positive, where the estimate is noise."""
    num = np.zeros(max_lag + 1)
    den = 0.0
    lengths: list[int] = []
    for values in series:
        x = np.asarray(values, dtype=np.float64)
        x = x[~np.isnan(x)]
        if len(x) < 3:
            continue
        centred = x - x.mean()
        squares = float((centred * centred).sum())
        if squares <= 1e-12 * max(1.0, float(np.abs(x).max()) ** 2):
            continue
        den += squares
        lengths.append(len(x))
        for k in range(1, min(max_lag, len(x) - 1) + 1):
            num[k] += float((centred[:-k] * centred[k:]).sum())
    acf = np.zeros(max_lag + 1)
    acf[0] = 1.0
    if den <= 0.0:
        return acf
    raw = num / den
    # Lags up to the first one whose estimate is not positive; beyond it the estimate is noise. A
    # negative correlation (a counter's refresh: one window too few records, the next too many) is
    # taken as none: that only makes the interval wider than it need be.
    cut = next((k for k in range(1, max_lag + 1) if raw[k] <= 0.0), max_lag + 1)
    tau = 1.0 + 2.0 * float(raw[1:cut].sum())
    bias = tau / float(np.mean(lengths))
    acf[1:cut] = np.clip(raw[1:cut] + bias, 0.0, 0.999)
    return acf


def _rho(acf: np.ndarray, lag: int) -> float:
    return float(acf[lag]) if 0 <= lag < len(acf) else 0.0


def batch_correlation(acf: np.ndarray, b: int, lag: int = 1) -> float:
    """The correlation of batch means ``lag`` batches apart, for batches of ``b`` windows of a
    stationary series with autocorrelation ``acf``."""
    variance = b + 2.0 * sum((b - k) * _rho(acf, k) for k in range(1, b))
    covariance = sum((b - abs(k)) * _rho(acf, abs(lag * b + k)) for k in range(-b + 1, b))
    return covariance / variance


def batch_size(
    acf: np.ndarray, windows: int, minimum: int = MIN_BATCH, tail: float = 0.025, batches: int = 2
) -> int:
    """The batch size for ``windows`` (the shorter side's count), from ``minimum`` up to two batches.

    Only sizes whose neighbouring batch means correlate by at most CORRELATION_LIMIT qualify. Among
    those, the one whose interval is expected to be narrowest (the t quantile at ``tail`` for its
    degrees of freedom times the standard error the autocorrelation predicts, with what correlation
    remains): usually the smallest. Two batches when no size qualifies. (Choosing by the spread the
    data showed at each size instead favoured sizes whose spread was small by chance: on white noise
    without floors, 6.7% of whole comparisons called something at a stated 5%.)"""
    best, best_width = None, math.inf
    for b in range(max(1, minimum), windows // batches + 1):
        if batch_correlation(acf, b) > CORRELATION_LIMIT:
            continue
        count = windows // b
        spread = (b + 2.0 * sum((b - k) * _rho(acf, k) for k in range(1, b))) / (b * b)
        corr = sum((1.0 - j / count) * max(0.0, batch_correlation(acf, b, j)) for j in range(1, count))
        standard_error = math.sqrt(max(spread, 1e-12) * (1.0 + 2.0 * corr) / count)
        width = t_quantile(tail, 2.0 * (count - 1)) * standard_error
        if width < best_width:
            best, best_width = b, width
    return best if best is not None else max(1, windows // batches)


def leading_transient(values: np.ndarray, keep: int = 3, factor: float = 3.0) -> int:
    """How many of the first values (in time order) are a start-up transient: the largest ``d`` up
    to half the values, leaving at least ``keep``, such that all of the first ``d`` lie on one side
    of the rest's range and further from it than ``factor`` times its width. 0: none.

    For saying so, not for dropping them: on independent normal noise the rule fires on 2.8% of
    series of 4 values, 1.3% of 5, 0.6% of 6 and almost never from 8 (simulated, 20,000 each),
    and judging without the values it fired on would call changes that are not there more often
    than stated. The start-up of real checkpoints (4, 7, 12 s before a steady 15 s) it finds."""
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    n = len(x)
    for d in range(min(n // 2, n - keep), 0, -1):
        rest = x[d:]
        low, high = float(rest.min()), float(rest.max())
        margin = factor * (high - low)
        head = x[:d]
        if bool((head < low - margin).all()) or bool((head > high + margin).all()):
            return d
    return 0


# --- one side and the difference ------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One run's figure as batch means. ``inflation``: the factor the remaining correlation of the
    batch means puts on the variance of their mean (1 when they are independent). ``dof``: the degrees
    of freedom of its variance when correlated values are used unbatched (events), else None (one
    less than the batches)."""

    means: np.ndarray
    windows_per_batch: int
    inflation: float
    dof: float | None = None

    @property
    def mean(self) -> float:
        return float(self.means.mean())

    @property
    def variance_of_mean(self) -> float:
        if len(self.means) < 2:
            return math.nan
        return self.inflation * float(self.means.var(ddof=1)) / len(self.means)


def batch_slices(count: int, b: int) -> list[slice]:
    """``count`` windows (with samples, in time order) in batches of ``b``: at least one batch; the
    windows left over are the oldest (nearest the warm-up) and are not used."""
    batches = max(1, count // max(1, b))
    size = min(b, count) if batches == 1 else b
    first = count - batches * size
    return [slice(first + i * size, first + (i + 1) * size) for i in range(batches)]


def from_batches(means: np.ndarray, acf: np.ndarray, b: int) -> Side:
    """A side from its batch values (batches of ``b`` windows, autocorrelation ``acf``)."""
    count = len(means)
    s = sum((1.0 - j / count) * max(0.0, batch_correlation(acf, b, j)) for j in range(1, count))
    shrink = 1.0 - 2.0 * s / (count - 1) if count > 1 else 1.0
    inflation = (1.0 + 2.0 * s) / max(shrink, 0.05)
    return Side(np.asarray(means, dtype=np.float64), b, inflation)


def side(values: np.ndarray, acf: np.ndarray, b: int) -> Side | None:
    """``values`` (one per window, NaN where the window has no sample) as batch means of ``b``
    windows. None: no windows."""
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return None
    slices = batch_slices(len(x), b)
    return from_batches(np.array([x[sl].mean() for sl in slices]), acf, slices[0].stop - slices[0].start)


def event_correlation(before: np.ndarray, after: np.ndarray) -> float:
    """The lag-1 correlation an AR(1) model of two runs' events (checkpoints) assumes: the floor, or
    the estimate from both runs where each has EVENT_TRUST events or more and it is higher."""
    counts = [int((~np.isnan(np.asarray(x, dtype=np.float64))).sum()) for x in (before, after)]
    if min(counts) < EVENT_TRUST:
        return EVENT_CORRELATION_FLOOR
    estimate = float(pooled_autocorrelation([before, after], 1)[1])
    return max(EVENT_CORRELATION_FLOOR, estimate)


def event_side(values: np.ndarray, rho: float) -> Side | None:
    """``values`` (one per event, NaN for none) unbatched, as an AR(1) series of lag-1 correlation
    ``rho``: the variance of their mean is inflated by the AR(1) factor (and the sample variance's
    bias); the sample variance of an AR(1) series varies as a chi-square of about
    (n - 1)(1 - rho^2)/(1 + rho^2) degrees of freedom would (its variance is 2 sigma^4 (1 + rho^2) /
    (n (1 - rho^2)) for large n), at least one. None: no values."""
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return None
    acf = rho ** np.arange(n + 1, dtype=np.float64)
    plain = from_batches(x, acf, 1)
    return Side(plain.means, 1, plain.inflation, max(1.0, (n - 1) * (1.0 - rho * rho) / (1.0 + rho * rho)))


@dataclass(frozen=True)
class Interval:
    """after - before, and the interval around it at ``confidence`` (both bounds equal when
    neither side varies)."""

    delta: float
    low: float
    high: float
    confidence: float
    df: float

    def excludes_zero(self) -> bool:
        return self.low > 0.0 or self.high < 0.0


def difference(before: Side, after: Side, confidence: float) -> Interval | None:
    """Welch's interval for after.mean - before.mean; None when a side has fewer than two batches
    (no spread to judge by)."""
    va, vb = before.variance_of_mean, after.variance_of_mean
    if math.isnan(va) or math.isnan(vb):
        return None
    delta = after.mean - before.mean
    se2 = va + vb
    if se2 <= 0.0:
        return Interval(delta, delta, delta, confidence, math.inf)
    parts = [v * v / (s.dof if s.dof is not None else len(s.means) - 1)
             for v, s in ((va, before), (vb, after)) if v > 0]
    df = se2 * se2 / sum(parts)
    half = t_quantile((1.0 - confidence) / 2.0, df) * math.sqrt(se2)
    return Interval(delta, delta - half, delta + half, confidence, df)
