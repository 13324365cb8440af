"""What a comparison decides, as data: the verdicts, the settings that decide them, each
benchmark's Comparison and the whole Report (views in render/ only show them)."""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from kernelwatch import defaults, stats
from kernelwatch.config import ThresholdRule
from kernelwatch.errors import InputError
from kernelwatch.explanation import Explanation
from kernelwatch.results import Metric, ResultSet


class Verdict(enum.StrEnum):
    REGRESSION = "REGRESSION"  # a slowdown that fails the comparison
    SLOWER = "SLOWER"  # a slowdown shown but not failing (worded_for: why it does not fail)
    IMPROVEMENT = "IMPROVEMENT"
    SAME = "SAME"
    UNSURE = "UNSURE"
    NEW = "NEW"
    MISSING = "MISSING"
    ERROR = "ERROR"
    # `ab` only: both builds made its binary identically (identical.py), so it was not measured
    IDENTICAL = "IDENTICAL"


# Worst first: the order of tables and of the JSON list.
SEVERITY: Mapping[Verdict, int] = {
    v: i
    for i, v in enumerate(
        [
            Verdict.REGRESSION,
            Verdict.ERROR,
            Verdict.MISSING,
            Verdict.SLOWER,
            Verdict.UNSURE,
            Verdict.NEW,
            Verdict.SAME,
            Verdict.IMPROVEMENT,
            Verdict.IDENTICAL,
        ]
    )
}

# The verdicts that say "slower than its limit", failing or not.
SLOWDOWNS = frozenset({Verdict.REGRESSION, Verdict.SLOWER})


def worded_for(verdict: Verdict, failed: bool) -> Verdict:
    """The word a verdict is shown with: REGRESSION only where it fails; a slowdown that does
    not (host-bound against another host, not confirmed by a re-run, unverified under 2x) is
    SLOWER, so that no row reads REGRESSION under a passing headline."""
    return Verdict.SLOWER if verdict is Verdict.REGRESSION and not failed else verdict


# Why these defaults: defaults.py (where --help reads them).
DEFAULT_THRESHOLD = defaults.DEFAULT_THRESHOLD
DEFAULT_NOISE_MULTIPLIER = defaults.DEFAULT_NOISE_MULTIPLIER
DEFAULT_ALPHA = defaults.DEFAULT_ALPHA


@dataclass(frozen=True)
class Settings:
    alpha: float = DEFAULT_ALPHA
    threshold: float = DEFAULT_THRESHOLD
    min_repetitions: int = 3
    noise_multiplier: float = DEFAULT_NOISE_MULTIPLIER
    rules: tuple[ThresholdRule, ...] = ()
    allow_missing: bool = False
    allow_errors: bool = False
    allow_gpu_mismatch: bool = False
    strict: bool = False  # an unverified REGRESSION (too few repetitions) fails at any size

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha {self.alpha}: must be between 0 and 1")
        if self.min_repetitions < 1:
            raise InputError(f"min repetitions {self.min_repetitions}: must be at least 1")
        # finite too: a noise multiplier of inf made every change SAME (a 50 % regression)
        for what, value in (
            ("threshold", self.threshold),
            ("noise multiplier", self.noise_multiplier),
        ):
            if not (value >= 0 and math.isfinite(value)):
                raise InputError(f"{what} {value:g}: must be a finite number >= 0")

    @property
    def confidence(self) -> float:
        """Level of the confidence interval of the ratio: 1 - alpha."""
        return 1.0 - self.alpha


class SideSummary(NamedTuple):
    n: int  # values compared (repetitions; per-file aggregates for aggregates-only input)
    median: float | None  # of the metric; times in ns
    robust_cv: float | None
    processes: int  # files (processes) the values came from
    from_aggregates: bool


# NamedTuples, not frozen dataclasses: as immutable, and 10,000 of them build 5x faster.
class Comparison(NamedTuple):
    name: str
    verdict: Verdict
    reason: str
    failed: bool  # counts toward exit status 1
    baseline: SideSummary | None = None
    contender: SideSummary | None = None
    ratio: float | None = None  # median(contender) / median(baseline) of the metric
    ci_low: float | None = None  # confidence interval of that ratio
    ci_high: float | None = None
    p_value: float | None = None  # Mann–Whitney U, two-sided
    q_value: float | None = None  # Benjamini–Hochberg adjusted
    threshold: float | None = None  # configured threshold for this benchmark
    noise_floor: float | None = None
    limit: float | None = None  # max(threshold, noise_floor)
    # Set by `kernelwatch run` for REGRESSION rows it re-ran in a fresh process: True when every
    # re-run regressed again (still failing), False when one did not (shown, not failing).
    confirmed: bool | None = None
    # The level the comparison crosses ("process", "card", "host"), whether this benchmark's
    # spread there was measured (False: the prior), and the smallest slowdown (a fraction)
    # caught with 90 % probability (None when too few values to test).
    level: str | None = None
    level_measured: bool | None = None
    sensitivity: float | None = None
    host_bound: bool = False
    label: str | None = None  # Google Benchmark's `label` of the benchmark (contender's first)
    # A process that was to measure it crashed, hung or lost the GPU (completeness.py; the reason
    # says on which side and in which run): an ERROR row of its own, or a kept verdict.
    crashed: bool = False
    # Judged from each side's summary (mean, relative standard deviation, sample count: nvbench
    # without --jsonbin), by Welch's t on the means, not per sample (compare/summaries.py).
    from_summaries: bool = False

    @property
    def shown_name(self) -> str:
        """The name as outputs show it: with its label, if it has one."""
        return f"{self.name} [{self.label}]" if self.label else self.name

    def worse_by(self, higher_is_better: bool) -> float:
        """Log of the change in the bad direction (for sorting); -inf when there is none."""
        if self.ratio is None:
            return -math.inf
        log_ratio = math.log(self.ratio)
        return -log_ratio if higher_is_better else log_ratio


