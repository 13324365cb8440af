"""Deciding a verdict per benchmark from two result sets. Verdicts are data; render.py shows them.

The decision for a benchmark measured on both sides (see docs/compare.md):

* limit = max(threshold, noise floor); threshold from --threshold or the first matching config
  rule, noise floor = noise_multiplier x the benchmark's noise at the level the comparison
  crosses (levels.py: process, card or host, from the two contexts): the baseline's stored
  noise (baselines/<slug>/noise.json) or else computed as noise.py does; where that level was
  never measured, the prior for it (levels.prior); and at least the spread of the
  contender's own per-process medians.
* UNSURE if either side has fewer than min_repetitions values; but a ratio past the limit is
  then an unverified REGRESSION / IMPROVEMENT, and an unverified REGRESSION fails when it is
  at least UNVERIFIED_FAIL_RATIO worse (or at all, with `strict`).
* REGRESSION / IMPROVEMENT if the Benjamini–Hochberg-adjusted Mann–Whitney p-value is below
  alpha and the ratio of medians is worse / better than the limit (symmetric in log space).
* UNSURE if the confidence interval of the ratio reaches past the limit on both sides, or if the
  ratio is past the limit without significance; SAME otherwise.
* A host-bound benchmark (its rows carry the counter `host_bound` = 1: its time includes host
  work) compared with a baseline measured on another host keeps its verdict but does not fail.
* Each benchmark's sensitivity: the smallest slowdown this comparison catches with 90 %
  probability, from its limit and the spread of the difference of the two medians.
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from kernelwatch import hostbound, kinds, levels
from kernelwatch import noise as noises
from kernelwatch import stats
from kernelwatch.config import ThresholdRule, threshold_for
from kernelwatch.environment import check_environment
from kernelwatch.errors import InputError
from kernelwatch.levels import Level
from kernelwatch.results import Metric, ResultSet, gpu_model

if TYPE_CHECKING:
    from kernelwatch.explain import Explanation


class Verdict(enum.StrEnum):
    REGRESSION = "REGRESSION"
    IMPROVEMENT = "IMPROVEMENT"
    SAME = "SAME"
    UNSURE = "UNSURE"
    NEW = "NEW"
    MISSING = "MISSING"
    ERROR = "ERROR"


# Worst first: the order of tables and of the JSON list.
SEVERITY: Mapping[Verdict, int] = {
    v: i
    for i, v in enumerate(
        [
            Verdict.REGRESSION,
            Verdict.ERROR,
            Verdict.MISSING,
            Verdict.UNSURE,
            Verdict.NEW,
            Verdict.SAME,
            Verdict.IMPROVEMENT,
        ]
    )
}


# Why these defaults: docs/measurement.md. A 1 % threshold lets a 2 % slowdown be flagged
# where the run-to-run noise is small; 2 x a benchmark's noise (itself the largest of four
# estimates) kept every same-code comparison of selftest on an H200 quiet (0 of 225) while
# catching 72 of 72 injected 5 % slowdowns, where 3 x missed one.
DEFAULT_THRESHOLD = 0.01
DEFAULT_NOISE_MULTIPLIER = 2.0
DEFAULT_ALPHA = 0.05
# The counter a host-bound benchmark's rows carry (the harness's `kw::host_bound`).
# Sensitivity is the slowdown caught with 90 % probability: the one-sided normal quantile.
_Z_POWER = 1.2815515655446004
# With too few repetitions there is no test: a change past the limit is shown as an unverified
# REGRESSION, which fails only when it is at least this factor worse (Settings.strict: at any
# size). Noise does not double a GPU kernel's time: the widest spread measured between two runs
# of one build was 4.7 % (two H200 cards, docs/measurement.md).
UNVERIFIED_FAIL_RATIO = 2.0


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
        if not (self.threshold >= 0 and self.noise_multiplier >= 0):
            raise InputError("thresholds and noise multiplier must be >= 0")

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


@dataclass(frozen=True)
class Report:
    metric: Metric
    settings: Settings
    baseline: ResultSet
    contender: ResultSet
    comparisons: tuple[Comparison, ...]  # worst first
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # Why benchmarks changed, by name (explain.py): set after the comparison, never by it.
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

    @property
    def failed(self) -> bool:
        return any(c.failed for c in self.comparisons)

    @property
    def exit_status(self) -> int:
        return 1 if self.failed else 0


def compare(
    baseline: ResultSet,
    contender: ResultSet,
    metric: Metric,
    settings: Settings,
    stored_noise: noises.LevelNoise | None = None,
) -> Report:
    """Verdicts for every benchmark. `stored_noise`: the baseline's noise per benchmark and
    level as `baseline update` kept it (noise.json), used for the time metric instead of
    computing it from the baseline's values."""
    warnings, notes = check_environment(
        baseline.context, contender.context, settings.allow_gpu_mismatch, metric.key
    )
    notes = list(baseline.notes) + list(contender.notes) + notes
    against = _against(baseline, contender, notes)
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
    for name in sorted((baseline.index.keys() | contender.index.keys()) - both):
        early = _presence_verdict(name, baseline, contender, settings)
        if early is _LEAVE_OUT:
            left_out += 1
        elif early is not None:
            comparisons.append(early)
        else:
            pairs.append(name)
    if left_out:
        notes.append(f"{left_out} benchmark(s) skipped or absent on both sides: not compared")

    measured, lacking, one_sided = _metric_values(baseline, contender, pairs, metric)
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


