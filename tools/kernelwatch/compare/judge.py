"""compare(): every benchmark's verdict from two result sets, with the report's notes and
warnings: presence first, then the statistics of those measured on both sides, the limit
against the spread at the level crossed, the decision, and which verdicts fail."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from kernelwatch import hostbound
from kernelwatch import noise as noises
from kernelwatch import nvbench as nvbench_format
from kernelwatch import stats
from kernelwatch.compare.outcome import (
    SEVERITY,
    UNVERIFIED_FAIL_RATIO,
    Comparison,
    Report,
    Settings,
    SideSummary,
    Verdict,
    decide_many,
    fails,
    powerless_reasons,
    too_few_reason,
    worded_for,
)
from kernelwatch.compare.reference import (
    LEAVE_OUT,
    Measured,
    Reference,
    judged_against,
    metric_values,
    presence_notes,
    presence_verdict,
    process_counts,
    sensitivity_of,
    spread_at_level,
)
from kernelwatch.config import threshold_for
from kernelwatch.results import Metric, ResultSet, check_environment


def compare(
    baseline: ResultSet,
    contender: ResultSet,
    metric: Metric,
    settings: Settings,
    stored_noise: noises.LevelNoise | None = None,
    removed: frozenset[str] = frozenset(),
) -> Report:
    """Verdicts for every benchmark. `stored_noise`: the baseline's noise per benchmark and
    level as `baseline update` kept it (noise.json), used for the time metric instead of
    computing it from the baseline's values. `removed`: the baseline's benchmarks that the
    contender's build does not register (completeness.py): MISSING there without failing."""
    warnings, notes = check_environment(
        baseline.context, contender.context, settings.allow_gpu_mismatch, metric.key
    )
    notes = list(baseline.notes) + list(contender.notes) + notes
    against = judged_against(baseline, contender, notes)
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
        early = presence_verdict(name, baseline, contender, settings, removed)
        if early is LEAVE_OUT:
            left_out += 1
        elif early is not None:
            comparisons.append(early)
        else:
            pairs.append(name)
    if left_out:
        notes.append(f"{left_out} benchmark(s) skipped or absent on both sides: not compared")
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
    q = np.full(len(b), np.nan)
    q[tested] = stats.bh_adjust(ps.p_value[tested])
    _note_power(n, m, tested & ~by_summary, settings.alpha, notes)

    threshold = _thresholds(measured.names, settings)
    b_processes, c_processes = process_counts(baseline, b), process_counts(contender, c)
    spread = spread_at_level(against, contender, measured, metric, stored_noise, notes)
    floor = settings.noise_multiplier * spread.noise
    limit = np.maximum(threshold, floor)
    b_agg, c_agg = baseline.from_aggregates[b].tolist(), contender.from_aggregates[c].tolist()
    n_list, m_list = n.tolist(), m.tolist()
    nvbench = any(nvbench_format.SAMPLES_KEY in side.context for side in (baseline, contender))
    too_few = [
        None if ok else too_few_reason(n_i, m_i, settings.min_repetitions, b_ag or c_ag, nvbench)
        for ok, n_i, m_i, b_ag, c_ag in zip(
            tested.tolist(), n_shown.tolist(), m_shown.tolist(), b_agg, c_agg
        )
    ]
    # A t-test reaches any p-value: Mann-Whitney's smallest one does not bind summary rows.
    powerless = [
        None if summary else why
        for summary, why in zip(
            by_summary.tolist(), powerless_reasons(n, m, tested & ~by_summary, settings.alpha)
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
    b_bound, c_bound = hostbound.in_result(baseline, b), hostbound.in_result(contender, c)
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
    # None too where no p-value can reach alpha (3 and 3: at least 0.1): nothing is caught.
    reachable = [
        ok and (summary or stats.min_p_value(n_i, m_i) < settings.alpha)
        for ok, summary, n_i, m_i in zip(tested.tolist(), by_summary.tolist(), n_list, m_list)
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
            f"{family} (Benjamini-Hochberg needs p < {alpha / family:.2g}): such a change past "
            f"the limit is judged unverified, failing from {UNVERIFIED_FAIL_RATIO:g}x worse; "
            "record more repetitions"
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
    columns = (nvbench_format.MEAN_KEY, nvbench_format.SAMPLES_COUNTER, nvbench_format.CV_COUNTER)
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
