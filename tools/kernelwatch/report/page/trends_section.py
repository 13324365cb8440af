"""The page's trends from the history: which benchmarks are plotted and why, the change points,
and the trend plots."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape as _e

from kernelwatch.names import short_commit
from kernelwatch.render import change, format_value
from kernelwatch.report import trends
from kernelwatch.report.build import Page
from kernelwatch.report.page.markup import svg_with_width, when
from kernelwatch.results import Metric


def _changes_table(changes: Sequence[trends.ChangeLike], metric: Metric) -> str:
    rows = []
    for c in sorted(changes, key=lambda c: (c.benchmark, c.date)):
        kind = "REGRESSION" if c.regression else "IMPROVEMENT"
        rows.append(
            f'<tr class="{kind}"><td><span class="badge {kind}">{trends.direction_word(metric, c.regression)}</span></td>'
            f'<td class="name"><code>{_e(c.benchmark)}</code></td><td class="num">{_e(when(c.date))}</td>'
            f"<td><code>{_e(short_commit(c.commit))}</code></td>"
            f'<td class="num">{_e(format_value(c.before, metric))}</td>'
            f'<td class="num">{_e(format_value(c.after, metric))}</td>'
            f'<td class="num change">{change(c.ratio)}</td>'
            f'<td class="num">{c.p_value:.2g}</td></tr>'
        )
    head = (
        "<tr><th></th><th>Benchmark</th><th class=num>First run after</th><th>Commit</th>"
        "<th class=num>Before</th><th class=num>After</th><th class=num>Change</th>"
        "<th class=num>p</th></tr>"
    )
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def trends_section(page: Page, metric: Metric) -> str:
    out = ['<section id="trends"><h2>Trends</h2>']
    section = page.trends
    if section.unavailable:
        out.append(
            f'<div class="box info">No trend plots: {_e(section.unavailable)}</div></section>'
        )
        return "".join(out)
    choice = section.choice
    where = f"<code>{_e(page.database or '')}</code>"
    here = (
        f"this run is run {section.run_in_history} there"
        if section.run_in_history is not None
        else "this run is not in it (drawn as ◇ after the last run)"
    )
    out.append(
        f"<p>From the history {where}: {section.runs} run(s) of this GPU; {here}. "
        f"Metric <code>{_e(metric.key)}</code>; each point is the median of a run, the grey "
        "bar its repetitions' range.</p>"
    )
    if section.detection:
        out.append(f"<p>{_e(section.detection)}</p>")
    for note in section.notes:
        out.append(f'<div class="box info">{_e(note)}</div>')
    if choice is not None:
        drawn = len(section.plots)
        parts = []
        if choice.count(trends.REASON_CHANGE) or choice.changed:
            parts.append(
                f"{choice.count(trends.REASON_CHANGE)} of the {choice.changed} benchmark(s) "
                "with a change point"
            )
        if choice.count(trends.REASON_REGRESSION) or choice.regressed:
            parts.append(
                f"{choice.count(trends.REASON_REGRESSION)} of the {choice.regressed} that "
                "regressed against the baseline"
            )
        parts.append(
            f"{choice.count(trends.REASON_REFERENCE)} family reference(s) (the "
            "speed-of-light benchmark of each family, for drift of the machine itself)"
        )
        several = sum(len(reasons) > 1 for _, reasons in choice.chosen)
        if several:
            parts[-1] += f" ({several} plot(s) for more than one of these reasons)"
        out.append(
            f"<p><b>{drawn} trend plot(s) of the run's {page.benchmarks} benchmarks</b>: "
            + "; ".join(parts)
            + f". At most {choice.limit} are drawn, changes first; every other benchmark's series is "
            "in <code>kernelwatch history show NAME</code>.</p>"
        )
    if section.changes:
        out.append(f"<h3>Change points ({len(section.changes)})</h3>")
        out.append(_changes_table(section.changes, metric))
    elif not section.notes:
        out.append("<p>No change point in the history of this run's benchmarks.</p>")
    if section.plots:
        out.append('<div class="trend-grid">')
        for plot in section.plots:
            tags = "".join(f'<span class="badge tag">{_e(r)}</span>' for r in plot.reasons)
            out.append(
                f'<figure class="kw-figure trend" id="{plot.key}"><figcaption>{tags}'
                f"<code>{_e(plot.benchmark)}</code></figcaption>{svg_with_width(plot.svg)}"
                f'<p class="caption">{_e(plot.caption)}</p></figure>'
            )
        out.append("</div>")
    out.append("</section>")
    return "".join(out)
