"""Deciding a verdict per benchmark from two result sets. Verdicts are data; render/ shows them.

The decision for a benchmark measured on both sides (see docs/compare.md):

* limit = max(threshold, noise floor); threshold from --threshold or the first matching config
  rule, noise floor = noise_multiplier x the benchmark's noise at the level the comparison
  crosses (levels.py: process, card or host, from the two contexts; a host configured
  unlike every baseline host: at least the host prior): the baseline's stored
  noise (baselines/<slug>/noise.json) or else computed as noise/ does; where that level was
  never measured, the prior for it (levels.prior); and at least the spread of the
  contender's own per-process medians.
* UNSURE if either side has fewer than min_repetitions values; but a ratio past the limit is
  then an unverified REGRESSION / IMPROVEMENT, and an unverified REGRESSION fails when it is
  at least UNVERIFIED_FAIL_RATIO worse (or at all, with `strict`). So is a ratio past the limit
  that the test did not call significant where it could not have: the smallest exact p-value
  for its repetitions, times the benchmarks tested (Benjamini-Hochberg), is not below alpha.
* REGRESSION / IMPROVEMENT if the Benjamini–Hochberg-adjusted Mann–Whitney p-value is below
  alpha and the ratio of medians is worse / better than the limit (symmetric in log space).
* UNSURE if the confidence interval of the ratio reaches past the limit on both sides, or if the
  ratio is past the limit without significance; SAME otherwise.
* A host-bound benchmark (its rows carry the counter `host_bound` = 1: its time includes host
  work) compared with a baseline measured on another host does not fail.
* The word says whether a row fails: REGRESSION fails; a slowdown that does not (unverified
  under 2x, host-bound against another host, not confirmed by a re-run) is SLOWER.
* The suite: where the confidence interval of the geometric mean of the ratios lies wholly past
  the geometric mean of the limits, the comparison fails as a regression of the suite
  (Report.suite_change), even when no row can fail on its own.
* Each benchmark's sensitivity: the smallest slowdown this comparison catches with 90 %
  probability, from its limit and the spread of the difference of the two medians.

In this module, top to bottom: what a comparison decides, as data (Verdict, Settings,
Comparison, Report; the rule above, decide_many / decide, the limit's wording, what fails);
what each side holds and what a contender is judged against at which level, with its spread
there (Reference); compare() itself, the verdict of every benchmark with the report's notes,
and those judged from summaries (nvbench without samples).
"""

from __future__ import annotations

import enum
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import NamedTuple

import numpy as np

from kernelwatch import defaults, kinds, levels, stats
from kernelwatch import noise as noises
from kernelwatch.config import ThresholdRule, threshold_for
from kernelwatch.errors import InputError
from kernelwatch.explanation import Explanation
from kernelwatch.levels import Level
from kernelwatch.results import (
    NVBENCH_CV_COUNTER,
    NVBENCH_MEAN_KEY,
    NVBENCH_SAMPLES_COUNTER,
    NVBENCH_SAMPLES_KEY,
    Metric,
    ResultSet,
    check_environment,
    gpu_model,
)

# What a comparison decides, as data: the verdicts, the settings that decide them, each
# benchmark's Comparison and the whole Report (views in render/ only show them).


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


# Where the defaults' reasons are written, said beside a default (Sources).
_MEASURED = "default: docs/measurement.md"


@dataclass(frozen=True)
class Sources:
    """Where each setting came from, in the words the report prints beside it (as `history
    changes` says of its threshold): its option, the settings file's name, or the default
    (verdict.settings resolves them, Config.origin words them)."""

    threshold: str = _MEASURED
    alpha: str = _MEASURED
    min_repetitions: str = "default"
    noise_multiplier: str = _MEASURED
    rules: str = ""  # the settings file that holds the per-benchmark threshold rules


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
    sources: Sources = Sources()

    def __post_init__(self) -> None:
        # At least 1e-15: 1 - alpha / 2 rounds to 1 below about 2.2e-16 (--alpha 1e-16 was an
        # internal error: the normal quantile of 1)
        if not 1e-15 <= self.alpha < 1:
            raise InputError(f"alpha {self.alpha:g}: must be at least 1e-15 and below 1")
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
    # without --jsonbin), by Welch's t on the means, not per sample (Summaries, below).
    from_summaries: bool = False

    @property
    def shown_name(self) -> str:
        """The name as outputs show it: with its label, if it has one."""
        return f"{self.name} [{self.label}]" if self.label else self.name

    @property
    def change(self) -> str:
        """Its verdict and change, as reasons and notes quote an earlier one: `SAME +0.2%`."""
        if self.ratio is None:
            return self.verdict.value
        return f"{self.verdict.value} {(self.ratio - 1) * 100:+.1f}%"

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
    # An anchored run's rows judged against the committed baseline instead of the anchor (the
    # anchor failed them: anchor.py): shown, but left out of the geomean and the suite, whose
    # ratios are all against one reference (this runner's anchor, not other cards).
    fallback: frozenset[str] = frozenset()

    def counts(self) -> dict[Verdict, int]:
        found = Counter(c.verdict for c in self.comparisons)
        return {v: found.get(v, 0) for v in Verdict}

    @cached_property
    def _measured(self) -> tuple[tuple[Comparison, ...], int]:
        """The rows measured on both sides against this report's baseline (the geomean's and
        the suite's), and how many measured rows that leaves out (`fallback`'s)."""
        measured = [c for c in self.comparisons if c.ratio is not None]
        kept = tuple(c for c in measured if c.name not in self.fallback)
        return kept, len(measured) - len(kept)

    def geomean_ratio(self) -> tuple[float, int] | None:
        """Geometric mean of the ratios of benchmarks measured on both sides against this
        report's baseline, and their count (geomean_left_out: the measured ones it is not
        over)."""
        ratios = [c.ratio for c in self._measured[0] if c.ratio is not None]
        if not ratios:
            return None
        return math.exp(math.fsum(math.log(r) for r in ratios) / len(ratios)), len(ratios)

    @property
    def geomean_left_out(self) -> int:
        """The benchmarks measured on both sides that the geomean and the suite leave out:
        judged against the committed baseline in an anchored run (`fallback`)."""
        return self._measured[1]

    @cached_property
    def suite(self) -> SuiteChange | None:
        """The suite as a whole (SuiteChange), over the benchmarks of the geomean that can fail
        on their own: host-bound ones are left out (their time moves with the host's,
        20-140 % between hosts), and so are those a re-run did not confirm. None for fewer
        than two."""
        rows = [
            (c.ratio, c.limit)
            for c in self._measured[0]
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

    def with_identical(self, left_out: Mapping[str, str]) -> Report:
        """The report with an IDENTICAL row (not failing, no ratio: out of the geomean and the
        suite) in place of each benchmark left unmeasured, with why (`left_out`)."""
        rows = [
            Comparison(name, Verdict.IDENTICAL, why, failed=False) for name, why in left_out.items()
        ]
        kept = tuple(c for c in self.comparisons if c.name not in left_out)
        return replace(self, comparisons=kept + tuple(sorted(rows)))


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
    smallest: np.ndarray,
    n: np.ndarray,
    m: np.ndarray,
    tested: np.ndarray,
    family: int,
    alpha: float,
) -> list[str | None]:
    """For each tested benchmark, why its test cannot reach q < alpha however far apart the
    two samples are, or None where it can. The smallest q a change alone can get is the
    smallest p-value its values can give (stats.smallest_p: 2 / C(n+m, n) without ties, 0.1
    for 3 and 3; more with tied repetitions) times the `family` of benchmarks tested
    (Benjamini-Hochberg ranks it first of them); where that is not below alpha, a lone change
    is called only by the unverified rule. A change the test did call significant stays a
    tested verdict (decide_many)."""
    out: list[str | None] = []
    for ok, p, n_i, m_i in zip(tested.tolist(), smallest.tolist(), n.tolist(), m.tolist()):
        if not ok or p * family < alpha:
            out.append(None)
            continue
        what = f"{n_i} and {m_i} repetitions"
        if p > stats.min_p_value(n_i, m_i) * 1.001:
            what += " with tied values"
        if family > 1 and p < alpha:
            out.append(
                f"{what} cannot reach q < {alpha:g} among {family} benchmarks alone (the "
                f"smallest p-value is {p:.2g}; Benjamini-Hochberg needs p < {alpha / family:.2g})"
            )
        else:
            out.append(f"{what} cannot reach q < {alpha:g} (the smallest p-value is {p:.2g})")
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


