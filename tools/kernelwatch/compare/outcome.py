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
    # `ab` only: both builds made its binary identically (ab.py), so it was not measured
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
    # without --jsonbin), by Welch's t on the means, not per sample (compare/judge.py).
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


# The decision rule (kernelwatch.compare's docstring): from the ratio of medians, its interval,
# the adjusted p-value and the limit to a verdict and its reason; which verdicts fail.


# Where the test cannot decide (too few repetitions, or too few to reach alpha after the
# correction), a change past the limit is an unverified REGRESSION, which fails only when it is
# at least this factor worse (Settings.strict: at any size). Noise does not double a GPU
# kernel's time: the widest spread measured between two runs of one build was 4.7 % (two H200
# cards, docs/measurement.md).
UNVERIFIED_FAIL_RATIO = 2.0


# Verdict codes of decide_many, in increasing precedence.
_SAME, _SAME_SIGNIFICANT, _PAST_NOT_SIGNIFICANT, _NOISY, _CHANGED, _TOO_FEW = range(6)


def decide_many(
    log_ratio: np.ndarray,
    log_ci_low: np.ndarray,
    log_ci_high: np.ndarray,
    q: np.ndarray,
    *,
    alpha: float,
    limit: np.ndarray,
    higher_is_better: bool,
    floor_binds: np.ndarray,
    too_few: list[str | None],
    confidence: float,
    powerless: list[str | None] | None = None,
) -> tuple[list[Verdict], list[str], np.ndarray]:
    """Verdicts, reasons, and which verdicts are unverified, for benchmarks measured on both
    sides (the rule: kernelwatch.compare).

    log_ratio: log(median(contender) / median(baseline)); log_ci_*: its confidence interval;
    q: BH-adjusted p-values (NaN when untested); too_few: why a benchmark was not tested;
    powerless: why a tested one could not reach q < alpha however far apart its samples
    (powerless_reasons). The limits are symmetric in log space: a ratio beyond 1 + limit or
    below 1 / (1 + limit) is a change."""
    band = np.log1p(limit)
    sign = -1.0 if higher_is_better else 1.0  # turns log ratios into "worse by"
    worse = sign * log_ratio
    low = np.minimum(sign * log_ci_low, sign * log_ci_high)
    high = np.maximum(sign * log_ci_low, sign * log_ci_high)
    with np.errstate(invalid="ignore"):
        significant = q < alpha  # NaN (untested) compares False
    past = np.abs(worse) > band

    code = np.where(significant, _SAME_SIGNIFICANT, _SAME)
    code[past & ~significant] = _PAST_NOT_SIGNIFICANT
    code[(low < -band) & (high > band)] = _NOISY
    code[significant & past] = _CHANGED
    # No test, or one that could not have called it: a change past the limit is judged as
    # unverified, never left UNSURE (3 and 3 repetitions hid a 100x slowdown that way).
    weak = np.array([w is not None for w in (powerless or [None] * len(code))], dtype=bool)
    unverified = np.array([t is not None for t in too_few], dtype=bool)
    unverified |= weak & past & ~significant
    code[unverified] = _TOO_FEW
    why = [t or w for t, w in zip(too_few, powerless or too_few)]

    verdicts: list[Verdict] = []
    reasons: list[str] = []
    within_cache: dict[tuple[float, bool], str] = {}
    for i, kind in enumerate(code.tolist()):
        lim, binds = float(limit[i]), bool(floor_binds[i])
        floor = " (noise floor)" if binds else ""
        if kind == _TOO_FEW:
            if past[i]:  # no test possible, but the change is past the limit: say so
                ratio = float(log_ratio[i])
                bound = math.expm1(math.copysign(math.log1p(lim), ratio)) * 100
                verdicts.append(Verdict.REGRESSION if worse[i] > 0 else Verdict.IMPROVEMENT)
                reasons.append(
                    f"{math.expm1(ratio) * 100:+.1f}%, beyond the {bound:+.1f}% limit{floor}; "
                    f"unverified: {why[i]}"
                )
            else:
                verdicts.append(Verdict.UNSURE)
                reasons.append(why[i] or "")
            continue
        if kind == _SAME:  # the common case: one string per distinct limit
            reason = within_cache.get((lim, binds))
            if reason is None:
                reason = within_cache[(lim, binds)] = f"within {_limits(lim)}{floor}"
            verdicts.append(Verdict.SAME)
            reasons.append(reason)
            continue
        ratio = float(log_ratio[i])
        change = f"{math.expm1(ratio) * 100:+.1f}%"
        crossed = f"{math.expm1(math.copysign(math.log1p(lim), ratio)) * 100:+.1f}%"
        if kind == _CHANGED:
            verdicts.append(Verdict.REGRESSION if worse[i] > 0 else Verdict.IMPROVEMENT)
            reasons.append(f"{change}, beyond the {crossed} limit{floor}; q={q[i]:.2g}")
        elif kind == _NOISY:
            verdicts.append(Verdict.UNSURE)
            reasons.append(
                f"too noisy: the {confidence:.0%} interval reaches past both limits "
                f"{_limits(lim)}{floor}"
            )
        elif kind == _PAST_NOT_SIGNIFICANT:
            verdicts.append(Verdict.UNSURE)
            reasons.append(f"{change}, beyond the {crossed} limit{floor}, but q={q[i]:.2g}")
        else:
            verdicts.append(Verdict.SAME)
            reasons.append(f"{change}: significant (q={q[i]:.2g}) but within {_limits(lim)}{floor}")
    return verdicts, reasons, unverified