# Marks a benchmark skipped or absent on both sides: left out, counted in a note.
_LEAVE_OUT = Comparison("", Verdict.SAME, "", failed=False)


def _status(result: ResultSet, name: str) -> str:
    if name in result.errors:
        return "error"
    k = result.index.get(name)
    if k is None:
        return "absent"
    if name in result.skipped or result.counts[k] == 0:
        return "skipped"
    return "ok"


def _presence_verdict(
    name: str, baseline: ResultSet, contender: ResultSet, settings: Settings
) -> Comparison | None:
    """Verdicts decided by what exists and what failed, before any statistics; None when both
    sides have measurements."""
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
            return _LEAVE_OUT
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


@dataclass(frozen=True)
class _Measured:
    """The benchmarks measured on both sides: their indices in each result set and the
    metric's columns (validated)."""

    names: list[str]
    b: np.ndarray  # benchmark index in the baseline
    c: np.ndarray  # benchmark index in the contender
    b_values: np.ndarray  # the baseline's metric column
    c_values: np.ndarray


def _metric_values(
    baseline: ResultSet, contender: ResultSet, names: list[str], metric: Metric
) -> tuple[_Measured, int, list[tuple[str, str]]]:
    """The benchmarks measured on both sides; plus how many lack the metric on both sides,
    and which lack it on one side."""
    empty = np.zeros(0, dtype=np.int64)
    if not names:
        return _Measured([], empty, empty, np.zeros(0), np.zeros(0)), 0, []
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
    measured = _Measured([names[i] for i in keep], b[keep], c[keep], b_values, c_values)
    return measured, lacking, one_sided


@dataclass(frozen=True)
class _Against:
    """What a contender is judged by: `baseline`, the runs it is compared with; `crossing`, the
    level between them; `pooled`, the result whose spreads apply (the whole baseline where
    `baseline` is its runs on cards of the contender's kind); `units`, how many runs measured
    that level's spread (1 + its degrees of freedom)."""

    baseline: ResultSet
    crossing: levels.Crossing
    pooled: ResultSet
    units: int