class SuiteChange(NamedTuple):
    """The suite as a whole: the geometric mean of the ratios of the benchmarks that can fail on
    their own, its confidence interval (Student's t over their log ratios), and the geometric
    mean of their limits. A REGRESSION of the suite when that interval lies wholly past the
    limit on the worse side: the benchmarks moved, on average, by more than their limits allow,
    by a margin their own spread supports (a row within its limit cannot move the mean past
    it: only changes past their limits can)."""

    ratio: float
    ci_low: float
    ci_high: float
    limit: float  # geometric mean of the benchmarks' limits, as a fraction
    benchmarks: int  # how many it is over
    confidence: float
    higher_is_better: bool

    @property
    def limit_ratio(self) -> float:
        """The ratio past which the suite is worse: 1 + limit (1 / (1 + limit) for rates)."""
        return 1.0 / (1.0 + self.limit) if self.higher_is_better else 1.0 + self.limit

    @property
    def verdict(self) -> Verdict:
        """REGRESSION, IMPROVEMENT (the interval wholly past the limit on that side) or SAME."""
        low, high = self.ci_low, self.ci_high
        if self.higher_is_better:  # as "worse by" ratios
            low, high = 1.0 / high, 1.0 / low
        if low > 1.0 + self.limit:
            return Verdict.REGRESSION
        if high < 1.0 / (1.0 + self.limit):
            return Verdict.IMPROVEMENT
        return Verdict.SAME

    @property
    def regression(self) -> bool:
        return self.verdict is Verdict.REGRESSION


@dataclass(frozen=True)
class Report:
    metric: Metric
    settings: Settings
    baseline: ResultSet
    contender: ResultSet
    comparisons: tuple[Comparison, ...]  # worst first
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # Why benchmarks changed, by name (explanation.py; explain.py fills them): set after the comparison, never by it.
    explanations: Mapping[str, Explanation] = field(default_factory=dict)

    def counts(self) -> dict[Verdict, int]:
        found = Counter(c.verdict for c in self.comparisons)
        return {v: found.get(v, 0) for v in Verdict}

    def geomean_ratio(self) -> tuple[float, int] | None:
        """Geometric mean of the ratios of benchmarks measured on both sides, and their count."""
        ratios = [c.ratio for c in self.comparisons if c.ratio is not None]
        if not ratios:
            return None
        return math.exp(math.fsum(math.log(r) for r in ratios) / len(ratios)), len(ratios)

    @cached_property
    def suite(self) -> SuiteChange | None:
        """The suite as a whole (SuiteChange), over the benchmarks measured on both sides that
        can fail on their own: host-bound ones are left out (their time moves with the host's,
        20-140 % between hosts), and so are those a re-run did not confirm. None for fewer
        than two."""
        rows = [
            (c.ratio, c.limit)
            for c in self.comparisons
            if c.ratio is not None
            and c.limit is not None
            and not c.host_bound
            and c.confirmed is not False
        ]
        if len(rows) < 2:
            return None
        logs = np.log(np.array([r for r, _ in rows]))
        limit = math.expm1(float(np.log1p(np.array([lim for _, lim in rows])).mean()))
        mean, sd = float(logs.mean()), float(logs.std(ddof=1))
        confidence = self.settings.confidence
        half = stats.t_quantile((1.0 + confidence) / 2.0, len(rows) - 1) * sd / math.sqrt(len(rows))
        return SuiteChange(
            math.exp(mean),
            math.exp(mean - half),
            math.exp(mean + half),
            limit,
            len(rows),
            confidence,
            self.metric.higher_is_better,
        )

    @property
    def failed(self) -> bool:
        """A failing benchmark, or a regression of the suite as a whole (SuiteChange)."""
        suite = self.suite
        return any(c.failed for c in self.comparisons) or (suite is not None and suite.regression)

    @property
    def exit_status(self) -> int:
        return 1 if self.failed else 0
