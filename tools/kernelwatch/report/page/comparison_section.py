"""The page's comparison with the baseline: the headline, the verdicts' counts, and the table
of benchmarks, each row with its explanation (kernel change, counters that moved, SASS diff)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape as _e

from kernelwatch.compare import Comparison, Verdict
from kernelwatch.names import short_commit
from kernelwatch.explanation import Explanation
from kernelwatch.explanation import format_number as ncu_fmt
from kernelwatch.render import (
    change,
    direction,
    format_value,
    interval,
    q_value,
    settings_line,
    summary_line,
    worth_explaining,
)
from kernelwatch.render.markdown import headline as render_headline
from kernelwatch.report.build import Page
from kernelwatch.report.page.markup import when
from kernelwatch.results import Metric

_HEAD = (
    "<tr><th>Verdict</th><th>Benchmark</th><th class=num>Baseline</th><th class=num>This run</th>"
    "<th class=num>Change</th><th class=num>CI</th><th class=num>q</th><th>Why</th></tr>"
)


def _explanation(c: Comparison, found: Explanation | None) -> str:
    """Under the verdict's reason: the kernel verdict, the counters that moved, the SASS diff."""
    if found is None or not worth_explaining(c, found):
        return ""
    kernel = found.kernel.change.value if found.kernel is not None else ""
    parts = []
    if found.kernel is not None:
        cls = {"kernel code changed": "code", "launch changed": "launch"}.get(kernel, "same")
        details = (
            "; ".join(found.kernel.details)
            if found.kernel.change.value != "kernel identical"
            else (
                "same SASS, resources and launch: the change came from elsewhere (harness, host, card)"
            )
        )
        parts.append(
            f'<div class="kchange"><span class="badge k{cls}">{_e(kernel)}</span> {_e(details)}</div>'
        )
    if found.moved:
        rows = "".join(
            f"<tr><td>{_e(m.label)}</td><td class=num>{_e(ncu_fmt(m.before))}</td>"
            f"<td class=num>{_e(ncu_fmt(m.after))}</td></tr>"
            for m in found.moved
        )
        parts.append(
            '<table class="moved"><thead><tr><th>ncu: moved most</th><th class=num>baseline</th>'
            f"<th class=num>this run</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    elif found.note:
        parts.append(f'<div class="knote">{_e(found.note)}</div>')
    for d in found.sass_diffs:
        shared = ", ".join(f"{op} {a}→{b}" for op, a, b in d.shared) or "none"
        listing = "\n".join(d.diff) + (f"\n... {d.truncated} more line(s)" if d.truncated else "")
        parts.append(
            f"<details><summary>SASS diff of <code>{_e(d.name)}</code>: "
            f"{d.instructions[0]}→{d.instructions[1]} instructions; {_e(d.mix_text() or 'same mix')}; "
            f"shared-memory ops {_e(shared)}</summary><pre class=sass>{_e(listing)}</pre></details>"
        )
    return '<div class="explain">' + "".join(parts) + "</div>"


def _row(c: Comparison, metric: Metric, found: Explanation | None = None) -> str:
    """The benchmark's row, and its explanation in a row of its own under it, across the
    columns: in the Why cell, an ncu metric name wrapped a letter a line at 1100 px."""
    verdict = c.verdict.value
    if c.confirmed is False:
        verdict += " (not confirmed)"
    explanation = _explanation(c, found)
    classes = c.verdict.value + (" explained" if explanation else "")
    row = (
        f'<tr class="{classes}"><td><span class="badge {c.verdict.value}">{_e(verdict)}</span></td>'
        f'<td class="name"><code>{_e(c.shown_name)}</code></td>'
        f'<td class="num">{_e(format_value(c.baseline.median if c.baseline else None, metric))}</td>'
        f'<td class="num">{_e(format_value(c.contender.median if c.contender else None, metric))}</td>'
        f'<td class="num change">{_e(change(c.ratio, "–"))}</td>'
        f'<td class="num">{_e(interval(c, "–"))}</td><td class="num">{_e(q_value(c, "–"))}</td><td class="why">{_e(c.reason)}</td></tr>'
    )
    if explanation:
        row += f'<tr class="explanation"><td></td><td colspan="7">{explanation}</td></tr>'
    return row


def _table(
    comparisons: Sequence[Comparison],
    metric: Metric,
    explanations: Mapping[str, Explanation] | None = None,
) -> str:
    found = explanations or {}
    rows = "".join(_row(c, metric, found.get(c.name)) for c in comparisons)
    return f"<table><thead>{_HEAD}</thead><tbody>{rows}</tbody></table>"


def comparison_section(page: Page) -> str:
    out = ['<section id="comparison"><h2>Against the baseline</h2>']
    report = page.comparison
    if report is None or page.baseline is None:
        out.append(
            '<div class="box"><b>No baseline: nothing was compared.</b> '
            f"{_e(page.no_baseline or '')}</div>"
        )
        out.append("</section>")
        return "".join(out)
    metric = report.metric
    counts = report.counts()
    base_context = page.baseline.context
    out.append(
        f"<p>Baseline: <code>{_e(page.baseline.label)}</code> ({_e(page.baseline.how)}; commit "
        f"<code>{_e(short_commit(base_context.get('kernelwatch_git_commit')))}</code>, "
        f"{_e(when(base_context.get('date')) or 'date not recorded')}). Metric "
        f"<code>{_e(metric.key)}</code> ({direction(metric)}); {_e(settings_line(report.settings))}; "
        "each benchmark's limit is raised by its noise floor (docs/compare.md).</p>"
    )
    # The Markdown's heading: slowdowns that do not fail (SLOWER: host-bound against another
    # host, unverified under 2x, not confirmed) are not "N regressions" on a page that passes.
    headline, kind = render_headline(report), "bad" if report.failed else "good"
    out.append(
        f'<div class="box {kind}"><div class="headline">{_e(headline)}</div>'
        f"{_e(summary_line(report))}</div>"
    )
    out.append(
        '<div class="counts">'
        + "".join(
            f'<span class="badge {v.value}">{n} {v.value}</span>' for v, n in counts.items() if n
        )
        + "</div>"
    )
    if report.warnings:
        out.append(
            '<div class="box">' + "<br>".join(f"⚠ {_e(w)}" for w in report.warnings) + "</div>"
        )
    notable = [c for c in report.comparisons if c.verdict is not Verdict.SAME]
    same = [c for c in report.comparisons if c.verdict is Verdict.SAME]
    if notable:
        out.append(_table(notable, metric, report.explanations))
    else:
        out.append("<p>Every benchmark measured on both sides is within its limit (SAME).</p>")
    if same:
        out.append(
            f"<details><summary>{len(same)} benchmark(s) within their limits (SAME)</summary>"
            f"{_table(same, metric, report.explanations)}</details>"
        )
    if report.notes:
        out.append(
            '<ul class="notes">' + "".join(f"<li>{_e(n)}</li>" for n in report.notes) + "</ul>"
        )
    out.append("</section>")
    return "".join(out)