def _against(baseline: ResultSet, contender: ResultSet, notes: list[str]) -> _Against:
    """The runs of a pooled baseline on the contender's own card (process level); else those on
    cards of its kind (kinds.py), held to the spread between cards of one kind; else all."""
    units = levels.units_of(baseline.context)
    crossing = levels.crossing(baseline.context, contender.context)
    wide = _Against(baseline, crossing, baseline, _units_at(crossing.level, units))
    if len(levels.units_of(contender.context)) > 1:  # a pooled contender is not one card
        return wide
    own = noises.runs_of_card(baseline, levels.unit_of(contender.context).card)
    if own is not None:
        # Cards of one model differ by up to 4.9 % on some kernels (docs/measurement.md): a
        # pooled baseline that holds a run on the contender's own card is compared by it.
        notes.append(
            "the baseline holds a run on this card: compared with that run (process level)"
        )
        return _Against(own, levels.crossing(own.context, contender.context), own, 1)
    found = noises.kind_of(baseline, contender) if crossing.level is Level.HOST else None
    if found is None:
        return wide
    if found.kind is None:
        notes.append(
            f"this card is of none of the baseline's {found.kinds} kind(s) of card (shape "
            f"distance {found.distance:.2%} from the nearest; one kind within "
            f"{kinds.KIND_DISTANCE:.2%}): held to the spread between all its hosts"
        )
        return wide
    mine = noises.runs_of(baseline, found.runs) or baseline
    if int((mine.counts > 0).sum()) < int((baseline.counts > 0).sum()):
        notes.append(
            "this card is of a kind the baseline holds, but its runs on that kind lack "
            "benchmarks the others have: held to the spread between all its hosts"
        )
        return wide
    notes.append(
        f"this card is of a kind the baseline holds (shape distance {found.distance:.2%}, "
        f"within {kinds.KIND_DISTANCE:.2%}): compared with its {len(found.runs)} run(s) on "
        "cards of that kind, held to the spread between cards of one kind (kinds.py)"
    )
    kind = levels.Crossing(
        Level.KIND, "another host, a card of the same kind", crossing.other_config
    )
    return _Against(mine, kind, baseline, len(units) - found.kinds + 1)


def _units_at(level: Level, units: tuple[levels.Unit, ...]) -> int:
    """The distinct cards (hosts at the host level) a level's spread was measured over."""
    return len({u.host if level is Level.HOST else u.card for u in units})