# What a contender is judged against and at which level: the baseline's runs it is compared with
# (its own card's, or all), the level crossed, each benchmark's spread at that level (stored,
# measured or the prior, with the notes saying which) and the sensitivity.


_LOG_RATIO_MAX = math.log(1e300)  # medians further apart hold no ratio (_measured_verdicts)

# Sensitivity is the slowdown caught with 90 % probability: the one-sided normal quantile.
_Z_POWER = 1.2815515655446004


@dataclass(frozen=True)
class Reference:
    """What a contender is judged by: `baseline`, the runs it is compared with; `crossing`, the
    level between them; `units`, how many runs measured that level's spread (1 + its degrees
    of freedom)."""

    baseline: ResultSet
    crossing: levels.Crossing
    units: int
    # The contender's card is of no kind the baseline holds, and the baseline holds one kind:
    # the spread between its hosts never crossed kinds, which differ by 0.6-1.0 % (median) and
    # up to 4.9 % (docs/measurement.md), so it says nothing of this card.
    unseen_kind: bool = False
    # The baseline centred on hosts of the contender's class (_of_host_class): the spreads
    # stored for the pool as it is are not its own. `class_hosts`: how many hosts of that class
    # its centre is the mean of.
    host_class: levels.HostClass | None = None
    class_hosts: int = 0


# Said where it applies: the level note quotes the host prior, which the unseen-kind prior exceeds
# (a 15 us kernel: limit 14.6 %, where the note's host prior alone gives 14.1 %).
_UNSEEN_KIND_PRIOR_TEXT = (
    f"the prior for an unseen kind, {levels.UNSEEN_KIND_PRIOR[0]:.2%} + "
    f"{levels.UNSEEN_KIND_PRIOR[1]:g} ns / time (or the host prior where larger)"
)


