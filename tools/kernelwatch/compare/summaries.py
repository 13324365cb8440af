"""Benchmarks judged from summaries instead of samples: nvbench's states without `--jsonbin`
carry no sample times, only each state's mean cold GPU time, the samples' relative standard
deviation and their count (kernelwatch.nvbench puts them in the row's counters). That is enough
for Welch's t on the log ratio of the means (stats.summary_statistics), which then stands in for
the per-sample Mann-Whitney test and Hodges-Lehmann interval; the rest of the decision (limit,
noise floor, Benjamini-Hochberg, verdicts) is the same. Every such row says `from summaries`.

The side against a summary may have samples (nvbench with `--jsonbin`, or Google Benchmark
repetitions): their mean, relative standard deviation and count are taken from the values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelwatch import nvbench
from kernelwatch import stats
from kernelwatch.compare.sides import Measured
from kernelwatch.results import Metric, ResultSet

MARKER = "from summaries"


@dataclass(frozen=True)
class Summaries:
    """Which measured benchmarks are judged from summaries (`mask`), their statistics (one
    entry per masked benchmark, in order) and their sample counts a side."""

    mask: np.ndarray
    statistics: stats.SummaryStats
    b_mean: np.ndarray
    c_mean: np.ndarray
    b_samples: np.ndarray
    c_samples: np.ndarray


def _side(
    result: ResultSet, k: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per benchmark k: whether its values are a summary row, and its mean, relative standard
    deviation and sample count (NaN where unknown)."""
    count = len(k)
    summary = np.zeros(count, dtype=bool)
    mean, cv, n = np.full(count, np.nan), np.full(count, np.nan), np.full(count, np.nan)
    columns = (nvbench.MEAN_KEY, nvbench.SAMPLES_COUNTER, nvbench.CV_COUNTER)
    present = [result.columns.get(key) for key in columns]
    gaps = [result.gaps.get(key) for key in columns]
    starts, counts = result.starts[k], result.counts[k]
    for i, (start, rows, agg) in enumerate(
        zip(starts.tolist(), counts.tolist(), result.from_aggregates[k].tolist())
    ):
        if agg:
            if rows != 1 or any(c is None for c in present):
                continue
            if any(g is not None and bool(g[start]) for g in gaps):
                continue
            m, s, c = (float(col[start]) for col in present if col is not None)
            summary[i] = True
            mean[i], n[i], cv[i] = m, s, c
        elif rows >= 2:
            own = values[start : start + rows]
            mean[i] = float(own.mean())
            cv[i] = float(own.std(ddof=1) / mean[i])
            n[i] = rows
    return summary, mean, cv, n


def from_summaries(
    baseline: ResultSet, contender: ResultSet, measured: Measured, metric: Metric, confidence: float
) -> Summaries | None:
    """The benchmarks of `measured` to judge from summaries: the time metric, a summary row
    with its mean, count and noise on at least one side, and a mean, a count of at least 2 and
    a finite relative standard deviation on both. None when there are none."""
    if metric.key != "real_time" or not len(measured.b):
        return None
    b_sum, b_mean, b_cv, b_n = _side(baseline, measured.b, measured.b_values)
    c_sum, c_mean, c_cv, c_n = _side(contender, measured.c, measured.c_values)
    with np.errstate(invalid="ignore"):
        usable = (
            (b_sum | c_sum)
            & (b_n >= 2)
            & (c_n >= 2)
            & np.isfinite(b_cv)
            & np.isfinite(c_cv)
            & (b_cv >= 0)
            & (c_cv >= 0)
            & (b_mean > 0)
            & (c_mean > 0)
        )
    if not usable.any():
        return None
    statistics = stats.summary_statistics(
        b_mean[usable],
        b_cv[usable],
        b_n[usable],
        c_mean[usable],
        c_cv[usable],
        c_n[usable],
        confidence,
    )
    return Summaries(usable, statistics, b_mean[usable], c_mean[usable], b_n[usable], c_n[usable])


def note(summaries: Summaries) -> str:
    """What the notes say about the benchmarks judged from summaries."""
    return (
        f"{int(summaries.mask.sum())} benchmark(s) judged {MARKER} (nvbench without --jsonbin: "
        "each side's mean cold GPU time, relative standard deviation and sample count): the "
        "change is the ratio of means and its test Welch's t on their logs (delta method), not "
        "per sample; the rows say so"
    )
