"""The report as one self-contained HTML page: inline CSS, inline SVG figures, no script, no
external URL of any kind (it works offline, from a CI artifact or an e-mail attachment)."""

from __future__ import annotations

import datetime as dt
import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kernelwatch import __version__
from kernelwatch.compare import Comparison, Verdict
from kernelwatch.explain import Explanation
from kernelwatch.names import short_commit
from kernelwatch.ncu import format_number as ncu_fmt
from kernelwatch.render import format_value, summary_line
from kernelwatch.report import lessons, trends
from kernelwatch.report.build import Page
from kernelwatch.results import Metric, gpu_model

CSS = """
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #e2e2e2; --bg: #ffffff; --panel: #f6f7f9;
  --regression: #c62828; --improvement: #1b7f3b; --error: #8e24aa; --missing: #6a1b9a;
  --unsure: #b26a00; --new: #00838f; --same: #6b6b6b; }
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0 auto; max-width: 1240px; padding: 24px 28px 48px; color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", "DejaVu Sans", sans-serif; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 10px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 17px; margin: 0 0 6px; }
p { margin: 6px 0 10px; }
code { font: 13px/1.4 ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; }
.sub { color: var(--muted); margin: 0 0 14px; }
nav { background: var(--panel); border-radius: 8px; padding: 8px 14px; margin: 14px 0 0; font-size: 14px; }
nav a { margin-right: 16px; color: #1a56b0; text-decoration: none; }
nav a:hover { text-decoration: underline; }
dl.context { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: 4px 18px;
  margin: 0; background: var(--panel); padding: 12px 16px; border-radius: 8px; font-size: 14px; }
dl.context dt { color: var(--muted); }
dl.context dd { margin: 0; overflow-wrap: anywhere; }
.headline { font-size: 18px; font-weight: 600; margin: 6px 0; }
.box { border-left: 5px solid var(--unsure); background: #fff8e6; padding: 10px 14px; border-radius: 4px;
  margin: 10px 0; }
.box.bad { border-color: var(--regression); background: #fdecea; }
.box.good { border-color: var(--improvement); background: #eaf6ee; }
.box.info { border-color: #9aa0a6; background: var(--panel); }
.counts { display: flex; flex-wrap: wrap; gap: 8px; margin: 10px 0; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 11px; font-size: 12.5px; font-weight: 600;
  color: #fff; background: var(--same); white-space: nowrap; }
.badge.REGRESSION { background: var(--regression); } .badge.IMPROVEMENT { background: var(--improvement); }
.badge.ERROR { background: var(--error); } .badge.MISSING { background: var(--missing); }
.badge.UNSURE { background: var(--unsure); } .badge.NEW { background: var(--new); }
.badge.tag { background: #e8eaed; color: #3c4043; font-weight: 500; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; margin: 8px 0 14px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.name { overflow-wrap: anywhere; min-width: 18em; }
td.why { color: var(--muted); min-width: 14em; }
tr.REGRESSION td.change { color: var(--regression); font-weight: 600; }
tr.IMPROVEMENT td.change { color: var(--improvement); font-weight: 600; }
details { margin: 8px 0 14px; }
details > summary { cursor: pointer; color: #1a56b0; }
ul.notes { color: var(--muted); font-size: 14px; padding-left: 20px; }
figure.kw-figure { margin: 18px 0 28px; padding: 0; }
figure.kw-figure .kw-svg { display: block; width: 100%; height: auto; margin: 4px 0; }
figure.kw-figure p.caption { color: #3c4043; font-size: 14px; max-width: 1000px; }
.trend-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 10px 22px; }
.trend-grid figure.kw-figure { margin: 6px 0 10px; }
.trend-grid figcaption { font-size: 13.5px; min-height: 2.9em; }
.trend-grid figcaption .badge { margin-right: 6px; }
.trend-grid figcaption code { font-size: 12.5px; overflow-wrap: anywhere; }
.glance { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0 0; }
.glance div { flex: 1 1 240px; border-radius: 8px; padding: 8px 12px; background: var(--panel);
  border-left: 5px solid #9aa0a6; font-size: 14px; }
.glance div b { display: block; font-size: 15px; }
.glance .bad { border-color: var(--regression); } .glance .good { border-color: var(--improvement); }
.glance .warn { border-color: var(--unsure); }
.explain { margin-top: 6px; color: var(--fg); overflow-wrap: anywhere; }
.explain .kchange { margin: 2px 0 4px; }
.badge.kcode { background: var(--regression); } .badge.klaunch { background: var(--unsure); }
.badge.ksame { background: #5f6368; }
table.moved { width: auto; font-size: 12.5px; margin: 4px 0; }
table.moved td, table.moved th { padding: 2px 8px; }
table.moved td:first-child { word-break: break-all; }  /* ncu metric names are one long token */
pre.sass { font-size: 12px; background: var(--panel); padding: 8px; overflow-x: auto; max-height: 420px; }
.knote { color: var(--muted); font-size: 13px; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; border-top: 1px solid var(--line); padding-top: 10px; }
"""

