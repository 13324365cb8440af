"""Benchmarks whose process crashed, hung or lost the GPU in a comparison's runs (`ab`,
bisect's oracle), or in the run that wrote a result compared later (`compare`, `report` of the
partial result `run` keeps: partial.py): where it happened, and the report's rows that say so.

A crashed process measures nothing of its binary, so each of the binary's benchmarks is
marked; which one of them crashed, the failure line may say (the harness's hang watchdog names
it). On the contender's side a crash is an ERROR of its own that fails whatever
--allow-errors says (a kernel that crashes is the worst regression there is); on the
baseline's side it fails nothing: the benchmark is judged on the baseline's runs that
finished, or is an ERROR "not compared" when none did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernelwatch import results, runner
from kernelwatch.compare import SEVERITY, Comparison, Report, Verdict
from kernelwatch.gbench import failed_row
from kernelwatch.results import ResultSet

CONTENDER, BASELINE = "contender", "baseline"


@dataclass(frozen=True)
class Crash:
    """One failed benchmark process: its side ("A", "B"), its run ("round 2 of 3"), its
    one-line failure, and the benchmarks of its binary."""

    side: str
    run: str
    failure: str
    names: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.side} {self.run}" if self.run else self.side


def from_incomplete(failed: runner.IncompleteRun, side: str, run: str) -> list[Crash]:
    return [Crash(side, run, failure, names) for failure, names in failed.lost]


def from_context(result: ResultSet) -> list[Crash]:
    """The crash a saved result's context records (runner.IncompleteRun's partial result):
    its benchmarks without a result, with the failure line. Which failed process each belongs
    to, the context does not say: with several, the first line and how many more."""
    context = result.context
    names = _strings(context.get(results.NO_RESULT_KEY))
    if not names:
        return []
    lines = _strings(context.get(results.FAILED_KEY))
    failure = lines[0] if lines else f"no result ({results.NO_RESULT_KEY})"
    if len(lines) > 1:
        failure += f" (and {len(lines) - 1} more failed process(es): {results.FAILED_KEY})"
    return [Crash(result.label, "", failure, tuple(names))]


def mark_saved(report: Report) -> Report:
    """The report with the benchmarks that either side's saved result has no result for, for
    a crash recorded in its context (from_context), marked as crashes (mark), one warning per
    side saying so."""
    base, cont = from_context(report.baseline), from_context(report.contender)
    if not base and not cont:
        return report
    marked = mark(report, base, cont)
    warnings = [
        f"{crash.where}: a partial result, {len(crash.names)} benchmark(s) without a result: "
        f"{crash.failure}"
        for crash in (*cont, *base)
    ]
    return dataclasses.replace(marked, warnings=tuple(report.warnings) + tuple(warnings))


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def error_document(context: Mapping[str, Any], crashes: Sequence[Crash]) -> dict[str, Any]:
    """A side none of whose runs finished anything: an error row for each benchmark (its
    context records no GPU, and the comparison says so)."""
    first = _by_name(crashes)
    rows = [
        failed_row(name, f"no result: {found[0].where}: {found[0].failure}")
        for name, found in first.items()
    ]
    return {"context": dict(context), "benchmarks": rows}


def mark(report: Report, baseline: Sequence[Crash], contender: Sequence[Crash]) -> Report:
    """The report with every crashed benchmark's row saying so (the module's rules), a row
    added for one neither side measured, and a warning per failed process."""
    on_base, on_cont = _by_name(baseline), _by_name(contender)
    if not on_base and not on_cont:
        return report
    rows = []
    for c in report.comparisons:
        rows.append(_marked(c, on_base.get(c.name, []), on_cont.get(c.name, [])))
    shown = {c.name for c in report.comparisons}
    for name in sorted((on_base.keys() | on_cont.keys()) - shown):
        nothing = Comparison(name, Verdict.ERROR, "measured on neither side", failed=False)
        rows.append(_marked(nothing, on_base.get(name, []), on_cont.get(name, [])))
    rows.sort(key=lambda c: (SEVERITY[c.verdict], not (c.failed and c.crashed)))
    warnings = [
        f"{crash.where}: {crash.failure} ({len(crash.names)} benchmark(s) of its binary without "
        "a result in that run)"
        for crash in (*contender, *baseline)
    ]
    return dataclasses.replace(
        report, comparisons=tuple(rows), warnings=tuple(report.warnings) + tuple(warnings)
    )


def _marked(c: Comparison, on_base: Sequence[Crash], on_cont: Sequence[Crash]) -> Comparison:
    if on_cont:
        measured = f"; the runs that finished: {_change(c)}" if c.ratio is not None else ""
        return _crash_row(c, f"crashed: {_said(on_cont)}{measured}", failed=True)
    if not on_base:
        return c
    if c.ratio is not None:  # the baseline's other runs measured it
        reason = f"{c.reason}; judged on the baseline's runs that finished ({_said(on_base)})"
        return c._replace(reason=reason, crashed=True)
    if c.verdict in (Verdict.NEW, Verdict.ERROR) and not c.failed:
        return _crash_row(c, f"baseline crashed: {_said(on_base)}; not compared", failed=False)
    return c._replace(reason=f"{c.reason}; baseline crashed: {_said(on_base)}", crashed=True)


def _crash_row(c: Comparison, reason: str, failed: bool) -> Comparison:
    return Comparison(c.name, Verdict.ERROR, reason, failed=failed, label=c.label, crashed=True)


def _said(crashes: Sequence[Crash]) -> str:
    """Where, and the first failure's line: `B round 2 of 3, B round 3 of 3: LINE`."""
    places = ", ".join(dict.fromkeys(crash.where for crash in crashes))
    return f"{places}: {crashes[0].failure}"


def _change(c: Comparison) -> str:
    assert c.ratio is not None
    return f"{c.verdict.value} {(c.ratio - 1) * 100:+.1f}%"


def _by_name(crashes: Iterable[Crash]) -> dict[str, list[Crash]]:
    found: dict[str, list[Crash]] = {}
    for crash in crashes:
        for name in crash.names:
            found.setdefault(name, []).append(crash)
    return found
