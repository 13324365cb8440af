"""Views of a compare Report: terminal table, Markdown, JSON (schema in docs/compare.md), JUnit."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from kernelwatch import __version__
from kernelwatch.compare import Comparison, Report, SideSummary, Verdict
from kernelwatch.files import strict_json
from kernelwatch.results import Metric, ResultSet, gpu_model

# Bump on any change to the JSON output that could break a reader (renames, removals, meaning).
SCHEMA_VERSION = 1

_COLORS = {
    Verdict.REGRESSION: "\033[1;31m",
    Verdict.ERROR: "\033[1;35m",
    Verdict.MISSING: "\033[35m",
    Verdict.UNSURE: "\033[33m",
    Verdict.NEW: "\033[36m",
    Verdict.IMPROVEMENT: "\033[32m",
}
_RESET = "\033[0m"
_HEADERS = ("Verdict", "Benchmark", "Baseline", "Contender", "Change", "CI", "q", "Why")


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


def _change(ratio: float | None) -> str:
    return "-" if ratio is None else f"{(ratio - 1) * 100:+.1f}%"


def _cells(report: Report, c: Comparison) -> list[str]:
    metric = report.metric
    interval = (
        "-"
        if c.ci_low is None or c.ci_high is None
        else (f"[{(c.ci_low - 1) * 100:+.1f}%, {(c.ci_high - 1) * 100:+.1f}%]")
    )
    return [
        c.verdict.value,
        c.shown_name,
        format_value(c.baseline.median if c.baseline else None, metric),
        format_value(c.contender.median if c.contender else None, metric),
        _change(c.ratio),
        interval,
        "-" if c.q_value is None else f"{c.q_value:.2g}",
        c.reason,
    ]


def _catches(c: Comparison) -> str:
    """The smallest slowdown this comparison catches with 90 % probability; marked where the
    level's spread was never measured (the prior stood in)."""
    if c.sensitivity is None:
        return "-"
    return f"{c.sensitivity * 100:+.1f}%" + ("" if c.level_measured else " (prior)")


def _direction(metric: Metric) -> str:
    return "higher is better" if metric.higher_is_better else "lower is better"


def _summary_line(report: Report) -> str:
    counts = ", ".join(f"{n} {v.value}" for v, n in report.counts().items() if n)
    geomean = report.geomean_ratio()
    if geomean is None:
        return f"Nothing measured on both sides: {counts or 'no benchmarks'}"
    ratio, count = geomean
    return f"Geomean change {_change(ratio)} over {count} benchmarks: {counts}"


def summary_line(report: Report) -> str:
    """`Geomean change +1.2% over N benchmarks: 3 REGRESSION, ...` (as under the table)."""
    return _summary_line(report)


def _side_line(role: str, paths: Sequence[Any], context: Mapping[str, Any]) -> str:
    gpu = gpu_model(context)
    files = visible(", ".join(str(p) for p in paths))
    return f"  {role:<9} {files}" + (f"  [{gpu}]" if gpu else "")


def _shown(report: Report, c: Comparison) -> str:
    """The explanation line under a row: for a changed benchmark, or a kernel that changed."""
    found = report.explanations.get(c.name)
    if found is None:
        return ""
    kernel = found.kernel.change.value if found.kernel is not None else ""
    if c.verdict is Verdict.SAME and kernel in ("kernel identical", "kernel not compared", ""):
        if not found.profiled:
            return ""
    return found.line()


def kernel_summary(report: Report) -> str:
    """`kernels: 1 kernel code changed, 354 kernel identical` (empty without kernel records)."""
    found = Counter(
        e.kernel.change.value for e in report.explanations.values() if e.kernel is not None
    )
    if not found:
        return ""
    return "kernels: " + ", ".join(f"{n} {kind}" for kind, n in sorted(found.items()))