_e = html.escape


def _svg_with_width(svg: str) -> str:
    """Cap an inline SVG at its natural size (its viewBox is in points; 1 pt = 4/3 px)."""
    match = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg[:400])
    if not match:
        return svg
    width = float(match.group(1)) * 4 / 3
    return svg.replace("<svg ", f'<svg style="max-width: {width:.0f}px" ', 1)


def when(value: Any) -> str:
    """An ISO 8601 date as `2026-11-21 06:25 UTC` (as written when it is not one, or naive)."""
    text = str(value or "")
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return text
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------------------------- context


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def context_rows(context: Mapping[str, Any], page: Page) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []

    def add(label: str, value: Any) -> None:
        if value not in (None, ""):
            rows.append((label, str(value)))

    add("GPU", gpu_model(context) or "not recorded")
    sms = context.get("gpu_sm_count")
    memory = _number(context.get("gpu_memory_bytes"))
    l2 = _number(context.get("gpu_l2_cache_bytes"))
    parts = [
        f"{sms} SMs" if sms else "",
        f"{memory / 2**30:.0f} GiB" if memory else "",
        f"{l2 / 2**20:.0f} MiB L2" if l2 else "",
    ]
    add("GPU size", ", ".join(p for p in parts if p))
    peak = _number(context.get("gpu_peak_bandwidth_bytes_per_second"))
    add("DRAM peak (theoretical)", f"{peak / 1e9:,.0f} GB/s" if peak else None)
    sm_clock = _number(context.get("gpu_sm_clock_khz"))
    mem_clock = _number(context.get("gpu_memory_clock_khz"))
    if sm_clock or mem_clock:
        add(
            "clocks",
            " / ".join(
                p
                for p in (
                    f"SM {sm_clock / 1e3:.0f} MHz" if sm_clock else "",
                    f"memory {mem_clock / 1e3:.0f} MHz" if mem_clock else "",
                )
                if p
            ),
        )
    add("ECC", context.get("gpu_ecc"))
    add("driver", context.get("gpu_driver_version"))
    runtime, api = context.get("cuda_runtime_version"), context.get("cuda_driver_api_version")
    if runtime or api:
        add("CUDA", f"runtime {runtime or '?'}, driver API {api or '?'}")
    add("commit", context.get("kernelwatch_git_commit") or "not recorded")
    add("date", when(context.get("date") or context.get("kernelwatch_run_started")))
    seconds = _number(context.get("kernelwatch_run_seconds"))
    add("run took", f"{seconds / 60:.1f} min" if seconds else None)
    add("build", context.get("kernelwatch_build_type"))
    add(
        "L2 before each launch",
        {"cold": "flushed (cold)", "hot": "kept (hot)"}.get(
            str(context.get("kernelwatch_cache_mode")), context.get("kernelwatch_cache_mode")
        ),
    )
    add("repetitions", context.get("kernelwatch_repetitions"))
    add(
        "min time per repetition",
        f"{context['kernelwatch_min_time']} s" if context.get("kernelwatch_min_time") else None,
    )
    add("random interleaving", context.get("kernelwatch_random_interleaving"))
    add("filter", context.get("kernelwatch_filter"))
    add("host", context.get("host_name"))
    add("kernelwatch", context.get("kernelwatch_version"))
    add("result file", str(page.result))
    counted = f"{page.benchmarks}"
    if page.errors:
        counted += f", {len(page.errors)} with errors"
    if page.skipped:
        counted += f", {len(page.skipped)} skipped"
    add("benchmarks", counted)
    return rows


def _context_section(page: Page) -> str:
    cells = "".join(
        f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in context_rows(page.context, page)
    )
    out = [f'<section id="run"><h2>The run</h2><dl class="context">{cells}</dl>']
    if page.errors:
        items = "".join(
            f"<li><code>{_e(n)}</code>: {_e(m)}</li>" for n, m in sorted(page.errors.items())
        )
        out.append(
            f'<div class="box bad"><b>{len(page.errors)} benchmark(s) failed in this run</b>'
            f"<ul>{items}</ul></div>"
        )
    out.append("</section>")
    return "".join(out)


