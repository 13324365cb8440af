"""The terminal view of a compare Report: a fixed-width table, worst first, colored verdicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kernelwatch.compare import Report, Verdict
from kernelwatch.render import cells as shown
from kernelwatch.results import gpu_model

_COLORS = {
    Verdict.REGRESSION: "\033[1;31m",
    Verdict.SLOWER: "\033[31m",  # red as a slowdown, not bold: it does not fail
    Verdict.ERROR: "\033[1;35m",
    Verdict.MISSING: "\033[35m",
    Verdict.UNSURE: "\033[33m",
    Verdict.NEW: "\033[36m",
    Verdict.IMPROVEMENT: "\033[32m",
}
_RESET = "\033[0m"


def _side_line(role: str, paths: Sequence[Any], context: Mapping[str, Any]) -> str:
    gpu = gpu_model(context)
    files = shown.visible(", ".join(str(p) for p in paths))
    return f"  {role:<9} {files}" + (f"  [{gpu}]" if gpu else "")


def render_table(report: Report, color: bool = False, command: str = "compare") -> str:
    """Fixed-width table, worst first, with a geometric-mean summary line."""
    settings = report.settings
    lines = [
        f"kernelwatch {command}: {report.metric.key} ({shown.direction(report.metric)}), "
        f"alpha {settings.alpha:g} (Benjamini-Hochberg), threshold {settings.threshold:.1%}, "
        f"CI {settings.confidence:.0%}",
        _side_line("baseline", report.baseline.paths, report.baseline.context),
        _side_line("contender", report.contender.paths, report.contender.context),
        "",
    ]
    rows = [list(shown.HEADERS)] + [
        [shown.visible(cell) for cell in shown.cells(report, c)] for c in report.comparisons
    ]
    widths = [max(map(len, column)) for column in list(zip(*rows))[:-1]]
    for row, c in zip(rows, (None, *report.comparisons)):
        padded = [cell.ljust(width) for cell, width in zip(row, widths)]
        if color and c is not None and c.verdict in _COLORS:
            padded[0] = f"{_COLORS[c.verdict]}{padded[0]}{_RESET}"
        lines.append("  ".join(padded) + "  " + row[-1])
        why = shown.explanation_line(report, c) if c is not None else ""
        if why:
            lines.append(f"    -> {why}")
    # Warnings go to stderr from the CLI; the table keeps the quieter notes.
    lines += ["", shown.summary_line(report)]
    if shown.kernel_summary(report):
        lines.append(shown.kernel_summary(report))
    lines += [f"note: {shown.visible(n)}" for n in report.notes]
    return "\n".join(lines) + "\n"