# Control characters (ESC of an ANSI sequence, BEL, CR, newlines) and the bidirectional
# overrides would act on the terminal, not show: names and messages print them escaped.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` for a terminal: control characters shown as escapes (`\\x1b`, `\\n`)."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def render_table(report: Report, color: bool = False, command: str = "compare") -> str:
    """Fixed-width table, worst first, with a geometric-mean summary line."""
    settings = report.settings
    lines = [
        f"kernelwatch {command}: {report.metric.key} ({_direction(report.metric)}), "
        f"alpha {settings.alpha:g} (Benjamini-Hochberg), threshold {settings.threshold:.1%}, "
        f"CI {settings.confidence:.0%}",
        _side_line("baseline", report.baseline.paths, report.baseline.context),
        _side_line("contender", report.contender.paths, report.contender.context),
        "",
    ]
    rows = [list(_HEADERS)] + [
        [visible(cell) for cell in _cells(report, c)] for c in report.comparisons
    ]
    widths = [max(map(len, column)) for column in list(zip(*rows))[:-1]]
    for row, c in zip(rows, (None, *report.comparisons)):
        cells = [cell.ljust(width) for cell, width in zip(row, widths)]
        if color and c is not None and c.verdict in _COLORS:
            cells[0] = f"{_COLORS[c.verdict]}{cells[0]}{_RESET}"
        lines.append("  ".join(cells) + "  " + row[-1])
        why = _shown(report, c) if c is not None else ""
        if why:
            lines.append(f"    -> {why}")
    # Warnings go to stderr from the CLI; the table keeps the quieter notes.
    lines += ["", _summary_line(report)]
    if kernel_summary(report):
        lines.append(kernel_summary(report))
    lines += [f"note: {visible(n)}" for n in report.notes]
    return "\n".join(lines) + "\n"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#!&])")