# ---------------------------------------------------------------------------------- comparison

_HEAD = (
    "<tr><th>Verdict</th><th>Benchmark</th><th class=num>Baseline</th><th class=num>This run</th>"
    "<th class=num>Change</th><th class=num>CI</th><th class=num>q</th><th>Why</th></tr>"
)


def _explanation(c: Comparison, found: Explanation | None) -> str:
    """Under the verdict's reason: the kernel verdict, the counters that moved, the SASS diff."""
    if found is None:
        return ""
    kernel = found.kernel.change.value if found.kernel is not None else ""
    if c.verdict is Verdict.SAME and not found.profiled and kernel in (
        "kernel identical",
        "kernel not compared",
        "",
    ):
        return ""
    parts = []
    if found.kernel is not None:
        cls = {"kernel code changed": "code", "launch changed": "launch"}.get(kernel, "same")
        details = "; ".join(found.kernel.details) if found.kernel.change.value != "kernel identical" else (
            "same SASS, resources and launch: the change came from elsewhere (harness, host, card)"
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
    interval = (
        "–"
        if c.ci_low is None or c.ci_high is None
        else f"[{(c.ci_low - 1) * 100:+.1f}%, {(c.ci_high - 1) * 100:+.1f}%]"
    )
    change = "–" if c.ratio is None else f"{(c.ratio - 1) * 100:+.1f}%"
    q = "–" if c.q_value is None else f"{c.q_value:.2g}"
    verdict = c.verdict.value
    if c.confirmed is False:
        verdict += " (not confirmed)"
    return (
        f'<tr class="{c.verdict.value}"><td><span class="badge {c.verdict.value}">{_e(verdict)}</span></td>'
        f'<td class="name"><code>{_e(c.shown_name)}</code></td>'
        f'<td class="num">{_e(format_value(c.baseline.median if c.baseline else None, metric))}</td>'
        f'<td class="num">{_e(format_value(c.contender.median if c.contender else None, metric))}</td>'
        f'<td class="num change">{_e(change)}</td><td class="num">{_e(interval)}</td>'
        f'<td class="num">{_e(q)}</td><td class="why">{_e(c.reason)}{_explanation(c, found)}</td></tr>'
    )


def _table(
    comparisons: Sequence[Comparison],
    metric: Metric,
    explanations: Mapping[str, Explanation] | None = None,
) -> str:
    found = explanations or {}
    rows = "".join(_row(c, metric, found.get(c.name)) for c in comparisons)
    return f"<table><thead>{_HEAD}</thead><tbody>{rows}</tbody></table>"


def _comparison_section(page: Page) -> str:
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
    regressions = counts[Verdict.REGRESSION]
    direction = "higher is better" if metric.higher_is_better else "lower is better"
    base_context = page.baseline.context
    out.append(
        f"<p>Baseline: <code>{_e(page.baseline.label)}</code> ({_e(page.baseline.how)}; commit "
        f"<code>{_e(short_commit(base_context.get('kernelwatch_git_commit')))}</code>, "
        f"{_e(when(base_context.get('date')) or 'date not recorded')}). Metric "
        f"<code>{_e(metric.key)}</code> ({direction}); alpha {report.settings.alpha:g} "
        f"(Benjamini–Hochberg), threshold {report.settings.threshold:.1%}, raised per benchmark "
        "by the noise floor and the threshold rules (docs/compare.md).</p>"
    )
    if regressions:
        headline = f"{regressions} regression{'s' * (regressions != 1)}"
        kind = "bad"
    elif report.failed:
        headline, kind = "no regression, but failing benchmarks (MISSING or ERROR)", "bad"
    else:
        headline, kind = "no regression", "good"
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


# ---------------------------------------------------------------------------------- trends


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
            f'<td class="num change">{(c.ratio - 1) * 100:+.1f}%</td>'
            f'<td class="num">{c.p_value:.2g}</td></tr>'
        )
    head = (
        "<tr><th></th><th>Benchmark</th><th class=num>First run after</th><th>Commit</th>"
        "<th class=num>Before</th><th class=num>After</th><th class=num>Change</th>"
        "<th class=num>p</th></tr>"
    )
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _trends_section(page: Page, metric: Metric) -> str:
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
                f"<code>{_e(plot.benchmark)}</code></figcaption>{_svg_with_width(plot.svg)}</figure>"
            )
        out.append("</div>")
    out.append("</section>")
    return "".join(out)


