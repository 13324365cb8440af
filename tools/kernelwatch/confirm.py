"""Confirming regressions: re-run only the flagged benchmarks in fresh processes, and fail only
on those that regress every time. A one-off disturbance (another job on the GPU, a clock dip)
then shows as "not confirmed" instead of failing CI.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from kernelwatch.compare import SEVERITY, Comparison, Report, Verdict

# rerun(k, names) -> the compare Report of re-run k (1-based) of `names` against the baseline.
Rerun = Callable[[int, Sequence[str]], Report]


def _change(c: Comparison | None) -> str:
    if c is None:
        return "absent"
    if c.ratio is None:
        return c.verdict.value
    return f"{c.verdict.value} {(c.ratio - 1) * 100:+.1f}%"


def confirm_regressions(report: Report, rerun: Rerun, times: int) -> Report:
    """The report with every REGRESSION marked confirmed (still failing) or not confirmed
    (shown, not failing). `times` re-runs at most; 0 leaves the report as it is."""
    flagged = [c.name for c in report.comparisons if c.verdict is Verdict.REGRESSION]
    if times <= 0 or not flagged:
        return report
    standing = list(flagged)
    seen: dict[str, list[Comparison | None]] = {name: [] for name in flagged}
    runs = 0
    for k in range(1, times + 1):
        if not standing:
            break
        runs = k
        again = rerun(k, standing)
        found = {c.name: c for c in again.comparisons}
        for name in standing:
            seen[name].append(found.get(name))
        standing = [
            n
            for n in standing
            if found.get(n) is not None and found[n].verdict is Verdict.REGRESSION
        ]

    confirmed = set(standing)
    comparisons = []
    for c in report.comparisons:
        if c.verdict is not Verdict.REGRESSION:
            comparisons.append(c)
            continue
        history = ", ".join(_change(r) for r in seen[c.name])
        if c.name in confirmed:
            reason = f"confirmed by {len(seen[c.name])} re-run(s) ({history}); {c.reason}"
            comparisons.append(c._replace(reason=reason, confirmed=True))
        else:
            reason = f"not confirmed: re-run gave {history}; first run {c.reason}"
            comparisons.append(c._replace(reason=reason, confirmed=False, failed=False))
    comparisons.sort(key=lambda c: (SEVERITY[c.verdict], c.confirmed is False))
    unconfirmed = len(flagged) - len(confirmed)
    note = (
        f"{len(flagged)} regression(s) re-run up to {runs} time(s) in a fresh process: "
        f"{len(confirmed)} confirmed, {unconfirmed} not confirmed"
    )
    if unconfirmed:
        note += " (shown, not failing)"
    return dataclasses.replace(
        report, comparisons=tuple(comparisons), notes=tuple(report.notes) + (note,)
    )