def judged_against(
    baseline: ResultSet,
    contender: ResultSet,
    metric: Metric,
    notes: list[str],
    unseen_kind: bool | None = None,
) -> Reference:
    """The runs of a pooled baseline on the contender's own card (process level); else all of
    them, held to the spread between their cards or hosts. A card of a kind the baseline holds
    (kinds.py) is held so too: GPU-a2348aed, matched to the kind of four of the H200
    baseline's cards (shape distance 0.12 %), timed 13 DRAM-read-bound reductions of unchanged
    code 1.2-2.5 % slower than all four, which agree within 0.2 % (docs/measurement.md, "Kinds
    of card"): no spread measured between the cards of a kind bounds a card it never held.
    A pooled baseline of hosts of both classes (one GPU, several) is centred on the contender's
    class where it holds hosts of both classes (_of_host_class).
    `unseen_kind`, where given, is the kind as told from the whole run: a re-run of the few
    benchmarks it flagged cannot tell it, and was held to the unseen-kind prior (a +3 %
    regression past a 1.4 % limit re-judged against 5.2 %, "not confirmed")."""
    # Checked here, naming the file, before anything reads the runs a side lists (noise.py's
    # readers take a damaged list for a result of one run, and match no kind of card).
    for side in (baseline, contender):
        levels.pooled_runs(side.context, _first_file(side))
    pooled = len(levels.units_of(contender.context)) > 1  # a pooled contender is not one card
    own = None if pooled else noises.runs_of_card(baseline, levels.unit_of(contender.context).card)
    if own is not None:
        # Cards of one model differ by up to 4.9 % on some kernels (docs/measurement.md): a
        # pooled baseline that holds a run on the contender's own card is compared by it.
        notes.append(
            "the baseline holds a run on this card: compared with that run (process level)"
        )
        return Reference(own, levels.crossing(own.context, contender.context), 1)
    baseline, host_class, class_hosts = _of_host_class(baseline, contender, metric, notes)
    units = levels.units_of(baseline.context)
    crossing = levels.crossing(baseline.context, contender.context)
    wide = Reference(
        baseline,
        crossing,
        _units_at(crossing.level, units),
        host_class=host_class,
        class_hosts=class_hosts,
    )
    if pooled:
        return wide
    if unseen_kind is not None:
        notes.append(
            "this card's kind as the whole run told it (a re-run of a few benchmarks cannot): "
            + (
                f"held to at least {_UNSEEN_KIND_PRIOR_TEXT}"
                if unseen_kind
                else "held to the spread between the baseline's hosts"
            )
        )
        return replace(wide, unseen_kind=unseen_kind)
    found = noises.kind_of(baseline, contender) if crossing.level is Level.HOST else None
    if found is None and len(units) == 1 and crossing.level in (Level.CARD, Level.HOST):
        # Two single runs on cards of two kinds (H200s, one host or two) differ by 4.5-4.7 % on
        # occupancy/smem_limited blocks_per_sm 3 (five pairs tried, docs/measurement.md), beyond
        # the card and host priors' limits; a card of the run's own kind is held as before.
        found = noises.kind_of_one_run(baseline, contender)
        found = found if found.kind is None else None
    if found is None:
        return wide
    if found.kind is None:
        # Of another kind, or too few benchmarks to tell (a filtered run): held as another kind
        # either way, so that a verdict does not hang on the filter.
        unseen = found.kinds < 2
        why = (
            f"fewer than {kinds.MIN_SHARED} benchmarks shared with the baseline tell nothing "
            "of this card's kind of card, so it may be of none of the baseline's "
            f"{found.kinds} kind(s)"
            if math.isnan(found.distance)
            else f"this card is of none of the baseline's {found.kinds} kind(s) of card (shape "
            f"distance {found.distance:.2%} from the nearest; one kind within "
            f"{kinds.KIND_DISTANCE:.2%})"
        )
        notes.append(
            f"{why}: held to the spread between all its hosts"
            + (
                f", at least {_UNSEEN_KIND_PRIOR_TEXT} (docs/measurement.md): with one kind, "
                "that spread never crossed kinds; add a run on a card of this kind to the "
                "baseline to judge it sharply"
                if unseen
                else ""
            )
        )
        return replace(wide, unseen_kind=unseen)
    notes.append(
        f"this card is of a kind the baseline holds (shape distance {found.distance:.2%}, "
        f"within {kinds.KIND_DISTANCE:.2%}), held all the same to the spread between all its "
        "hosts: a card of a held kind has timed unchanged code 2.5 % off its kind "
        '(docs/measurement.md, "Kinds of card"); an anchored run judges it sharply'
    )
    return wide


def _of_host_class(
    baseline: ResultSet, contender: ResultSet, metric: Metric, notes: list[str]
) -> tuple[ResultSet, levels.HostClass | None, int]:
    """A pooled baseline as if all its hosts were of the contender's class (levels.HostClass),
    with that class and its count of hosts, where it holds hosts of both classes
    (noise.to_host_class); else as it is (None, 0). Leaving each
    H200 host of the e5b8351 pool out in turn, 13 of 8,280 comparisons of unchanged code failed
    on 4 of 24 runs (the 2048^2 transposes of a two-GPU host +2.9 to +5.9 %), and kernels under
    50 us had a median sensitivity of 12-13 %; judged so, none, and 8.1-8.7 %
    (docs/measurement.md, "Classes of host")."""
    wanted = levels.contender_class(contender.context)
    shifted = None if wanted is None else noises.to_host_class(baseline, metric, wanted)
    if wanted is None or shifted is None:
        return baseline, None, 0
    hosts = levels.hosts_per_class(shifted.context)[wanted]
    named = f"{hosts} {wanted.value} host" + ("s" if hosts > 1 else "")
    notes.append(
        f"centred on the baseline's {named}, like this one: the other class's runs scaled by "
        "the ratio of the two classes' means per benchmark, so that the spread between hosts is "
        f"the spread within a class, taken x{_centre_factor(hosts):.2f} for a centre that is "
        f'the mean of {named} (docs/measurement.md, "Classes of host")'
    )
    return shifted, wanted, hosts


def _centre_factor(hosts: int) -> float:
    """A new host differs from the mean of `hosts` others by sqrt(1 + 1/hosts) times the
    spread between hosts: its own deviation and the mean's."""
    return math.sqrt(1.0 + 1.0 / hosts)


def _first_file(result: ResultSet) -> str:
    """The file whose context a side's is (its first: loading._side_context)."""
    return str(result.paths[0]) if result.paths else result.label


def _units_at(level: Level, units: tuple[levels.Unit, ...]) -> int:
    """The distinct cards (hosts at the host level) a level's spread was measured over."""
    return len({u.host if level is Level.HOST else u.card for u in units})


@dataclass(frozen=True)
class Spread:
    noise: np.ndarray  # relative spread of each benchmark at the level crossed
    measured: np.ndarray  # bool: measured at that level (False: the prior was used)
    # Per benchmark: the baseline's cards (hosts) at that level holding it, for the sensitivity
    units: np.ndarray


