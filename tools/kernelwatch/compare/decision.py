"""The decision rule (kernelwatch.compare's docstring): from the ratio of medians, its interval,
the adjusted p-value and the limit to a verdict and its reason; which verdicts fail."""

from __future__ import annotations

import math

import numpy as np

from kernelwatch.compare.verdicts import Verdict

# With too few repetitions there is no test: a change past the limit is shown as an unverified
# REGRESSION, which fails only when it is at least this factor worse (Settings.strict: at any
# size). Noise does not double a GPU kernel's time: the widest spread measured between two runs
# of one build was 4.7 % (two H200 cards, docs/measurement.md).
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
) -> tuple[list[Verdict], list[str]]:
    """Verdicts and reasons for benchmarks measured on both sides (the rule: kernelwatch.compare).

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


def too_few_reason(n: int, m: int, need: int, aggregates: bool, nvbench: bool = False) -> str:
    if aggregates and nvbench:  # its summaries: the samples are in --jsonbin's files
        return f"nvbench summaries only ({n} and {m} values; need {need}): run it with --jsonbin"
    if aggregates:
        return (
            f"aggregates only ({n} and {m} values; need {need}): "
            "keep the repetitions in the JSON file"
        )
    return f"too few repetitions ({n} and {m}; need {need})"


def fails(
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
