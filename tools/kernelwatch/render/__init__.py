"""Views of a compare Report: terminal table, Markdown, JSON (schema in docs/compare.md), JUnit.

markdown.py   Markdown for a step summary or a PR comment
document.py   the JSON document
junit.py      JUnit XML

Here: what every view shows of a comparison, worded once (values with units, changes,
intervals, a row's cells, the settings and summary lines, the explanation line, text made safe
to print), and the terminal table, what a command prints unless asked otherwise. The other
formats load at their first use (module __getattr__), so a compare that prints the table loads
none of their code.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kernelwatch import loaded_at_first_use
from kernelwatch.compare import Comparison, Report, Settings, Verdict
from kernelwatch.explanation import Change, Explanation
from kernelwatch.results import Metric, gpu_model

if TYPE_CHECKING:
    from kernelwatch.render.document import SCHEMA_VERSION, render_json
    from kernelwatch.render.junit import render_junit
    from kernelwatch.render.markdown import render_markdown

_LOADED_AT_FIRST_USE = {
    "SCHEMA_VERSION": "document",
    "render_json": "document",
    "render_junit": "junit",
    "render_markdown": "markdown",
}


def __getattr__(name: str) -> Any:
    return loaded_at_first_use(__name__, _LOADED_AT_FIRST_USE, name)


# The formats loaded at first use are exported as the names defined here are.
__all__ = [
    "SCHEMA_VERSION",
    "aligned",
    "change",
    "format_value",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_table",
    "settings_line",
    "suite_statement",
    "summary_line",
]


HEADERS = ("Verdict", "Benchmark", "Baseline", "Contender", "Change", "CI", "q", "Why")


def format_value(value: float | None, metric: Metric) -> str:
    """A time (given in ns) with a readable unit, or a counter with an SI prefix."""
    if value is None:
        return "-"
    if metric.is_time:
        if value >= 1e3:
            for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
                if value >= scale:
                    return f"{value / scale:#.4g} {unit}"
        return f"{value:#.4g} ns"
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.4g}{prefix}"
    return f"{value:.4g}"


def change(ratio: float | None, absent: str = "-") -> str:
    """A ratio as a signed change, `+1.2%`."""
    return absent if ratio is None else f"{(ratio - 1) * 100:+.1f}%"


def interval(c: Comparison, absent: str = "-") -> str:
    """The comparison's confidence interval of the change, `[+0.8%, +1.6%]`."""
    if c.ci_low is None or c.ci_high is None:
        return absent
    return f"[{change(c.ci_low)}, {change(c.ci_high)}]"


def q_value(c: Comparison, absent: str = "-") -> str:
    return absent if c.q_value is None else f"{c.q_value:.2g}"


def cells(report: Report, c: Comparison) -> list[str]:
    metric = report.metric
    return [
        c.verdict.value,
        c.shown_name,
        format_value(c.baseline.median if c.baseline else None, metric),
        format_value(c.contender.median if c.contender else None, metric),
        change(c.ratio),
        interval(c),
        q_value(c),
        c.reason,
    ]


def catches(c: Comparison) -> str:
    """The smallest slowdown this comparison catches with 90 % probability; marked where the
    level's spread was never measured (the prior stood in)."""
    if c.sensitivity is None:
        return "-"
    return f"{c.sensitivity * 100:+.1f}%" + ("" if c.level_measured else " (prior)")


def direction(metric: Metric) -> str:
    return "higher is better" if metric.higher_is_better else "lower is better"


def settings_line(settings: Settings) -> str:
    """`alpha 0.05 (Benjamini-Hochberg; default: ...), threshold 1.0% (kernelwatch.toml)`: the
    settings the header shows, each with where it came from (Settings.sources), and the
    config's per-benchmark rules that override the threshold where they match."""
    sources, rules = settings.sources, len(settings.rules)
    overridden = (
        f"; {rules} per-benchmark rule(s) of {sources.rules or 'the config'} override it where "
        "they match"
        if rules
        else ""
    )
    return (
        f"alpha {settings.alpha:g} (Benjamini-Hochberg; {sources.alpha}), "
        f"threshold {settings.threshold:.1%} ({sources.threshold}{overridden})"
    )


def summary_line(report: Report) -> str:
    """`Geomean change +1.2% over N benchmarks: 3 REGRESSION, 2 SLOWER, ...` (as under the
    table), what it leaves out (Report.geomean_left_out), and what the suite as a whole says
    where its interval lies past its limit."""
    counts = ", ".join(f"{n} {v.value}" for v, n in report.counts().items() if n)
    geomean, left_out = report.geomean_ratio(), report.geomean_left_out
    apart = f" ({left_out} judged against the committed baseline, not in it)" if left_out else ""
    if geomean is None:
        nothing = "No geomean" if left_out else "Nothing measured on both sides"
        return f"{nothing}{apart}: {counts or 'no benchmarks'}"
    ratio, count = geomean
    line = (
        f"Geomean change {change(ratio)} over {count} benchmark{'s' * (count != 1)}{apart}: "
        f"{counts}"
    )
    statement = suite_statement(report)
    return f"{line}; {statement}" if statement else line


