"""What each side holds of a benchmark: verdicts decided by presence, errors and skips alone;
the benchmarks measured on both sides with the metric's columns; the processes per benchmark."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelwatch.compare.outcome import Comparison, Settings, Verdict
from kernelwatch.errors import InputError
from kernelwatch.results import Metric, ResultSet

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
    return notes


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