def spread_at_level(
    against: Reference,
    contender: ResultSet,
    measured: Measured,
    metric: Metric,
    stored_noise: noises.LevelNoise | None,
    notes: list[str],
) -> Spread:
    """Each benchmark's relative spread at the level the comparison crosses: the baseline's
    stored noise where there is one (for the time metric: noise.json describes times), else
    computed from its values (noise.py); where the level was never measured, the prior; at
    least the spread of the contender's own per-process medians, so a disturbed process of
    the judged run widens its limit instead of raising an alarm."""
    spreads = _computed_spreads(against, metric, measured)
    if stored_noise is not None and metric.key == noises.TIME.key and against.host_class is None:
        spreads = _stored_first(spreads, stored_noise.take(measured.names), notes)
    level = against.crossing.level
    durations = _durations(against.baseline, measured)
    model = gpu_model(against.baseline.context)
    gpu = model is not None
    one_gpu_hosts = against.crossing.one_gpu_hosts
    prior = levels.prior(level, durations, gpu=gpu, model=model, one_gpu_hosts=one_gpu_hosts)
    units = levels.units_of(against.baseline.context)
    counts = noises.units_holding(against.baseline, measured.b, level)
    if counts is None:
        counts = np.full(len(measured.names), against.units, dtype=np.int64)
    centred = against.host_class is not None and level is Level.HOST
    if centred:
        counts = counts - 1  # two classes' means taken out: a degree of freedom more
    at = _upper_bound(spreads.at(level), against, counts, prior, notes)
    if centred:
        at = at * _centre_factor(against.class_hosts)
    # Measured or not before the floors: a floor (np.fmax) makes a never-measured level finite,
    # and a one-card baseline against a host configured otherwise read "measured for every
    # benchmark" while every limit was the host prior.
    has = np.isfinite(at)
    # Never measured: the prior, or the baseline's own spread between processes where wider;
    # the floors come after, so they only widen (flooring NaN first dropped a noisy host-bound
    # copy's own spread: limits of 9.8 % became 5.0 %).
    at = np.where(has, at, np.fmax(spreads.process, prior))
    noise = _floored_where_unmeasured(at, against, durations, model, notes)
    notes.append(_level_note(against.crossing, units, has, model))
    own = noises.between_processes(contender, metric, measured.c, measured.c_values)
    return Spread(np.maximum(noise, own), has, counts)


def _computed_spreads(against: Reference, metric: Metric, measured: Measured) -> noises.LevelNoise:
    """Each benchmark's spreads computed from the baseline's values (noise.py)."""
    return noises.measure(against.baseline, metric, measured.b).levels()


def _stored_first(
    spreads: noises.LevelNoise, kept: noises.LevelNoise, notes: list[str]
) -> noises.LevelNoise:
    """The stored noise `kept` (aligned with `spreads`) where it holds the benchmark."""
    found = np.isfinite(kept.process)
    notes.append(
        f"noise: {kept.source} for {int(found.sum())} of "
        f"{len(found)} benchmark(s)"
        + ("" if found.all() else "; computed from its repetitions for the others")
    )
    return noises.LevelNoise(
        spreads.names,
        np.where(found, kept.process, spreads.process),
        np.where(found, kept.process_measured, spreads.process_measured),
        np.where(found, kept.card, spreads.card),
        np.where(found, kept.host, spreads.host),
    )


def _upper_bound(
    at: np.ndarray,
    against: Reference,
    counts: np.ndarray,
    prior: np.ndarray,
    notes: list[str],
) -> np.ndarray:
    """A spread measured above the process level, at the upper bound of its confidence interval
    for the cards or hosts it was measured over (`counts`, per benchmark: a pool may hold a
    benchmark from fewer of its runs); with too few of them, at least the prior."""
    level = against.crossing.level
    if level is Level.PROCESS:
        return at
    # One card or host measures no spread: a finite one there is not this baseline's.
    at = np.where(counts >= 2, at, np.nan)
    if not np.isfinite(at).any():
        return at
    factors = {n: levels.upper_bound_factor(n) for n in set(counts.tolist())}
    at = at * np.array([factors[n] for n in counts.tolist()], dtype=float)
    # Only where measured: a spread never measured is the prior's business, said as such.
    few = (counts < levels.MIN_UNITS) & np.isfinite(at)
    at = np.where(few, np.fmax(at, prior), at)
    measured = counts[np.isfinite(at)]
    low, high = int(measured.min()), int(measured.max())
    said = (
        f"{low} {level.label}s"
        if low == high
        else f"{low} to {high} {level.label}s (per benchmark, those of the runs holding it)"
    )
    bound = f"x{factors[low]:.2f}" if low == high else f"x{factors[high]:.2f}-x{factors[low]:.2f}"
    notes.append(
        f"the {level.label}-level spread, measured from {said}, is taken "
        f"at its upper {levels.UPPER_BOUND_CONFIDENCE:.0%} confidence bound ({bound})"
        + (f"; with fewer than {levels.MIN_UNITS}, at least the prior" if few.any() else "")
    )
    return at


def _floored_where_unmeasured(
    at: np.ndarray,
    against: Reference,
    durations: np.ndarray,
    model: str | None,
    notes: list[str],
) -> np.ndarray:
    """At least the prior (the baseline's GPU model's) where the baseline never measured a
    spread like this contender's: a card of an unseen kind, a host configured unlike all of the
    baseline's."""
    gpu = model is not None
    one_gpu_hosts = against.crossing.one_gpu_hosts
    if against.unseen_kind:
        unseen = levels.unseen_kind_prior(
            durations, gpu=gpu, model=model, one_gpu_hosts=one_gpu_hosts
        )
        at = np.fmax(at, unseen)
    if against.crossing.other_config:
        # Never measured on a host configured so (a driver, clock or power limit changed), even
        # on one of the baseline's own cards: at least the host prior, whatever the level.
        host = levels.prior(
            Level.HOST, durations, gpu=gpu, model=model, one_gpu_hosts=one_gpu_hosts
        )
        at = np.fmax(at, host)
        unlike = f" ({against.crossing.unlike})" if against.crossing.unlike else ""
        notes.append(
            f"this host is configured unlike every host of the baseline{unlike} "
            "(docs/results.md, fingerprint): each spread is at least the host-level prior"
        )
    return at


def _level_note(
    crossing: levels.Crossing, units: tuple[levels.Unit, ...], has: np.ndarray, model: str | None
) -> str:
    """Which level is crossed, and where its spread was measured or is the prior (the
    baseline's GPU model's)."""
    level = crossing.level
    relative, absolute = levels.prior_constants(level, model, crossing.one_gpu_hosts)
    per_time = f" + {absolute:g} ns / time" if model is not None else " (no GPU: no launch term)"
    # levels.prior holds every level to the process level's at least: say so where that is
    # the wider for some durations (the H100's one-GPU host prior, 0.70 % + 40 ns, was quoted
    # for a 5 us kernel held to the process prior's 0.81 % + 430 ns).
    process_relative, process_absolute = levels.prior_constants(Level.PROCESS, model)
    at_least = ""
    if level is not Level.PROCESS and (
        process_relative > relative or (model is not None and process_absolute > absolute)
    ):
        process_time = f" + {process_absolute:g} ns / time" if model is not None else ""
        at_least = f", at least the process-level prior {process_relative:.2%}{process_time}"
    if has.all():
        said = "measured for every benchmark"
    else:
        said = (
            f"measured for {int(has.sum())} of {len(has)} benchmark(s); never measured for "
            f"the others: the {level.label}-level prior {relative:.2%}{per_time}"
            f"{' (one-GPU hosts)' if _one_gpu_host_prior(crossing, model) else ''}{at_least}"
            f"{' (no runs of this model: the widest prior)' if _unmeasured_model(model) else ''} "
            "(docs/measurement.md)"
        )
    return (
        f"level: {level.label} ({crossing.why}; baseline: {levels.describe(units)}); "
        f"its spread {said}"
    )