def _limits(limit: float) -> str:
    return f"[{-limit / (1 + limit) * 100:+.1f}%, {limit * 100:+.1f}%]"


def decide(
    *,
    log_ratio: float,
    log_ci: tuple[float, float],
    q: float,
    alpha: float,
    limit: float,
    higher_is_better: bool = False,
    floor_binds: bool = False,
    too_few: str | None = None,
    confidence: float = 0.95,
    powerless: str | None = None,
) -> tuple[Verdict, str]:
    """decide_many for one benchmark."""
    verdicts, reasons, _ = decide_many(
        np.array([log_ratio]),
        np.array([log_ci[0]]),
        np.array([log_ci[1]]),
        np.array([q]),
        alpha=alpha,
        limit=np.array([limit]),
        higher_is_better=higher_is_better,
        floor_binds=np.array([floor_binds]),
        too_few=[too_few],
        confidence=confidence,
        powerless=[powerless],
    )
    return verdicts[0], reasons[0]


def too_few_reason(n: int, m: int, need: int, aggregates: bool, nvbench: bool = False) -> str:
    if aggregates and nvbench:  # its summaries: the samples are in --jsonbin's files
        return f"nvbench summaries only ({n} and {m} values; need {need}): run it with --jsonbin"
    if aggregates:
        return (
            f"aggregates only ({n} and {m} values; need {need}): "
            "keep the repetitions in the JSON file"
        )
    return f"too few repetitions ({n} and {m}; need {need})"


def powerless_reasons(
    n: np.ndarray, m: np.ndarray, tested: np.ndarray, alpha: float
) -> list[str | None]:
    """For each tested benchmark, why its test cannot reach q < alpha however far apart the
    two samples are, or None where it can. The smallest q a change alone can get is the
    smallest exact Mann-Whitney p-value (2 / C(n+m, n): 0.1 for 3 and 3) times the number of
    benchmarks tested (Benjamini-Hochberg ranks it first of them); where that is not below
    alpha, a lone change is called only by the unverified rule. A change the test did call
    significant stays a tested verdict (decide_many)."""
    family = int(tested.sum())
    cache: dict[tuple[int, int], str | None] = {}
    out: list[str | None] = []
    for ok, n_i, m_i in zip(tested.tolist(), n.tolist(), m.tolist()):
        if not ok:
            out.append(None)
            continue
        if (n_i, m_i) not in cache:
            smallest = stats.min_p_value(n_i, m_i)
            reason = None
            if smallest * family >= alpha:
                reason = (
                    f"{n_i} and {m_i} repetitions cannot reach q < {alpha:g} (the smallest "
                    f"p-value is {smallest:.2g})"
                )
                if family > 1 and smallest < alpha:
                    reason = (
                        f"{n_i} and {m_i} repetitions cannot reach q < {alpha:g} among "
                        f"{family} benchmarks alone (the smallest p-value is {smallest:.2g}; "
                        f"Benjamini-Hochberg needs p < {alpha / family:.2g})"
                    )
            cache[(n_i, m_i)] = reason
        out.append(cache[(n_i, m_i)])
    return out


def fails(
    verdicts: list[Verdict],
    unverified: np.ndarray,
    log_ci_low: np.ndarray,
    log_ci_high: np.ndarray,
    higher_is_better: bool,
    strict: bool,
) -> list[bool]:
    """Which verdicts fail: every tested REGRESSION; an unverified one (no test, or one that
    could not reach alpha) with `strict`, or when its whole confidence interval is at least
    UNVERIFIED_FAIL_RATIO worse (with one value a side, the ratio itself). The interval, not
    the ratio of medians: with 4 and 4 repetitions two slow outliers (3.5x, a tenth of the
    values) doubled a median of an unchanged benchmark, but not the interval's low end."""
    sign = -1.0 if higher_is_better else 1.0
    least = np.minimum(sign * log_ci_low, sign * log_ci_high).tolist()
    gross = math.log(UNVERIFIED_FAIL_RATIO)
    return [
        v is Verdict.REGRESSION and (not weak or strict or w >= gross)
        for v, weak, w in zip(verdicts, unverified.tolist(), least)
    ]