def _measured_verdicts(
    against: _Against,
    contender: ResultSet,
    measured: _Measured,
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
    q = np.full(len(b), np.nan)
    q[tested] = stats.bh_adjust(ps.p_value[tested])
    _note_power(n, m, tested, settings.alpha, notes)

    if settings.rules:
        threshold = np.array(
            [threshold_for(name, settings.rules, settings.threshold) for name in measured.names]
        )
    else:
        threshold = np.full(len(b), settings.threshold)
    b_processes, c_processes = _processes(baseline, b), _processes(contender, c)
    spread = _noise(against, contender, measured, metric, stored_noise, notes)
    floor = settings.noise_multiplier * spread.noise
    limit = np.maximum(threshold, floor)
    b_agg, c_agg = baseline.from_aggregates[b].tolist(), contender.from_aggregates[c].tolist()
    n_list, m_list = n.tolist(), m.tolist()
    too_few = [
        (
            None
            if ok
            else _too_few(n_list[i], m_list[i], settings.min_repetitions, b_agg[i] or c_agg[i])
        )
        for i, ok in enumerate(tested.tolist())
    ]
    verdicts, reasons = decide_many(
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
    )
    sensitivity = _sensitivity(limit, spread, crossing.level, b_processes, c_processes)
    host_bound = hostbound.in_result(baseline, b) | hostbound.in_result(contender, c)
    lenient = host_bound & (not crossing.same_host)
    if lenient.any():
        notes.append(
            f"{int(lenient.sum())} host-bound benchmark(s) (their time includes host work) "
            "against a baseline not measured on this host: their changes are reported, "
            "not failing"
        )

    failing = _failing(verdicts, too_few, ps.log_ratio, metric.higher_is_better, settings.strict)
    # Plain lists: element access on numpy arrays is slow in a 10,000-step loop.
    ratio = np.exp(ps.log_ratio).tolist()
    ci_low, ci_high = _optional(np.exp(ps.log_ci_low)), _optional(np.exp(ps.log_ci_high))
    p_value, q_value = _optional(ps.p_value), _optional(q)
    b_median, c_median = ps.baseline_median.tolist(), ps.contender_median.tolist()
    b_cv, c_cv = _optional(ps.baseline_cv), _optional(ps.contender_cv)
    threshold_list, floor_list, limit_list = threshold.tolist(), floor.tolist(), limit.tolist()
    sensitivity_list = [s if ok else None for ok, s in zip(tested.tolist(), sensitivity)]
    measured_list, lenient_list = spread.measured.tolist(), lenient.tolist()
    host_bound_list = host_bound.tolist()
    level = crossing.level.label
    out = []
    for i, name in enumerate(measured.names):
        verdict, reason = verdicts[i], reasons[i]
        failed = failing[i]
        if failed and lenient_list[i]:
            failed = False
            reason += "; host-bound, baseline not from this host: not failing"
        out.append(
            Comparison(
                name,
                verdict,
                reason,
                failed,
                SideSummary(n_list[i], b_median[i], b_cv[i], b_processes[i], b_agg[i]),
                SideSummary(m_list[i], c_median[i], c_cv[i], c_processes[i], c_agg[i]),
                ratio[i],
                ci_low[i],
                ci_high[i],
                p_value[i],
                q_value[i],
                threshold_list[i],
                floor_list[i],
                limit_list[i],
                None,
                level,
                measured_list[i],
                sensitivity_list[i],
                host_bound_list[i],
            )
        )
    return out


def _sensitivity(
    limit: np.ndarray,
    spread: _Spread,
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
        factor = np.full(len(limit), np.sqrt(1.0 + 1.0 / max(spread.units, 1)))
    result: list[float] = np.expm1(np.log1p(limit) + _Z_POWER * spread.noise * factor).tolist()
    return result


def _failing(
    verdicts: list[Verdict],
    too_few: list[str | None],
    log_ratio: np.ndarray,
    higher_is_better: bool,
    strict: bool,
) -> list[bool]:
    """Which verdicts fail: every tested REGRESSION; an unverified one (too few repetitions)
    with `strict`, or when it is at least UNVERIFIED_FAIL_RATIO worse."""
    worse = (-log_ratio if higher_is_better else log_ratio).tolist()
    gross = math.log(UNVERIFIED_FAIL_RATIO)
    return [
        v is Verdict.REGRESSION and (few is None or strict or w >= gross)
        for v, few, w in zip(verdicts, too_few, worse)
    ]


def _optional(values: np.ndarray) -> list[float | None]:
    """A list with None where the array is not finite (NaN marks "undefined" in arrays)."""
    return [v if math.isfinite(v) else None for v in values.tolist()]


def _processes(result: ResultSet, k: np.ndarray) -> list[int]:
    """How many processes (files, or processes of a merged run) each benchmark's values came
    from."""
    if not len(result.processes) or result.processes.max() == 0:
        return [1] * len(k)
    return [
        len(set(result.processes[start : start + count].tolist()))
        for start, count in zip(result.starts[k].tolist(), result.counts[k].tolist())
    ]


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
) -> tuple[list[Verdict], list[str]]:
    """Verdicts and reasons for benchmarks measured on both sides (see the module docstring).

    log_ratio: log(median(contender) / median(baseline)); log_ci_*: its confidence interval;
    q: BH-adjusted p-values (NaN when untested). The limits are symmetric in log space: a
    ratio beyond 1 + limit or below 1 / (1 + limit) is a change."""
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
    code[np.array([t is not None for t in too_few], dtype=bool)] = _TOO_FEW

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
                    f"unverified: {too_few[i]}"
                )
            else:
                verdicts.append(Verdict.UNSURE)
                reasons.append(too_few[i] or "")
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
    return verdicts, reasons


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
) -> tuple[Verdict, str]:
    """decide_many for one benchmark."""
    verdicts, reasons = decide_many(
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
    )
    return verdicts[0], reasons[0]


def _too_few(n: int, m: int, need: int, aggregates: bool) -> str:
    if aggregates:
        return (
            f"aggregates only ({n} and {m} values; need {need}): "
            "keep the repetitions in the JSON file"
        )
    return f"too few repetitions ({n} and {m}; need {need})"


@dataclass(frozen=True)
class _Spread:
    noise: np.ndarray  # relative spread of each benchmark at the level crossed
    measured: np.ndarray  # bool: measured at that level (False: the prior was used)
    units: int  # the baseline's runs at that level (cards or hosts), for the sensitivity