def _one_gpu_host_prior(crossing: levels.Crossing, model: str | None) -> bool:
    """Whether the host prior taken is the one among one-GPU hosts (levels.ONE_GPU_HOSTS)."""
    return crossing.level is Level.HOST and crossing.one_gpu_hosts and model in levels.ONE_GPU_HOSTS


def _unmeasured_model(model: str | None) -> bool:
    """A GPU model none of whose runs went into levels.PRIORS."""
    return model is not None and model not in levels.PRIORS


def _durations(baseline: ResultSet, measured: Measured) -> np.ndarray:
    """Each benchmark's median time in the baseline (ns), for the prior; NaN without times."""
    column = baseline.metric_column(noises.TIME)
    if column is None:
        return np.full(len(measured.names), np.nan)
    values, _ = column
    return np.array(
        [
            float(np.median(values[start : start + count])) if count else np.nan
            for start, count in zip(
                baseline.starts[measured.b].tolist(), baseline.counts[measured.b].tolist()
            )
        ]
    )


def sensitivity_of(
    limit: np.ndarray,
    spread: Spread,
    level: Level,
    b_processes: list[int],
    c_processes: list[int],
) -> list[float]:
    """The smallest slowdown caught with 90 % probability: the change must clear the limit,
    and the observed difference of the medians falls short of the true one by more than
    1.28 standard deviations only 10 % of the time. That standard deviation: at the process
    level the noise (a per-process median's spread) over each side's processes; at a wider
    level one run's offset plus the baseline's mean offset over its runs at that level."""
    if level is Level.PROCESS:
        b_count = np.maximum(np.asarray(b_processes, dtype=float), 1.0)
        c_count = np.maximum(np.asarray(c_processes, dtype=float), 1.0)
        factor = np.sqrt(1.0 / b_count + 1.0 / c_count)
    else:
        factor = np.sqrt(1.0 + 1.0 / np.maximum(spread.units, 1))
    result: list[float] = np.expm1(np.log1p(limit) + _Z_POWER * spread.noise * factor).tolist()
    return result


# What each side holds of a benchmark: verdicts decided by presence, errors and skips alone; the
# benchmarks measured on both sides with the metric's columns; the processes per benchmark.


# Marks a benchmark skipped or absent on both sides: left out, counted in a note.
LEAVE_OUT = Comparison("", Verdict.SAME, "", failed=False)


def _status(result: ResultSet, name: str) -> str:
    if name in result.errors:
        return "error"
    k = result.index.get(name)
    if k is None:
        return "absent"
    if name in result.skipped or result.counts[k] == 0:
        return "skipped"
    return "ok"


# The reason of a baseline benchmark that the contender's build does not register at all
# (completeness.py): removed or renamed on purpose, so MISSING without failing.
NOT_IN_BUILD = "not in this build: removed or renamed"


def presence_verdict(
    name: str,
    baseline: ResultSet,
    contender: ResultSet,
    settings: Settings,
    removed: frozenset[str] = frozenset(),
) -> Comparison | None:
    """Verdicts decided by what exists and what failed, before any statistics; None when both
    sides have measurements. `removed`: the benchmarks the contender's build does not register
    (completeness.py); absent from the contender, they are MISSING without failing."""
    base, cont = _status(baseline, name), _status(contender, name)
    if cont == "error":
        where = "both sides" if base == "error" else "contender"
        return Comparison(
            name,
            Verdict.ERROR,
            f"{where}: {contender.errors[name]}",
            failed=not settings.allow_errors,
        )
    if cont != "ok":
        if base in ("absent", "skipped"):
            return LEAVE_OUT
        if cont == "absent" and name in removed:
            return Comparison(name, Verdict.MISSING, NOT_IN_BUILD, failed=False)
        why = (
            f"skipped in the contender: {contender.skipped[name]}"
            if name in contender.skipped
            else "not in the contender"
        )
        return Comparison(name, Verdict.MISSING, why, failed=not settings.allow_missing)
    if base in ("absent", "skipped"):
        why = (
            f"skipped in the baseline: {baseline.skipped[name]}"
            if name in baseline.skipped
            else "not in the baseline"
        )
        return Comparison(name, Verdict.NEW, why, failed=False)
    if base == "error":
        return Comparison(name, Verdict.ERROR, f"baseline: {baseline.errors[name]}", failed=False)
    return None


def presence_notes(comparisons: list[Comparison]) -> list[str]:
    """What to do about the benchmarks a changed suite added, removed or renamed: a NEW one is
    not judged at all until the baseline holds it; one the build no longer registers is
    MISSING without failing until the baseline drops it; any other MISSING one fails every run
    until then (docs/ci.md, "When a pull request changes the suite")."""
    new = sum(c.verdict is Verdict.NEW and "skipped" not in c.reason for c in comparisons)
    missing = sum(c.verdict is Verdict.MISSING and c.failed for c in comparisons)
    removed = sum(
        c.verdict is Verdict.MISSING and not c.failed and c.reason == NOT_IN_BUILD
        for c in comparisons
    )
    rename = "; NEW and MISSING together: a rename? Its old names are MISSING, its new NEW"
    notes = []
    if new:
        notes.append(
            f"{new} NEW benchmark(s) not in the baseline: not judged until the baseline holds "
            "them; add them after the merge (baselines/README.md)"
        )
    if removed:
        notes.append(
            f"{removed} MISSING benchmark(s) not in this build (removed or renamed): not "
            "failing; the baseline drops them at its next whole update (the baseline workflow "
            "after the merge pools with --drop-missing)" + (rename if new else "")
        )
    if missing:
        notes.append(
            f"{missing} MISSING benchmark(s) fail the comparison until the baseline drops them: "
            "if removed on purpose, drop them from the baseline (baselines/README.md)"
            + (rename if new and not removed else "")
        )
    return notes + _device_note(comparisons)


