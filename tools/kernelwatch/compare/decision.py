"""The decision rule (kernelwatch.compare's docstring): from the ratio of medians, its interval,
the adjusted p-value and the limit to a verdict and its reason; which verdicts fail."""

from __future__ import annotations

import math

import numpy as np

from kernelwatch import stats
from kernelwatch.compare.outcome import Verdict

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
