"""Statistics of two samples: ratio of medians, its confidence interval, Mann–Whitney U, BH.

All work is on log values, so that a ratio is a difference: swapping the sides negates every
estimate exactly, and scaling one side by k adds log k exactly. Benchmarks with the same
repetition counts are processed together as one array (10,000 benchmarks cost milliseconds).

The Mann–Whitney test and the Benjamini–Hochberg step are computed here with numpy rather than
by scipy.stats: importing scipy.stats takes over a second on the CI machine, more than half
the time budget of a 10,000-benchmark comparison. tests/tools/test_stats.py checks both
against scipy.stats.mannwhitneyu and scipy.stats.false_discovery_control.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

# Normal-consistency constant of the median absolute deviation.
MAD_TO_SIGMA = 1.4826
# Up to this many pairs (n*m) the exact null distribution of U is used; beyond, a normal one.
EXACT_PAIRS = 2500
# Up to this many values (n + m), a p-value with ties is never below the exact one given the
# ties. The normal approximation is poor there: 3 and 3 quantised to one value a side gave
# p = 0.047 (a lone +20 % failed) where no arrangement of 6 values reaches below 0.1. It also
# errs the other way (10 and 10 apart with one tie: 1.8e-4, exact 1.1e-5), but the noise
# multiplier was calibrated with those p-values: with the exact ones, a second run of the H200
# suite on one card (tests/data/gpu, a5b8dffa) flags probe/empty_kernel (+6.5 %, limit 3.9 %),
# so the larger of the two is kept until the floor is measured anew. Cost: 0.2 ms a tie pattern.
TIED_EXACT_VALUES = 20
# Student's t quantile: the exact series up to this many degrees of freedom (0.6 ms at 1,000).
T_SERIES_DF = 1000
# Pairwise differences held at once (8 bytes each, as much again to sort them): a block of pairs
# of one size is taken this many differences at a time, and a pair with more is computed from
# its sorted values instead (_without_pairs). nvbench's --jsonbin files hold every sample: its
# own test file has states of 153,037 samples, 2.3e10 differences a pair (an internal error,
# "Unable to allocate 55.9 GiB", for three states of 50,000).
PAIRS_AT_ONCE = 1 << 22
# Without the differences, an end of the interval is bracketed this closely (in log space) by
# bisection, then stepped to exactly (_kth_difference).
_LOG_TOLERANCE = 1e-12


@dataclass(frozen=True)
class PairStats:
    """Per-pair results, one entry per (baseline, contender) pair; NaN where undefined."""

    log_ratio: np.ndarray  # log(median(contender) / median(baseline))
    log_ci_low: np.ndarray  # confidence interval of the log ratio (Hodges–Lehmann / Moses)
    log_ci_high: np.ndarray
    p_value: np.ndarray  # two-sided Mann–Whitney U
    baseline_median: np.ndarray
    contender_median: np.ndarray
    baseline_cv: np.ndarray  # robust coefficients of variation of the repetitions
    contender_cv: np.ndarray
    # The p-value of these values with every contender value past every baseline value, each
    # side's values (and ties) kept: the smallest the test can give them, however far apart.
    smallest_p: np.ndarray


def robust_cv(values: np.ndarray) -> np.ndarray:
    """MAD-based coefficient of variation along the last axis (NaN for fewer than 3 values)."""
    median = np.median(values, axis=-1)
    mad = np.median(np.abs(values - median[..., None]), axis=-1)
    cv = MAD_TO_SIGMA * mad / median
    return np.where(values.shape[-1] >= 3, cv, np.nan)


@lru_cache(maxsize=256)
def u_null_counts(n: int, m: int) -> np.ndarray:
    """Number of orderings of n + m distinct values giving U = 0..n*m (no ties)."""
    # Recurrence on the largest value: it is a y (adding i to U) or an x.
    # row[j] holds the counts for (i, j); built up over i.
    row = [np.ones(1) for _ in range(m + 1)]
    for i in range(1, n + 1):
        new = [np.ones(1)]
        for j in range(1, m + 1):
            counts = np.zeros(i * j + 1)
            counts[i : i + len(new[j - 1])] += new[j - 1]
            counts[: len(row[j])] += row[j]
            new.append(counts)
        row = new
    return row[m]


def moses_rank(n: int, m: int, confidence: float) -> int:
    """0-based rank k such that [d_(k), d_(nm-1-k)] of the sorted pairwise differences is a
    distribution-free confidence interval for the shift at `confidence` (the widest one,
    k = 0, when the samples are too small to reach it)."""
    tail = (1.0 - confidence) / 2.0
    if n * m <= EXACT_PAIRS:
        counts = u_null_counts(n, m)
        cdf = np.cumsum(counts) / counts.sum()
        # P(shift < d_(c), 1-based) = P(U <= c - 1): take the largest c with that <= tail.
        c = int(np.searchsorted(cdf, tail, side="right"))
    else:
        z = NormalDist().inv_cdf(1.0 - tail)
        c = math.floor(n * m / 2.0 + 0.5 - z * math.sqrt(n * m * (n + m + 1) / 12.0))
    return max(0, min(c - 1, (n * m - 1) // 2))


def min_p_value(n: int, m: int) -> float:
    """Smallest two-sided exact Mann–Whitney p-value possible with n and m values (0.0 where
    it is below what a float holds: nvbench files bring thousands of samples a side)."""
    log_ways = math.lgamma(n + m + 1) - math.lgamma(n + 1) - math.lgamma(m + 1)
    return min(1.0, 2.0 * math.exp(-log_ways)) if log_ways < 700 else 0.0


def t_within(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with `df` degrees of freedom (t >= 0): the finite series of
    Abramowitz and Stegun 26.7.3-4."""
    theta = math.atan(t / math.sqrt(df))
    c = math.cos(theta) ** 2
    if df % 2:  # odd: (2/pi)(theta + sin cos (1 + 2/3 c + 2*4/(3*5) c^2 + ...))
        j = np.arange(1, (df - 3) // 2 + 1)
        terms = np.cumprod(2 * j / (2 * j + 1) * c)
        series = 1.0 + float(terms.sum()) if df > 1 else 0.0
        return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * series)
    j = np.arange(1, (df - 2) // 2 + 1)  # even: sin (1 + 1/2 c + 1*3/(2*4) c^2 + ...)
    return math.sin(theta) * (1.0 + float(np.cumprod((2 * j - 1) / (2 * j) * c).sum()))


def t_two_sided_p(t: float, df: int) -> float:
    """Two-sided p-value of a t statistic with `df` degrees of freedom. Beyond T_SERIES_DF,
    Paulson's normal approximation of t, z = t (1 - 1/(4 df)) / sqrt(1 + t^2 / (2 df)) (within
    2 % relative of scipy's there down to p = 1e-30: tests/tools/test_stats.py)."""
    t = abs(t)
    if df > T_SERIES_DF:
        z = t * (1.0 - 1.0 / (4.0 * df)) / math.sqrt(1.0 + t * t / (2.0 * df))
        return math.erfc(z / math.sqrt(2.0))
    return min(1.0, max(0.0, 1.0 - t_within(t, df)))


def t_quantile(probability: float, df: int) -> float:
    """The upper `probability` quantile (0.5 < probability < 1) of Student's t with `df`
    degrees of freedom, by bisection on its exact distribution function (the finite series of
    Abramowitz and Stegun 26.7.3-4; scipy.stats is not imported, as above). Beyond
    T_SERIES_DF degrees of freedom, whose series would take a second at a million, their
    expansion about the normal quantile (26.7.5): within 1e-10 of scipy's there
    (tests/tools/test_stats.py)."""
    if not 0.5 < probability < 1 or df < 1:
        raise ValueError(f"t quantile of {probability} with {df} degrees of freedom")
    if df > T_SERIES_DF:
        z = NormalDist().inv_cdf(probability)
        g = (
            (z**3 + z) / 4,
            (5 * z**5 + 16 * z**3 + 3 * z) / 96,
            (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
            (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
        )
        return float(z + sum(term / df ** (k + 1) for k, term in enumerate(g)))
    target = 2.0 * probability - 1.0  # P(|T| <= t)

    def within(t: float) -> float:
        return t_within(t, df)

    low, high = 0.0, 1.0
    while within(high) < target:
        low, high = high, high * 2.0
    for _ in range(100):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        low, high = (middle, high) if within(middle) < target else (low, middle)
    return high


def bh_adjust(p_values: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (q-values)."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return p.copy()
    order = np.argsort(p)
    ranked = p[order] * p.size / np.arange(1, p.size + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty_like(q)
    out[order] = np.minimum(q, 1.0)
    return out


def pair_statistics(
    baseline: Sequence[np.ndarray], contender: Sequence[np.ndarray], confidence: float
) -> PairStats:
    """Compare each baseline sample with its contender sample (positive values only)."""
    x_counts = np.array([len(v) for v in baseline], dtype=np.int64)
    y_counts = np.array([len(v) for v in contender], dtype=np.int64)

    def column(samples: Sequence[np.ndarray]) -> np.ndarray:
        return np.concatenate([np.asarray(v, dtype=float) for v in samples] or [np.zeros(0)])

    return pair_statistics_columns(
        column(baseline),
        np.cumsum(x_counts) - x_counts,
        x_counts,
        column(contender),
        np.cumsum(y_counts) - y_counts,
        y_counts,
        confidence,
    )


def pair_statistics_columns(
    x_values: np.ndarray,
    x_starts: np.ndarray,
    x_counts: np.ndarray,
    y_values: np.ndarray,
    y_starts: np.ndarray,
    y_counts: np.ndarray,
    confidence: float,
) -> PairStats:
    """pair_statistics on columnar data: pair i compares x_values[x_starts[i]:][:x_counts[i]]
    with the same slice of y_values. Pairs with the same sizes are computed as one block."""
    count = len(x_counts)
    out = {name: np.full(count, np.nan) for name in PairStats.__dataclass_fields__}
    if count == 0:
        return PairStats(**out)
    key = x_counts * (int(y_counts.max()) + 1) + y_counts
    for value in np.unique(key):
        idx = np.flatnonzero(key == value)
        n, m = int(x_counts[idx[0]]), int(y_counts[idx[0]])
        if n == 0 or m == 0:
            continue
        x = x_values[x_starts[idx][:, None] + np.arange(n)]
        y = y_values[y_starts[idx][:, None] + np.arange(m)]
        _group(x, y, idx, confidence, out)
    return PairStats(**out)


def _group(
    x: np.ndarray, y: np.ndarray, idx: np.ndarray, confidence: float, out: dict[str, np.ndarray]
) -> None:
    """Fill `out` at `idx` for a block of pairs that share their sizes (x: B×n, y: B×m)."""
    n, m = x.shape[1], y.shape[1]
    base_median, cont_median = np.median(x, axis=1), np.median(y, axis=1)
    out["baseline_median"][idx] = base_median
    out["contender_median"][idx] = cont_median
    # A difference of logs: exactly negated when the sides swap.
    out["log_ratio"][idx] = np.log(cont_median) - np.log(base_median)
    out["baseline_cv"][idx] = robust_cv(x)
    out["contender_cv"][idx] = robust_cv(y)

    # Hodges–Lehmann (Moses) interval: order statistics of all pairwise log differences.
    log_x, log_y = np.log(x), np.log(y)
    k = moses_rank(n, m, confidence)
    low, high, u = np.empty(len(idx)), np.empty(len(idx)), np.empty(len(idx))
    step = max(1, PAIRS_AT_ONCE // (n * m))
    for at in range(0, len(idx), step):
        part = slice(at, at + step)
        if n * m > PAIRS_AT_ONCE:  # (one pair: step is 1)
            low[part], high[part], u[part] = _without_pairs(log_x[at], log_y[at], k)
            continue
        diffs = np.sort((log_y[part, None, :] - log_x[part, :, None]).reshape(-1, n * m), axis=1)
        low[part], high[part] = diffs[:, k], diffs[:, n * m - 1 - k]
        u[part] = (diffs > 0).sum(axis=1) + 0.5 * (diffs == 0).sum(axis=1)
    out["log_ci_low"][idx] = low
    out["log_ci_high"][idx] = high
    out["p_value"][idx] = mann_whitney(log_x, log_y, u)
    out["smallest_p"][idx] = smallest_p(log_x, log_y)


def _without_pairs(x: np.ndarray, y: np.ndarray, k: int) -> tuple[float, float, float]:
    """For one pair of samples too large to hold their differences: order statistics k and
    nm-1-k of the differences y_j - x_i, and U (pairs y > x, ties counting half), from the
    sorted values alone. The high end is the low end of the sides swapped, negated, so that
    swapping the sides negates the interval exactly, as with the differences held."""
    xs, ys = np.sort(x), np.sort(y)
    below = np.searchsorted(xs, ys, side="left")  # per y, the x below it
    ties = np.searchsorted(xs, ys, side="right") - below
    u = float(below.sum()) + 0.5 * float(ties.sum())
    return _kth_difference(ys, xs, k), -_kth_difference(xs, ys, k), u


def _kth_difference(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """The k-th smallest (0-based) of the differences a_j - b_i of two sorted samples, without
    them: bracketed by bisection on its value (each step counts the differences at most a value,
    O(n log m), as searchsorted rounds a_j - d), then found exactly by stepping from just below
    the bracket to the next difference up, counted as the differences themselves compare."""

    def about(d: float) -> int:  # differences <= d, as searchsorted rounds a_j - d
        return len(a) * len(b) - int(np.searchsorted(b, a - d, side="left").sum())

    low, high = float(a[0] - b[-1]), float(a[-1] - b[0])  # the smallest and largest difference
    while high - low > _LOG_TOLERANCE:  # about(low) <= k < about(high)
        middle = low + (high - low) / 2.0
        if middle in (low, high):
            break
        if about(middle) > k:
            high = middle
        else:
            low = middle
    margin = _LOG_TOLERANCE
    low -= margin
    while True:
        first = _first_at_most(a, b, low)
        if len(a) * len(b) - int(first.sum()) > k:  # (rounding put the bracket too high)
            margin *= 16.0
            low -= margin
            continue
        above = first > 0  # each a_j's smallest difference above `low`: the next b_i down
        step = float((a[above] - b[first[above] - 1]).min())
        if len(a) * len(b) - int(_first_at_most(a, b, step).sum()) > k:
            return step
        low = step


def _first_at_most(a: np.ndarray, b: np.ndarray, d: float) -> np.ndarray:
    """Per a_j, the first i with a_j - b_i <= d as computed (len(b) where none): the
    differences fall as b_i rises, so a binary search, all a_j at once."""
    low = np.zeros(len(a), dtype=np.int64)
    high = np.full(len(a), len(b), dtype=np.int64)
    while True:
        open_ = low < high
        if not open_.any():
            return low
        middle = (low + high) // 2
        at = a - b[np.minimum(middle, len(b) - 1)] <= d
        high = np.where(open_ & at, middle, high)
        low = np.where(open_ & ~at, middle + 1, low)


def smallest_p(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per row, the p-value mann_whitney gives when every y is above every x, each side's values
    kept: without ties min_p_value(n, m); with ties within a side larger (10 and 10 with one
    tie: 1.8e-4 against 1.1e-5, TIED_EXACT_VALUES), which is what a lone change of a benchmark
    with tied repetitions can reach at most."""
    n, m = x.shape[1], y.shape[1]
    apart = y - y.min(axis=1, keepdims=True) + x.max(axis=1, keepdims=True) + 1.0
    return mann_whitney(x, apart, np.full(len(x), float(n * m)))


def _tie_terms(merged: np.ndarray) -> np.ndarray:
    """Sum of t^3 - t over the groups of t equal values, per row of a row-sorted array."""
    rows, width = merged.shape
    starts_run = np.ones((rows, width), dtype=bool)
    starts_run[:, 1:] = merged[:, 1:] != merged[:, :-1]
    run = np.cumsum(starts_run, axis=1) - 1 + (np.arange(rows) * width)[:, None]
    t = np.bincount(run.ravel(), minlength=rows * width).astype(float)
    terms: np.ndarray = (t**3 - t).reshape(rows, width).sum(axis=1)
    return terms


_erfc = np.frompyfunc(math.erfc, 1, 1)


@lru_cache(maxsize=256)
def _u_survival(n: int, m: int) -> np.ndarray:
    """P(U >= k) for k = 0..n*m under the null hypothesis, no ties."""
    counts = u_null_counts(n, m)
    survival: np.ndarray = np.cumsum(counts[::-1])[::-1] / counts.sum()
    return survival


@lru_cache(maxsize=4096)
def _tied_null(n: int, sizes: tuple[int, ...]) -> np.ndarray:
    """Under the null hypothesis, the number of ways n of the values (in tie groups of `sizes`,
    in order) give each sum of doubled mid-ranks R2 = 0, 1, ... (the rank sum of ties)."""
    total = sum(sizes)
    width = n * (2 * total - n + 1) + 1  # the largest R2: the n largest values
    ways = np.zeros((n + 1, width))  # ways[c, r]: c values chosen, summing to r
    ways[0, 0] = 1.0
    start = 0
    for size in sizes:
        score = 2 * start + size + 1  # twice the group's mid-rank
        grown = ways.copy()  # none of this group chosen
        for a in range(1, min(size, n) + 1):
            shift = a * score
            grown[a:, shift:] += math.comb(size, a) * ways[: n + 1 - a, : width - shift]
        ways = grown
        start += size
    counts: np.ndarray = ways[n]
    return counts


def _tied_exact(x: np.ndarray, y: np.ndarray) -> float:
    """Exact two-sided Mann–Whitney p-value of one pair of samples with ties: the permutation
    distribution of the rank sum given the ties (scipy.stats.mannwhitneyu with
    method=PermutationMethod() gives the same)."""
    values, group, sizes = np.unique(
        np.concatenate([x, y]), return_inverse=True, return_counts=True
    )
    doubled_mid_rank = 2 * (np.cumsum(sizes) - sizes) + sizes + 1
    r2 = int(doubled_mid_rank[group.reshape(-1)[: len(x)]].sum())
    counts = _tied_null(len(x), tuple(sizes.tolist()))
    tail = min(counts[r2:].sum(), counts[: r2 + 1].sum()) / counts.sum()
    return float(min(1.0, 2.0 * tail))


def mann_whitney(x: np.ndarray, y: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
    """Two-sided Mann–Whitney U p-values per row of x (B×n) and y (B×m): exact without ties
    (for n*m <= EXACT_PAIRS, as scipy.stats.mannwhitneyu's "exact"), else the normal
    approximation with tie and continuity corrections (its "asymptotic"), for n + m <=
    TIED_EXACT_VALUES at least the exact p-value given the ties (its PermutationMethod()).
    `u` may pass the already computed U statistics (pairs y > x, ties counting half)."""
    n, m = x.shape[1], y.shape[1]
    if u is None:
        diffs = (y[:, None, :] - x[:, :, None]).reshape(len(x), n * m)
        u = (diffs > 0).sum(axis=1) + 0.5 * (diffs == 0).sum(axis=1)
    big = np.maximum(u, n * m - u)  # two-sided: the larger of U and its mirror
    merged = np.sort(np.concatenate([x, y], axis=1), axis=1)
    tied = (np.diff(merged, axis=1) == 0).any(axis=1)
    p = np.ones(len(x))

    exact = ~tied if n * m <= EXACT_PAIRS else np.zeros(len(x), dtype=bool)
    if exact.any():
        p[exact] = 2.0 * _u_survival(n, m)[big[exact].astype(np.int64)]
    normal = ~exact
    if normal.any():
        total = n + m
        ties = np.zeros(len(x))
        with_ties = tied & normal
        if with_ties.any():
            ties[with_ties] = _tie_terms(merged[with_ties])
        variance = n * m / 12.0 * ((total + 1) - ties[normal] / (total * (total - 1)))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (big[normal] - n * m / 2.0 - 0.5) / np.sqrt(variance)
        # All values equal gives 0/0: no evidence of a difference (p = 1).
        z = np.where(np.isfinite(z), z, -np.inf)
        p[normal] = np.asarray(_erfc(z / math.sqrt(2.0)), dtype=float)
    if n + m <= TIED_EXACT_VALUES:
        for row in np.flatnonzero(tied).tolist():
            p[row] = max(p[row], _tied_exact(x[row], y[row]))
    return np.clip(p, 0.0, 1.0)


@dataclass(frozen=True)
class SummaryStats:
    """The statistics of pairs known only by summaries (nvbench without --jsonbin: each side's
    mean, relative standard deviation and sample count), one entry per pair."""

    log_ratio: np.ndarray  # log(mean(contender) / mean(baseline))
    log_ci_low: np.ndarray  # Welch's t interval of that log ratio
    log_ci_high: np.ndarray
    p_value: np.ndarray  # two-sided Welch's t on the log means
    df: np.ndarray  # Welch-Satterthwaite degrees of freedom, rounded down


def summary_statistics(
    b_mean: np.ndarray,
    b_cv: np.ndarray,
    b_n: np.ndarray,
    c_mean: np.ndarray,
    c_cv: np.ndarray,
    c_n: np.ndarray,
    confidence: float,
) -> SummaryStats:
    """Welch's t on the log ratio of two means from their summaries. By the delta method the
    log of a mean of n values with relative standard deviation cv has variance cv^2 / n, so the
    log ratio d has standard error se = sqrt(cv_b^2 / n_b + cv_c^2 / n_c), with Welch-
    Satterthwaite's degrees of freedom (rounded down: the interval is never narrower); the
    interval is d -/+ t se and the p-value that of d / se. Needs n >= 2 and a finite cv a side
    (the caller checks); logs keep it antisymmetric, as pair_statistics is."""
    vb, vc = b_cv**2 / b_n, c_cv**2 / c_n
    se = np.sqrt(vb + vc)
    with np.errstate(divide="ignore", invalid="ignore"):
        df_real = (vb + vc) ** 2 / (vb**2 / (b_n - 1) + vc**2 / (c_n - 1))
    df = np.where(np.isfinite(df_real), np.floor(np.maximum(df_real, 1.0)), b_n + c_n - 2)
    log_ratio = np.log(c_mean) - np.log(b_mean)
    tail = 1.0 - (1.0 - confidence) / 2.0
    quantiles = {d: t_quantile(tail, d) for d in {int(v) for v in df.tolist()}}
    half = np.array([quantiles[int(d)] for d in df.tolist()]) * se
    p = np.ones(len(log_ratio))
    for i, (d, s, f) in enumerate(zip(log_ratio.tolist(), se.tolist(), df.tolist())):
        if s > 0:
            p[i] = t_two_sided_p(d / s, int(f))
        elif d != 0:
            p[i] = 0.0  # no spread on either side and a difference: no chance
    return SummaryStats(log_ratio, log_ratio - half, log_ratio + half, p, df)
