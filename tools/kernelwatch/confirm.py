"""Confirming regressions: re-run only the flagged benchmarks in fresh processes, and fail only
on those that regress every time. A one-off disturbance (another job on the GPU, a clock dip)
then shows as SLOWER "not confirmed" instead of failing CI.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from kernelwatch.compare import SEVERITY, SLOWDOWNS, Comparison, Report, Verdict, worded_for
from kernelwatch.results import ResultSet

# rerun(k, names) -> the compare Report of re-run k (1-based) of `names` against the baseline;
# RerunCrashed when a process of it crashed, hung or lost the GPU.
Rerun = Callable[[int, Sequence[str]], Report]


class RerunCrashed(Exception):
    """A re-run in which benchmark processes failed: each lost benchmark's failure line
    (`crashed`), the exit status of the first failure (3; 4: the GPU went away), what
    finished (`finished`) and its comparison (`report`; None when nothing finished)."""

    def __init__(
        self,
        crashed: Mapping[str, str],
        exit_status: int,
        finished: ResultSet | None = None,
        report: Report | None = None,
    ) -> None:
        super().__init__(next(iter(crashed.values()), "a re-run failed"))
        self.crashed = dict(crashed)
        self.exit_status = exit_status
        self.finished = finished
        self.report = report


def _change(c: Comparison | None) -> str:
    if c is None:
        return "absent"
    if c.ratio is None:
        return c.verdict.value
    return f"{c.verdict.value} {(c.ratio - 1) * 100:+.1f}%"


def confirm_regressions(report: Report, rerun: Rerun, times: int) -> Report:
    """The report with every REGRESSION marked confirmed (still failing) or not confirmed
    (SLOWER: shown, not failing). A re-run confirms it when it is slower past the limit again,
    failing or not (SLOWER: unverified). `times` re-runs at most; 0 leaves the report as it
    is."""
    flagged = [c.name for c in report.comparisons if c.verdict is Verdict.REGRESSION]
    if times <= 0 or not flagged:
        return report
    standing = list(flagged)
    seen: dict[str, list[Comparison | None]] = {name: [] for name in flagged}
    crashed: dict[str, str] = {}  # name -> "re-run K crashed: LINE"
    runs = 0
    for k in range(1, times + 1):
        if not standing:
            break
        runs = k
        try:
            found = {c.name: c for c in rerun(k, standing).comparisons}
        except RerunCrashed as exc:
            # What crashed stays as the first run judged it; the rest goes on as usual.
            found = {c.name: c for c in exc.report.comparisons} if exc.report else {}
            for name in standing:
                if name in exc.crashed:
                    crashed[name] = f"re-run {k} crashed: {exc.crashed[name]}"
                    found.pop(name, None)
            standing = [n for n in standing if n not in crashed]
        for name in standing:
            seen[name].append(found.get(name))
        standing = [
            n for n in standing if found.get(n) is not None and found[n].verdict in SLOWDOWNS
        ]

    confirmed = set(standing)
    comparisons = []
    for c in report.comparisons:
        if c.verdict is not Verdict.REGRESSION:
            comparisons.append(c)
            continue
        history = ", ".join(_change(r) for r in seen[c.name])
        if c.name in crashed:
            before = f" after {history}" if history else ""
            reason = f"not confirmed either way: {crashed[c.name]}{before}; first run {c.reason}"
            comparisons.append(c._replace(reason=reason, crashed=True))
        elif c.name in confirmed:
            reason = f"confirmed by {len(seen[c.name])} re-run(s) ({history}); {c.reason}"
            comparisons.append(c._replace(reason=reason, confirmed=True))
        else:
            reason = f"not confirmed: re-run gave {history}; first run {c.reason}"
            comparisons.append(
                c._replace(
                    verdict=worded_for(c.verdict, False),
                    reason=reason,
                    confirmed=False,
                    failed=False,
                )
            )
    comparisons.sort(key=lambda c: (SEVERITY[c.verdict], c.confirmed is False))
    unconfirmed = len(flagged) - len(confirmed) - len(crashed)
    note = (
        f"{len(flagged)} regression(s) re-run up to {runs} time(s) in a fresh process: "
        f"{len(confirmed)} confirmed, {unconfirmed} not confirmed"
    )
    if unconfirmed:
        note += " (SLOWER: shown, not failing)"
    if crashed:
        note += f", {len(crashed)} whose re-run crashed (still failing, as the first run judged)"
    return dataclasses.replace(
        report, comparisons=tuple(comparisons), notes=tuple(report.notes) + (note,)
    )