def suite_statement(report: Report) -> str:
    """`regression of the suite: ...` where the geomean's interval lies wholly past the limit
    (failing), `improvement of the suite: ...` on the better side; empty otherwise."""
    suite = report.suite
    if suite is None or suite.verdict is Verdict.SAME:
        return ""
    what = "regression" if suite.verdict is Verdict.REGRESSION else "improvement"
    bound = suite.limit_ratio if what == "regression" else 1.0 / suite.limit_ratio
    return (
        f"{what} of the suite: the {suite.confidence:.0%} interval of the geomean of "
        f"{suite.benchmarks} benchmarks, [{change(suite.ci_low)}, {change(suite.ci_high)}], lies "
        f"past {change(bound)}, the geomean of their limits"
    )


def worth_explaining(c: Comparison, found: Explanation | None) -> bool:
    """Whether a row shows its explanation: a changed benchmark, a kernel that changed, or
    counters that were profiled. An IDENTICAL row (not measured) changed nothing: an anchored
    run of unchanged code wrote "kernel identical: the change came from elsewhere" under each
    of its 312 kernels' rows (tests/data/gpu/h200-card-720306a7-baseline-b0f397d)."""
    if found is None:
        return False
    kernel = found.kernel.change.value if found.kernel is not None else ""
    unchanged = kernel in ("kernel identical", "kernel not compared", "")
    no_change = c.verdict in (Verdict.SAME, Verdict.IDENTICAL)
    return not (no_change and unchanged and not found.profiled)


def explanation_line(report: Report, c: Comparison) -> str:
    """The explanation line under a row (empty where there is none worth showing)."""
    found = report.explanations.get(c.name)
    return found.line() if found is not None and worth_explaining(c, found) else ""


def kernel_summary(report: Report) -> str:
    """`kernels of the benchmarks: 1 code changed, 354 identical` (empty without kernel
    records), with why most of those not compared were not: a baseline's records of another
    version read "356 not compared" and nothing more (the rows show no explanation)."""
    kernels = [e.kernel for e in report.explanations.values() if e.kernel is not None]
    found = Counter(k.change for k in kernels)
    if not found:
        return ""
    why = Counter(k.details[0] for k in kernels if k.change is Change.UNKNOWN and k.details)
    counts = []
    for change, n in sorted(found.items()):
        count = f"{n} {change.value.removeprefix('kernel ')}"
        if change is Change.UNKNOWN and why:
            reason, most = why.most_common(1)[0]
            count += f" ({'all' if most == n else most}: {reason})"
        counts.append(count)
    return "kernels of the benchmarks: " + ", ".join(counts)


# Control characters (ESC of an ANSI sequence, BEL, CR, newlines) and the bidirectional
# overrides would act on the terminal, not show: names and messages print them escaped.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` for a terminal: control characters shown as escapes (`\\x1b`, `\\n`)."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def aligned(rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """Plain columns two spaces apart (the first row the header), the columns in `right`
    right-aligned, no trailing spaces: the listings of `baseline` and `history`."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in rows
    ]


# The terminal view of a compare Report: a fixed-width table, worst first, colored verdicts.


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
    files = visible(", ".join(str(p) for p in paths))
    return f"  {role:<9} {files}" + (f"  [{gpu}]" if gpu else "")


def render_table(report: Report, color: bool = False, command: str = "compare") -> str:
    """Fixed-width table, worst first, with a geometric-mean summary line."""
    settings = report.settings
    lines = [
        f"kernelwatch {command}: {report.metric.key} ({direction(report.metric)}), "
        f"{visible(settings_line(settings))}, CI {settings.confidence:.0%}",
        _side_line("baseline", report.baseline.paths, report.baseline.context),
        _side_line("contender", report.contender.paths, report.contender.context),
        "",
    ]
    rows = [list(HEADERS)] + [
        [visible(cell) for cell in cells(report, c)] for c in report.comparisons
    ]
    widths = [max(map(len, column)) for column in list(zip(*rows))[:-1]]
    for row, c in zip(rows, (None, *report.comparisons)):
        padded = [cell.ljust(width) for cell, width in zip(row, widths)]
        if color and c is not None and c.verdict in _COLORS:
            padded[0] = f"{_COLORS[c.verdict]}{padded[0]}{_RESET}"
        lines.append("  ".join(padded) + "  " + row[-1])
        why = explanation_line(report, c) if c is not None else ""
        if why:
            lines.append(f"    -> {why}")
    # Warnings go to stderr from the CLI; the table keeps the quieter notes.
    lines += ["", summary_line(report)]
    if kernel_summary(report):
        lines.append(kernel_summary(report))
    lines += [f"note: {visible(n)}" for n in report.notes]
    return "\n".join(lines) + "\n"