# ---------------------------------------------------------------------------------- lessons


def _lessons_section(drawn: Iterable[lessons.Lesson]) -> str:
    out = [
        '<section id="lessons"><h2>The CUDA memory lessons, from this run</h2>',
        "<p>The classic figures redrawn from this run's medians, each next to its "
        "speed-of-light reference (docs/kernels.md explains every kernel).</p>",
    ]
    omitted = []
    for lesson in drawn:
        if isinstance(lesson, lessons.Omitted):
            omitted.append(lesson)
            continue
        out.append(
            f'<figure class="kw-figure lesson" id="{lesson.key}"><figcaption><h3>{_e(lesson.title)}</h3>'
            f'</figcaption>{_svg_with_width(lesson.svg)}<p class="caption">{_e(lesson.caption)}</p></figure>'
        )
    if omitted:
        items = "".join(
            f"<li><b>{_e(o.title)}</b>: left out, {_e(o.reason)}.</li>" for o in omitted
        )
        out.append(
            f'<div class="box info">Figures not drawn (their benchmarks are not in this run):'
            f"<ul>{items}</ul></div>"
        )
    out.append("</section>")
    return "".join(out)


# ---------------------------------------------------------------------------------- page


def glance(page: Page, metric: Metric) -> list[tuple[str, str, str]]:
    """(kind, headline, detail) of the three things a reader asks first."""
    found: list[tuple[str, str, str]] = []
    report = page.comparison
    if report is None:
        found.append(("warn", "No baseline", "nothing was compared"))
    else:
        counts = report.counts()
        regressions = counts[Verdict.REGRESSION]
        detail = ", ".join(f"{n} {v.value}" for v, n in counts.items() if n)
        if regressions:
            found.append(("bad", f"{regressions} regression{'s' * (regressions != 1)}", detail))
        elif report.failed:
            found.append(("bad", "Failing benchmarks", detail))
        else:
            found.append(("good", "No regression", detail))
    section = page.trends
    if section.unavailable:
        found.append(("", "No trends", "no history of this GPU" if page.database else "no history"))
    elif section.notes and not section.changes:
        found.append(("warn", "History without change points", "see the note under Trends"))
    else:
        slower = sum(bool(c.regression) for c in section.changes)
        kind = "warn" if slower else "good"  # (history: not necessarily this run's doing)
        word = trends.direction_word(metric, True)
        headline = f"{len(section.changes)} change point{'s' * (len(section.changes) != 1)}"
        found.append(
            (kind, headline, f"{slower} {word}, over {section.runs} run(s) in the history")
        )
    drawn = sum(isinstance(lesson, lessons.Drawn) for lesson in page.lessons)
    left = len(page.lessons) - drawn
    found.append(
        (
            "",
            f"{drawn} lesson figure{'s' * (drawn != 1)}, {len(section.plots)} trend plot"
            f"{'s' * (len(section.plots) != 1)}",
            f"{left} left out (not in this run)" if left else "every lesson of the suite",
        )
    )
    return found


def render_html(page: Page, metric: Metric) -> str:
    context = page.context
    gpu = gpu_model(context) or "unknown GPU"
    commit = short_commit(context.get("kernelwatch_git_commit"))
    date = when(context.get("date") or context.get("kernelwatch_run_started"))
    title = f"kernelwatch report: {gpu}, {commit}, {date[:10]}"
    nav = "".join(
        f'<a href="#{key}">{_e(label)}</a>'
        for key, label in (
            ("run", "The run"),
            ("comparison", "Against the baseline"),
            ("trends", "Trends"),
            ("lessons", "CUDA memory lessons"),
        )
    )
    body = [
        f'<header><h1>kernelwatch report</h1><p class="sub">{_e(gpu)} · commit '
        f"<code>{_e(commit)}</code> · {_e(date)} · {page.benchmarks} benchmarks</p>"
        f"<nav>{nav}</nav>"
        + '<div class="glance">'
        + "".join(
            f'<div class="{kind}"><b>{_e(head)}</b>{_e(detail)}</div>'
            for kind, head, detail in glance(page, metric)
        )
        + "</div></header>",
        _context_section(page),
        _comparison_section(page),
        _trends_section(page, metric),
        _lessons_section(page.lessons),
        f"<footer>Written by kernelwatch {_e(__version__)} (<code>kernelwatch report</code>) from "
        f"<code>{_e(str(page.result))}</code>. Self-contained: no script, no external resource.</footer>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
