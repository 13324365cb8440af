"""The Markdown view of a compare Report, for a step summary or a PR comment: the notable rows
in a table, the unchanged ones folded away; every name and message shown as text."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from kernelwatch.compare import Comparison, Report, Verdict
from kernelwatch.render import (
    HEADERS,
    catches,
    cells,
    change,
    direction,
    explanation_line,
    kernel_summary,
    settings_line,
    summary_line,
    visible,
)

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~#!&])")

# Where GitHub makes a mention (notifying the user or team), an issue link or a link of text: an
# `@` or `#` before a word, a URL's `://` or `www.` before a domain. Backslash escapes do not stop
# it (GitHub finds them in the rendered text); a word joiner (U+2060, not shown) after each does.
_REFERENCE = re.compile(r"(?<=[@#])(?=\w)|(?<=://)(?=[\w-]+\.\w)|(?<=\bwww)(?=\.\w)", re.IGNORECASE)


def no_references(text: str) -> str:
    """`text` (Markdown) that mentions, references and links nothing on GitHub."""
    return _REFERENCE.sub("\u2060", text)


def _md(text: str) -> str:
    """Text in Markdown, shown as written: what would format, link or open HTML is escaped (a
    name in a reason or a note is text, never markup, mention or link); a pipe would end the
    table cell."""
    return no_references(_MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(visible(text).splitlines())))


def _html(text: str) -> str:
    """Text in a line of raw HTML (`<details><summary>`), where Markdown's backslash escapes are
    not read: `\\<img src=...\\>` was an image there. On one line, shown as written."""
    return no_references(html.escape(" ".join(visible(text).splitlines())))


def _code(text: str) -> str:
    """`text` as a code span that no backtick in it can end early: the fence is one backtick
    longer than the longest run inside (CommonMark), padded when the text starts or ends with
    one. A pipe is escaped even there (GitHub's table rule)."""
    text = " ".join(visible(text).splitlines()).replace("|", "\\|")
    runs = [len(run) for run in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def headline(report: Report) -> str:
    """What the heading says: the failing regressions, a regression of the suite as a whole,
    the slowdowns shown but not failing (SLOWER: not confirmed by a re-run; host-bound against
    another host; unverified under 2x), the failing crashed benchmarks and the failing MISSING
    and ERROR ones, so that the heading of a failed comparison never reads "no regression"
    alone, nor that of a passing one "8 regressions"."""
    bad = [c for c in report.comparisons if c.verdict is Verdict.REGRESSION]
    title = f"{len(bad)} regression{'s' * (len(bad) != 1)}" if bad else "no regression"
    if any(c.confirmed for c in bad):
        title += " (confirmed by a re-run)"
    suite = report.suite
    if suite is not None and suite.regression:
        suite_title = (
            f"regression of the suite (geomean {change(suite.ratio)}, "
            f"{suite.confidence:.0%} interval [{change(suite.ci_low)}, {change(suite.ci_high)}] "
            f"past its {change(suite.limit_ratio)} limit)"
        )
        title = f"{title}, {suite_title}" if bad else suite_title
    slower = [c for c in report.comparisons if c.verdict is Verdict.SLOWER]
    unconfirmed = sum(c.confirmed is False for c in slower)
    if unconfirmed:
        title += f", {unconfirmed} SLOWER (not confirmed)"
    if len(slower) - unconfirmed:
        title += f", {len(slower) - unconfirmed} SLOWER (not failing)"
    crashed = sum(c.failed and c.crashed for c in report.comparisons)
    if crashed:
        title += f", {crashed} crashed"
    for verdict in (Verdict.MISSING, Verdict.ERROR):
        failing = sum(
            c.failed and not c.crashed for c in report.comparisons if c.verdict is verdict
        )
        if failing:
            title += f", {failing} {verdict.value}"
    return title


def render_markdown(report: Report, command: str = "compare") -> str:
    """GitHub-flavoured Markdown for a step summary or a PR comment: the notable rows in a table,
    the unchanged ones folded away."""
    out = [
        f"### kernelwatch {command}: {headline(report)}",
        "",
        f"Metric {_code(report.metric.key)} ({direction(report.metric)}); "
        f"baseline {_code(report.baseline.label)}, contender {_code(report.contender.label)}; "
        f"{_md(settings_line(report.settings))}.",
        "",
        f"**{summary_line(report)}**",
        "",
    ]
    out += [f"> :warning: {_md(w)}" for w in report.warnings]
    if report.warnings:
        out.append("")

    def table(comparisons: Sequence[Comparison]) -> list[str]:
        headers = [*HEADERS[:-1], "Catches", HEADERS[-1]]
        rows = [
            "| " + " | ".join(headers) + " |",
            "|" + "|".join([":--", ":--", "--:", "--:", "--:", ":-:", "--:", "--:", ":--"]) + "|",
        ]
        for c in comparisons:
            row = [_md(cell) for cell in cells(report, c)]
            row.insert(len(row) - 1, catches(c))
            row[0], row[1] = f"**{row[0]}**", _code(c.shown_name)
            why = explanation_line(report, c)
            if why:
                row[-1] += f" — *{_md(why)}*"
            rows.append("| " + " | ".join(row) + " |")
        return rows

    folded = {
        Verdict.SAME: "unchanged (SAME)",
        Verdict.IDENTICAL: "built identically, not measured",
    }
    notable = [c for c in report.comparisons if c.verdict not in folded]
    if notable:
        out += table(notable) + [""]
    for verdict, summary in folded.items():
        rows = [c for c in report.comparisons if c.verdict is verdict]
        if rows:
            out += [f"<details><summary>{len(rows)} {summary}</summary>", ""]
            out += table(rows) + ["", "</details>", ""]
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
        out += [
            f"<details><summary>Why <code>{_html(c.name)}</code> ({c.verdict.value}): "
            f"{_html(found.kernel_text() or 'kernel not compared')}</summary>",
            "",
        ]
        if found.profiled:
            out += ["| ncu metric | baseline | contender |", "|:--|--:|--:|"]
            moved = {m.metric for m in found.moved}
            for metric in sorted(found.before.keys() & found.after.keys()):
                label = f"**{_md(metric)}**" if metric in moved else _md(metric)
                out.append(f"| {label} | {found.before[metric]:.6g} | {found.after[metric]:.6g} |")
            out.append("")
        for d in found.sass_diffs:
            out.append(
                f"SASS of {_code(d.name)}: {d.instructions[0]}→{d.instructions[1]} "
                f"instructions; mix {_md(d.mix_text()) or 'unchanged'}; shared-memory ops "
                + (", ".join(f"{op} {a}→{b}" for op, a, b in d.shared) or "none")
            )
            out += ["", "```diff", *d.diff]
            if d.truncated:
                out.append(f"... {d.truncated} more line(s)")
            out += ["```", ""]
        out += ["</details>", ""]
    return out