def _md(text: str) -> str:
    """Text in Markdown, shown as written: what would format, link or open HTML is escaped (a
    name in a reason or a note is text, never markup); a pipe would end the table cell."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(visible(text).splitlines()))


def _code(text: str) -> str:
    """`text` as a code span that no backtick in it can end early: the fence is one backtick
    longer than the longest run inside (CommonMark), padded when the text starts or ends with
    one. A pipe is escaped even there (GitHub's table rule)."""
    text = " ".join(visible(text).splitlines()).replace("|", "\\|")
    runs = [len(run) for run in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render_markdown(report: Report, command: str = "compare") -> str:
    """GitHub-flavoured Markdown for a step summary or a PR comment: the notable rows in a table,
    the unchanged ones folded away."""
    regressions = [c for c in report.comparisons if c.verdict is Verdict.REGRESSION]
    bad = sum(c.confirmed is not False for c in regressions)
    title = f"{bad} regression{'s' * (bad != 1)}" if bad else "no regression"
    if bad and any(c.confirmed for c in regressions):
        title += " (confirmed by a re-run)"
    unconfirmed = len(regressions) - bad
    if unconfirmed:
        title += f", {unconfirmed} not confirmed"
    out = [
        f"### kernelwatch {command}: {title}",
        "",
        f"Metric {_code(report.metric.key)} ({_direction(report.metric)}); "
        f"baseline {_code(report.baseline.label)}, contender {_code(report.contender.label)}; "
        f"alpha {report.settings.alpha:g} (Benjamini-Hochberg), "
        f"threshold {report.settings.threshold:.1%}.",
        "",
        f"**{_summary_line(report)}**",
        "",
    ]
    out += [f"> :warning: {_md(w)}" for w in report.warnings]
    if report.warnings:
        out.append("")

    def table(comparisons: Sequence[Comparison]) -> list[str]:
        headers = [*_HEADERS[:-1], "Catches", _HEADERS[-1]]
        rows = [
            "| " + " | ".join(headers) + " |",
            "|" + "|".join([":--", ":--", "--:", "--:", "--:", ":-:", "--:", "--:", ":--"]) + "|",
        ]
        for c in comparisons:
            cells = [_md(cell) for cell in _cells(report, c)]
            cells.insert(len(cells) - 1, _catches(c))
            cells[0], cells[1] = f"**{cells[0]}**", _code(c.shown_name)
            why = _shown(report, c)
            if why:
                cells[-1] += f" — *{_md(why)}*"
            rows.append("| " + " | ".join(cells) + " |")
        return rows

    notable = [c for c in report.comparisons if c.verdict is not Verdict.SAME]
    same = [c for c in report.comparisons if c.verdict is Verdict.SAME]
    if notable:
        out += table(notable) + [""]
    if same:
        out += [f"<details><summary>{len(same)} unchanged (SAME)</summary>", ""]
        out += table(same) + ["", "</details>", ""]
    if kernel_summary(report):
        out += [f"**{kernel_summary(report)}**", ""]
    out += _markdown_details(report)
    out += [f"- {_md(n)}" for n in report.notes]
    return "\n".join(out).rstrip() + "\n"


def _markdown_details(report: Report) -> list[str]:
    """Per explained benchmark: the counters (both sides) and the SASS diff, folded."""
    out: list[str] = []
    for c in report.comparisons:
        found = report.explanations.get(c.name)
        if found is None or not (found.profiled or found.sass_diffs):
            continue
        out += [f"<details><summary>Why <code>{_md(c.name)}</code> ({c.verdict.value}): "
                f"{_md(found.kernel_text() or 'kernel not compared')}</summary>", ""]
        if found.profiled:
            out += ["| ncu metric | baseline | contender |", "|:--|--:|--:|"]
            moved = {m.metric for m in found.moved}
            for metric in sorted(found.before.keys() & found.after.keys()):
                label = f"**{metric}**" if metric in moved else metric
                out.append(f"| {label} | {found.before[metric]:.6g} | {found.after[metric]:.6g} |")
            out.append("")
        for d in found.sass_diffs:
            out.append(f"SASS of `{_md(d.name)}`: {d.instructions[0]}→{d.instructions[1]} "
                       f"instructions; mix {_md(d.mix_text()) or 'unchanged'}; shared-memory ops "
                       + (", ".join(f"{op} {a}→{b}" for op, a, b in d.shared) or "none"))
            out += ["", "```diff", *d.diff]
            if d.truncated:
                out.append(f"... {d.truncated} more line(s)")
            out += ["```", ""]
        out += ["</details>", ""]
    return out


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _side_json(side: SideSummary | None) -> dict[str, Any] | None:
    if side is None:
        return None
    return {
        "n": side.n,
        "median": _number(side.median),
        "robust_cv": _number(side.robust_cv),
        "processes": side.processes,
        "from_aggregates": side.from_aggregates,
    }


def report_json(report: Report, command: str = "compare") -> dict[str, Any]:
    """The JSON document as a dict (documented in docs/compare.md, `schema_version` 1)."""
    settings = report.settings
    geomean = report.geomean_ratio()

    def side(result: ResultSet) -> dict[str, Any]:
        scalars = {
            k: v
            for k, v in result.context.items()
            if isinstance(v, (str, int)) or (isinstance(v, float) and math.isfinite(v))
        }
        return {
            "label": result.label,
            "paths": [str(p) for p in result.paths],
            "gpu": gpu_model(result.context),
            "context": scalars,
        }

    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "kernelwatch", "version": __version__, "command": command},
        "metric": {
            "name": report.metric.key,
            "higher_is_better": report.metric.higher_is_better,
            "unit": "ns" if report.metric.is_time else None,
        },
        "settings": {
            "alpha": settings.alpha,
            "threshold": settings.threshold,
            "min_repetitions": settings.min_repetitions,
            "noise_multiplier": settings.noise_multiplier,
            "confidence": settings.confidence,
            "ci_method": "hodges-lehmann",
            "test": "mann-whitney-u",
            "correction": "benjamini-hochberg",
            "allow_missing": settings.allow_missing,
            "allow_errors": settings.allow_errors,
            "threshold_rules": [
                {"match": r.pattern.pattern, "threshold": r.threshold} for r in settings.rules
            ],
        },
        "baseline": side(report.baseline),
        "contender": side(report.contender),
        "summary": {
            "counts": {v.value: n for v, n in report.counts().items()},
            "geomean_ratio": None if geomean is None else geomean[0],
            "geomean_count": 0 if geomean is None else geomean[1],
            "failed": report.failed,
            "exit_status": report.exit_status,
        },
        "warnings": list(report.warnings),
        "notes": list(report.notes),
        "benchmarks": [
            {
                "name": c.name,
                **({"label": c.label} if c.label else {}),
                "verdict": c.verdict.value,
                "reason": c.reason,
                "failed": c.failed,
                **({"confirmed": c.confirmed} if command == "run" else {}),
                "ratio": _number(c.ratio),
                "change": None if c.ratio is None else c.ratio - 1.0,
                "ci_low": _number(c.ci_low),
                "ci_high": _number(c.ci_high),
                "p_value": _number(c.p_value),
                "q_value": _number(c.q_value),
                "threshold": _number(c.threshold),
                "noise_floor": _number(c.noise_floor),
                "limit": _number(c.limit),
                "level": c.level,
                "level_measured": c.level_measured,
                "sensitivity": _number(c.sensitivity),
                "host_bound": c.host_bound,
                "baseline": _side_json(c.baseline),
                "contender": _side_json(c.contender),
                **(
                    {"explanation": report.explanations[c.name].as_json()}
                    if c.name in report.explanations
                    else {}
                ),
            }
            for c in report.comparisons
        ],
    }