# nvbench.py names a state by its device only in a file of several devices' states.
_DEVICE_PART = re.compile(r"/device:[^/]*$")


def _device_note(comparisons: list[Comparison]) -> list[str]:
    """nvbench states that one side names by device and the other does not: a file of one
    device against one of several (nvbench measures every GPU it sees) was all NEW and MISSING,
    with nothing to say why."""
    new = {c.name for c in comparisons if c.verdict is Verdict.NEW}
    missing = {c.name for c in comparisons if c.verdict is Verdict.MISSING}

    def undevice(names: set[str]) -> set[str]:
        return {_DEVICE_PART.sub("", n) for n in names if _DEVICE_PART.search(n)}

    if not (undevice(new) & missing or undevice(missing) & new):
        return []
    return [
        "NEW and MISSING names differ by /device:<id>: an nvbench file names its states by "
        "device only where it holds several devices' states; compare files of one device each "
        "(nvbench's --devices option)"
    ]


@dataclass(frozen=True)
class Measured:
    """The benchmarks measured on both sides: their indices in each result set and the
    metric's columns (validated)."""

    names: list[str]
    b: np.ndarray  # benchmark index in the baseline
    c: np.ndarray  # benchmark index in the contender
    b_values: np.ndarray  # the baseline's metric column
    c_values: np.ndarray


def metric_values(
    baseline: ResultSet, contender: ResultSet, names: list[str], metric: Metric
) -> tuple[Measured, int, list[tuple[str, str]]]:
    """The benchmarks measured on both sides; plus how many lack the metric on both sides,
    and which lack it on one side."""
    empty = np.zeros(0, dtype=np.int64)
    if not names:
        return Measured([], empty, empty, np.zeros(0), np.zeros(0)), 0, []
    found = []
    for result in (baseline, contender):
        column = result.metric_column(metric)
        if column is None:
            raise InputError(f"{result.label}: no benchmark has the metric {metric.key!r}")
        values, mask = column
        cumulative = np.concatenate([[0], np.cumsum(mask)])
        present = cumulative[result.starts + result.counts] - cumulative[result.starts]
        partial = (present > 0) & (present < result.counts)
        if partial.any():
            k = int(np.argmax(partial))
            raise InputError(
                f"{result.label}: {metric.key} missing from some repetitions of {result.names[k]}"
            )
        found.append((values, present > 0))
    (b_values, b_has), (c_values, c_has) = found

    b = np.array([baseline.index[name] for name in names], dtype=np.int64)
    c = np.array([contender.index[name] for name in names], dtype=np.int64)
    both, b_only, c_only = b_has[b] & c_has[c], b_has[b] & ~c_has[c], ~b_has[b] & c_has[c]
    one_sided = [(names[i], "contender") for i in np.flatnonzero(b_only)]
    one_sided += [(names[i], "baseline") for i in np.flatnonzero(c_only)]
    lacking = int((~b_has[b] & ~c_has[c]).sum())
    keep = np.flatnonzero(both)
    measured = Measured([names[i] for i in keep], b[keep], c[keep], b_values, c_values)
    return measured, lacking, one_sided


def process_counts(result: ResultSet, k: np.ndarray) -> list[int]:
    """How many processes (files, or processes of a merged run) each benchmark's values came
    from."""
    if not len(result.processes) or result.processes.max() == 0:
        return [1] * len(k)
    return [
        len(set(result.processes[start : start + count].tolist()))
        for start, count in zip(result.starts[k].tolist(), result.counts[k].tolist())
    ]


# compare(): every benchmark's verdict from two result sets, with the report's notes and warnings:
# presence first, then the statistics of those measured on both sides, the limit against the
# spread at the level crossed, the decision, and which verdicts fail.


def compare(
    baseline: ResultSet,
    contender: ResultSet,
    metric: Metric,
    settings: Settings,
    stored_noise: noises.LevelNoise | None = None,
    removed: frozenset[str] = frozenset(),
    outside: frozenset[str] = frozenset(),
    unseen_kind: bool | None = None,
) -> Report:
    """Verdicts for every benchmark. `stored_noise`: the baseline's noise per benchmark and
    level as `baseline update` kept it (noise.json), used for the time metric instead of
    computing it from the baseline's values. `removed`: the baseline's benchmarks that the
    contender's build does not register (completeness.py): MISSING there without failing.
    `outside`: the baseline's benchmarks outside the part of the suite the contender ran
    (completeness.outside_part): not compared. `unseen_kind`: the contender's kind of card as
    the whole run told it (judged_against), for a re-run of a few of its benchmarks."""
    warnings, notes = check_environment(
        baseline.context, contender.context, settings.allow_gpu_mismatch, metric.key
    )
    notes = list(baseline.notes) + list(contender.notes) + notes
    against = judged_against(baseline, contender, metric, notes, unseen_kind)
    baseline = against.baseline
    comparisons: list[Comparison] = []
    # Present on both sides, without errors or skips (nearly all): measured without more checks.
    flagged = (
        baseline.errors.keys()
        | baseline.skipped.keys()
        | contender.errors.keys()
        | contender.skipped.keys()
    )
    both = (baseline.index.keys() & contender.index.keys()) - flagged
    pairs = sorted(both)
    left_out = 0
    for name in sorted((baseline.index.keys() | contender.index.keys()) - both - outside):
        early = presence_verdict(name, baseline, contender, settings, removed)
        if early is LEAVE_OUT:
            left_out += 1
        elif early is not None:
            comparisons.append(early)
        else:
            pairs.append(name)
    if left_out:
        notes.append(f"{left_out} benchmark(s) skipped or absent on both sides: not compared")
    if outside:
        notes.append(
            f"{len(outside)} benchmark(s) of the baseline outside the part of the suite the "
            "contender ran (its --filter, --shard, --bench binaries, or host-bound benchmarks "
            "left to another GPU of `run --gpus`): not compared"
        )
    notes += presence_notes(comparisons)

    measured, lacking, one_sided = metric_values(baseline, contender, pairs, metric)
    for name, side in one_sided:
        comparisons.append(
            Comparison(
                name,
                Verdict.ERROR,
                f"no {metric.key} in the {side}",
                failed=side == "contender" and not settings.allow_errors,
            )
        )
    if lacking:
        notes.append(f"{lacking} benchmark(s) have no {metric.key} on either side: not compared")
    comparisons += _measured_verdicts(
        against, contender, measured, metric, settings, notes, stored_noise
    )
    labels = {**baseline.labels, **contender.labels}
    if labels:
        comparisons = [c._replace(label=labels.get(c.name)) for c in comparisons]
    comparisons.sort(
        key=lambda c: (SEVERITY[c.verdict], -c.worse_by(metric.higher_is_better), c.name)
    )
    return Report(
        metric, settings, baseline, contender, tuple(comparisons), tuple(warnings), tuple(notes)
    )


def _measured_verdicts(
    against: Reference,
    contender: ResultSet,
    measured: Measured,
    metric: Metric,
    settings: Settings,
    notes: list[str],
    stored_noise: noises.LevelNoise | None,
) -> list[Comparison]:
    if not measured.names:
        return []
    baseline, crossing = against.baseline, against.crossing
    b, c = measured.b, measured.c
    n, m = baseline.counts[b], contender.counts[c]
    ps = stats.pair_statistics_columns(
        measured.b_values,
        baseline.starts[b],
        n,
        measured.c_values,
        contender.starts[c],
        m,
        settings.confidence,
    )
    tested = (n >= settings.min_repetitions) & (m >= settings.min_repetitions)
    # nvbench without --jsonbin: judged from each side's mean, noise and sample count instead.
    by_summary = np.zeros(len(b), dtype=bool)
    summarised = from_summaries(baseline, contender, measured, metric, settings.confidence)
    n_shown, m_shown = n.copy(), m.copy()
    if summarised is not None:
        by_summary = summarised.mask
        st = summarised.statistics
        ps.log_ratio[by_summary], ps.p_value[by_summary] = st.log_ratio, st.p_value
        ps.log_ci_low[by_summary], ps.log_ci_high[by_summary] = st.log_ci_low, st.log_ci_high
        ps.baseline_median[by_summary] = summarised.b_mean
        ps.contender_median[by_summary] = summarised.c_mean
        ps.baseline_cv[by_summary] = np.nan
        ps.contender_cv[by_summary] = np.nan
        n_shown[by_summary] = summarised.b_samples.astype(np.int64)
        m_shown[by_summary] = summarised.c_samples.astype(np.int64)
        tested[by_summary] = (summarised.b_samples >= settings.min_repetitions) & (
            summarised.c_samples >= settings.min_repetitions
        )
        notes.append(note(summarised))
    # Medians whose ratio no float holds (a time of 5e-324 against 100) are no measurements:
    # every later step would take the log or exp of it.
    beyond = np.abs(ps.log_ratio) > _LOG_RATIO_MAX
    if beyond.any():
        i = int(np.argmax(beyond))
        raise InputError(
            f"{measured.names[i]}: medians {ps.baseline_median[i]:g} and "
            f"{ps.contender_median[i]:g} differ by more than a float can hold: not comparable"
        )
    q = np.full(len(b), np.nan)
    q[tested] = stats.bh_adjust(ps.p_value[tested])
    # A t-test reaches any p-value: Mann-Whitney's smallest one does not bind summary rows, but
    # they are of the family that Benjamini-Hochberg corrects over.
    family = int(tested.sum())
    powerless = powerless_reasons(ps.smallest_p, n, m, tested & ~by_summary, family, settings.alpha)
    _note_power(powerless, n, m, family, settings.alpha, notes)

    threshold = _thresholds(measured.names, settings)
    b_processes, c_processes = process_counts(baseline, b), process_counts(contender, c)
    spread = spread_at_level(against, contender, measured, metric, stored_noise, notes)
    floor = settings.noise_multiplier * spread.noise
    limit = np.maximum(threshold, floor)
    b_agg, c_agg = baseline.from_aggregates[b].tolist(), contender.from_aggregates[c].tolist()
    n_list, m_list = n.tolist(), m.tolist()
    nvbench = any(NVBENCH_SAMPLES_KEY in side.context for side in (baseline, contender))
    too_few = [
        None if ok else too_few_reason(n_i, m_i, settings.min_repetitions, b_ag or c_ag, nvbench)
        for ok, n_i, m_i, b_ag, c_ag in zip(
            tested.tolist(), n_shown.tolist(), m_shown.tolist(), b_agg, c_agg
        )
    ]
    verdicts, reasons, unverified = decide_many(
        ps.log_ratio,
        ps.log_ci_low,
        ps.log_ci_high,
        q,
        alpha=settings.alpha,
        limit=limit,
        higher_is_better=metric.higher_is_better,
        floor_binds=floor > threshold,
        too_few=too_few,
        confidence=settings.confidence,
        powerless=powerless,
    )
    sensitivity = sensitivity_of(limit, spread, crossing.level, b_processes, c_processes)
    # Either side's declaration counts (a change that stops declaring it still times the host
    # it timed); one side's alone means the change declared or undeclared it: said, per row.
    b_bound, c_bound = baseline.host_bound(b), contender.host_bound(c)
    host_bound = b_bound | c_bound
    one_side = (b_bound != c_bound).tolist()
    b_bound_list = b_bound.tolist()
    lenient = _lenient(host_bound, crossing.same_host, notes)

    failing = fails(
        verdicts,
        unverified,
        ps.log_ci_low,
        ps.log_ci_high,
        metric.higher_is_better,
        settings.strict,
    )
    # Plain lists: element access on numpy arrays is slow in a 10,000-step loop.
    ratio = np.exp(ps.log_ratio).tolist()
    ci_low, ci_high = _optional(np.exp(ps.log_ci_low)), _optional(np.exp(ps.log_ci_high))
    p_value, q_value = _optional(ps.p_value), _optional(q)
    b_median, c_median = ps.baseline_median.tolist(), ps.contender_median.tolist()
    b_cv, c_cv = _optional(ps.baseline_cv), _optional(ps.contender_cv)
    threshold_list, floor_list, limit_list = threshold.tolist(), floor.tolist(), limit.tolist()
    # None too where no p-value these values give can reach alpha (3 and 3: at least 0.1):
    # nothing is caught. Where only a change alone cannot (Benjamini-Hochberg among many), a
    # change of several benchmarks still can: the power note says how many rows are so.
    reachable = [
        ok and (summary or p < settings.alpha)
        for ok, summary, p in zip(tested.tolist(), by_summary.tolist(), ps.smallest_p.tolist())
    ]
    sensitivity_list = [s if ok else None for ok, s in zip(reachable, sensitivity)]
    measured_list, lenient_list = spread.measured.tolist(), lenient.tolist()
    host_bound_list = host_bound.tolist()
    level = crossing.level.label
    # Where the interval is more than the ratio (two or more values a side), the 2x rule is of
    # its low end (decision.fails): said so.
    twice = f"{UNVERIFIED_FAIL_RATIO:g}x worse"
    short = [
        f"not {twice} throughout its interval" if n_i > 1 or m_i > 1 else f"under {twice}"
        for n_i, m_i in zip(n_list, m_list)
    ]
    summary_list = by_summary.tolist()
    n_list, m_list = n_shown.tolist(), m_shown.tolist()
    out = []
    for i, name in enumerate(measured.names):
        verdict, reason = verdicts[i], reasons[i]
        if summary_list[i]:
            reason = f"{MARKER}: {reason}" if reason else MARKER
        failed = failing[i]
        bound = "host-bound"
        if one_side[i]:
            bound += f" (in the {'baseline' if b_bound_list[i] else 'contender'} only)"
        if failed and lenient_list[i]:
            failed = False
            reason += f"; {bound}, baseline not from this host: not failing"
        elif one_side[i]:
            reason += f"; {bound}"
        elif verdict is Verdict.REGRESSION and not failed:  # unverified, under 2x
            reason += f"; {short[i]}: not failing (--strict fails it)"
        out.append(
            Comparison(
                name,
                worded_for(verdict, failed),
                reason,
                failed,
                baseline=SideSummary(n_list[i], b_median[i], b_cv[i], b_processes[i], b_agg[i]),
                contender=SideSummary(m_list[i], c_median[i], c_cv[i], c_processes[i], c_agg[i]),
                ratio=ratio[i],
                ci_low=ci_low[i],
                ci_high=ci_high[i],
                p_value=p_value[i],
                q_value=q_value[i],
                threshold=threshold_list[i],
                noise_floor=floor_list[i],
                limit=limit_list[i],
                level=level,
                level_measured=measured_list[i],
                sensitivity=sensitivity_list[i],
                host_bound=host_bound_list[i],
                from_summaries=summary_list[i],
            )
        )
    return out


def _thresholds(names: list[str], settings: Settings) -> np.ndarray:
    """Each benchmark's threshold: its config rule's, else the one threshold."""
    if not settings.rules:
        return np.full(len(names), settings.threshold)
    return np.array([threshold_for(name, settings.rules, settings.threshold) for name in names])


def _lenient(host_bound: np.ndarray, same_host: bool, notes: list[str]) -> np.ndarray:
    """The host-bound benchmarks whose change does not fail: against another host's baseline
    their time includes that host's work (pageable copies moved 20-140 % between one-GPU H200
    hosts with nothing changed on the GPU, docs/measurement.md)."""
    lenient: np.ndarray = host_bound & (not same_host)
    if lenient.any():
        notes.append(
            f"{int(lenient.sum())} host-bound benchmark(s) (their time includes host work) "
            "against a baseline not measured on this host: their changes are reported, "
            "not failing"
        )
    return lenient


def _note_power(
    powerless: list[str | None],
    n: np.ndarray,
    m: np.ndarray,
    family: int,
    alpha: float,
    notes: list[str],
) -> None:
    """Say so when too few repetitions make a lone change impossible to call significant. Not
    for tied values alone (each such row says so where it decides): in a real run other
    benchmarks' small p-values share the correction, and a lone change still reached q < alpha
    (59 of 60 lone +5 % changes of benchmarks >= 50 us, GPU-720306a7's two runs as anchor and
    run), so a note on every anchored run would cry wolf."""
    weak = [
        why
        for why, n_i, m_i in zip(powerless, n.tolist(), m.tolist())
        if why is not None and stats.min_p_value(n_i, m_i) * family >= alpha
    ]
    if not weak:
        return
    reason, _ = Counter(weak).most_common(1)[0]
    notes.append(
        f"{len(weak)} of {family} benchmark(s) cannot reach significance alone, most as "
        f"{reason}: a change past the limit there is judged unverified, failing from "
        f"{UNVERIFIED_FAIL_RATIO:g}x worse; record more repetitions"
    )


def _optional(values: np.ndarray) -> list[float | None]:
    """A list with None where the array is not finite (NaN marks "undefined" in arrays)."""
    return [v if math.isfinite(v) else None for v in values.tolist()]


# Benchmarks judged from summaries instead of samples: nvbench's states without `--jsonbin`
# carry no sample times, only each state's mean cold GPU time, the samples' relative standard
# deviation and their count (kernelwatch.nvbench puts them in the row's counters). That is enough
# for Welch's t on the log ratio of the means (stats.summary_statistics), which then stands in for
# the per-sample Mann-Whitney test and Hodges-Lehmann interval; the rest of the decision (limit,
# noise floor, Benjamini-Hochberg, verdicts) is the same. Every such row says `from summaries`.
#
# The side against a summary may have samples (nvbench with `--jsonbin`, or Google Benchmark
# repetitions): their mean, relative standard deviation and count are taken from the values.


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
    columns = (NVBENCH_MEAN_KEY, NVBENCH_SAMPLES_COUNTER, NVBENCH_CV_COUNTER)
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