def _noise(
    against: _Against,
    contender: ResultSet,
    measured: _Measured,
    metric: Metric,
    stored_noise: noises.LevelNoise | None,
    notes: list[str],
) -> _Spread:
    """Each benchmark's relative spread at the level the comparison crosses: the baseline's
    stored noise where there is one (for the time metric: noise.json describes times), else
    computed from its values (noise.py); where the level was never measured, the prior; at
    least the spread of the contender's own per-process medians, so a disturbed process of
    the judged run widens its limit instead of raising an alarm."""
    baseline, crossing = against.baseline, against.crossing
    if against.pooled is baseline:
        spreads = noises.measure(baseline, metric, measured.b).levels()
    else:  # the spread within kinds comes from every kind the pooled baseline holds
        spreads = noises.measure(against.pooled, metric).levels().take(measured.names)
    if stored_noise is not None and metric.key == noises.TIME.key:
        kept = stored_noise.take(measured.names)
        found = np.isfinite(kept.process)
        spreads = noises.LevelNoise(
            spreads.names,
            np.where(found, kept.process, spreads.process),
            np.where(found, kept.process_measured, spreads.process_measured),
            np.where(found, kept.card, spreads.card),
            np.where(found, kept.host, spreads.host),
            np.where(found & np.isfinite(kept.kind), kept.kind, spreads.kind),
        )
        notes.append(
            f"noise: the baseline's stored noise for {int(found.sum())} of "
            f"{len(found)} benchmark(s)"
            + ("" if found.all() else "; computed from its repetitions for the others")
        )
    level = crossing.level
    at = spreads.at(level)
    gpu = gpu_model(baseline.context) is not None
    prior = levels.prior(level, _durations(baseline, measured), gpu=gpu)
    units = levels.units_of(against.pooled.context)
    at_level = against.units
    if level is not Level.PROCESS and np.isfinite(at).any():
        factor = levels.upper_bound_factor(at_level)
        at = at * factor
        few = at_level < levels.MIN_UNITS
        if few:
            at = np.fmax(at, prior)
        measured_from = (
            f"{len(units)} runs in kinds of card ({at_level - 1} degree(s) of freedom)"
            if level is Level.KIND
            else f"{at_level} {level.label}s"
        )
        notes.append(
            f"the {level.label}-level spread, measured from {measured_from}, is taken "
            f"at its upper {levels.UPPER_BOUND_CONFIDENCE:.0%} confidence bound (x{factor:.2f})"
            + (f"; with fewer than {levels.MIN_UNITS}, at least the prior" if few else "")
        )
    if level >= Level.KIND and crossing.other_config:
        at = np.fmax(at, prior)  # measured between hosts, but never on one configured so
        notes.append(
            "this host is configured unlike every host of the baseline (docs/results.md, "
            "fingerprint): each spread is at least the host-level prior"
        )
    has = np.isfinite(at)
    noise = np.where(has, at, np.fmax(spreads.process, prior))
    relative, absolute = levels.PRIOR[level]
    per_time = f" + {absolute:g} ns / time" if gpu else " (no GPU: no launch term)"
    if has.all():
        said = "measured for every benchmark"
    else:
        said = (
            f"measured for {int(has.sum())} of {len(has)} benchmark(s); never measured for "
            f"the others: the {level.label}-level prior {relative:.2%}{per_time} "
            "(docs/measurement.md)"
        )
    notes.append(
        f"level: {level.label} ({crossing.why}; baseline: {levels.describe(units)}); "
        f"its spread {said}"
    )
    own = noises.between_processes(contender, metric, measured.c, measured.c_values)
    return _Spread(np.maximum(noise, own), has, at_level)


def _durations(baseline: ResultSet, measured: _Measured) -> np.ndarray:
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


def _note_power(
    n: np.ndarray, m: np.ndarray, tested: np.ndarray, alpha: float, notes: list[str]
) -> None:
    """Say so when too few repetitions make a lone change impossible to call significant."""
    family = int(tested.sum())
    if family == 0:
        return
    pairs = Counter(zip(n[tested].tolist(), m[tested].tolist()))
    (n_common, m_common), _ = pairs.most_common(1)[0]
    smallest = stats.min_p_value(n_common, m_common)
    if smallest * family >= alpha:
        notes.append(
            f"with {n_common} and {m_common} repetitions the smallest possible p-value is "
            f"{smallest:.2g}: a change in one benchmark alone cannot reach significance among "
            f"{family} (Benjamini-Hochberg needs p < {alpha / family:.2g}); "
            "record more repetitions"
        )