def render_json(report: Report, command: str = "compare") -> str:
    """The JSON document: indented, except that each benchmark is one line (json's indenting
    encoder is pure Python and takes most of a second for 10,000 benchmarks)."""
    document = report_json(report, command)
    benchmarks = document.pop("benchmarks")
    head = strict_json(document)
    rows = ",\n".join("    " + strict_json(b, indent=None) for b in benchmarks)
    body = f'"benchmarks": [\n{rows}\n  ]' if benchmarks else '"benchmarks": []'
    return head[:-2] + ",\n  " + body + "\n}\n"


def render_junit(report: Report, command: str = "compare") -> str:
    """JUnit XML: one test case per benchmark; regressions (and other failing verdicts) fail.
    A regression that a re-run did not confirm passes, with the reason in <system-out>."""
    suite_name = f"kernelwatch.{command}.{report.metric.key}"
    counts = {"failures": 0, "errors": 0, "skipped": 0}
    cases = []
    for c in report.comparisons:
        case = ET.Element("testcase", classname=suite_name, name=c.shown_name, time="0")
        message = f"{c.verdict.value}: {c.reason}"
        if c.verdict is Verdict.ERROR and c.failed:
            ET.SubElement(case, "error", message=message, type=c.verdict.value).text = message
            counts["errors"] += 1
        elif c.failed:
            ET.SubElement(case, "failure", message=message, type=c.verdict.value).text = message
            counts["failures"] += 1
        elif c.verdict in (Verdict.MISSING, Verdict.ERROR):
            ET.SubElement(case, "skipped", message=message)
            counts["skipped"] += 1
        else:
            ET.SubElement(case, "system-out").text = message
        cases.append(case)
    root = ET.Element("testsuites", name="kernelwatch")
    attributes = {
        "name": suite_name,
        "tests": str(len(cases)),
        **{k: str(v) for k, v in counts.items()},
        "time": "0",
    }
    suite = ET.SubElement(root, "testsuite", attributes)
    suite.extend(cases)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _xml_chars(text) + "\n"


# What XML 1.0 does not allow in a document at all, escaped or not (C0 controls but tab, LF
# and CR; lone surrogates; U+FFFE and U+FFFF): shown as text escapes instead.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_chars(text: str) -> str:
    return _NOT_XML.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )
