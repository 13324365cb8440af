"""The report as one self-contained HTML page: inline CSS, inline SVG figures, no script, no
external URL of any kind (it works offline, from a CI artifact or an e-mail attachment).

    markup.py               small HTML pieces the sections share (dates, inline SVG)
    run_section.py          the run: GPU, software, settings, failed benchmarks
    comparison_section.py   against the baseline: headline, counts, the table with explanations
    trends_section.py       the trends from the history: change points and plots

The stylesheet and the lesson figures' section are at the end of this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape as _e

from kernelwatch import __version__
from kernelwatch.names import short_commit
from kernelwatch.render.markdown import headline as render_headline
from kernelwatch.report import lessons, trends
from kernelwatch.report.build import Page
from kernelwatch.report.page.comparison_section import comparison_section
from kernelwatch.report.page.markup import svg_with_width, when
from kernelwatch.report.page.run_section import context_section
from kernelwatch.report.page.trends_section import trends_section
from kernelwatch.results import Metric, gpu_model


def glance(page: Page, metric: Metric) -> list[tuple[str, str, str]]:
    """(kind, headline, detail) of the three things a reader asks first."""
    found: list[tuple[str, str, str]] = []
    report = page.comparison
    if report is None:
        found.append(("warn", "No baseline", "nothing was compared"))
    else:
        # The heading of the comparison below and of compare's Markdown, red exactly when
        # compare fails: regressions that do not fail (host-bound against another host,
        # unverified under 2x) are not "8 regressions" in red on a run that passes.
        detail = ", ".join(f"{n} {v.value}" for v, n in report.counts().items() if n)
        head = render_headline(report)
        found.append(("bad" if report.failed else "good", head[:1].upper() + head[1:], detail))
    section = page.trends
    if section.unavailable:
        found.append(("", "No trends", "why: under Trends" if page.database else "no history"))
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
    plots = f"{len(section.plots)} trend plot{'s' * (len(section.plots) != 1)}"
    if not page.lessons:
        found.append(("", plots, "no lesson figures for this run's benchmarks"))
    else:
        found.append(
            (
                "",
                f"{drawn} lesson figure{'s' * (drawn != 1)}, {plots}",
                (
                    f"{left} left out (why: under the lessons)"
                    if left
                    else "every lesson of the suite"
                ),
            )
        )
    return found


def render_html(page: Page, metric: Metric) -> str:
    context = page.context
    gpu = gpu_model(context) or "unknown GPU"
    commit = short_commit(context.get("kernelwatch_git_commit"))
    date = when(context.get("date") or context.get("kernelwatch_run_started"))
    # (A result of another tool may record neither date nor commit: no empty slot for them.)
    title = "kernelwatch report: " + ", ".join(p for p in (gpu, commit, date[:10]) if p)
    subtitle = " · ".join(
        part
        for part in (
            _e(gpu),
            f"commit <code>{_e(commit)}</code>",
            _e(date),
            f"{page.benchmarks} benchmarks",
        )
        if part
    )
    nav = "".join(
        f'<a href="#{key}">{_e(label)}</a>'
        for key, label in (
            ("run", "The run"),
            ("comparison", "Against the baseline"),
            ("trends", "Trends"),
            *([("lessons", "CUDA memory lessons")] if page.lessons else []),
        )
    )
    body = [
        f'<header><h1>kernelwatch report</h1><p class="sub">{subtitle}</p>'
        f"<nav>{nav}</nav>"
        + '<div class="glance">'
        + "".join(
            f'<div class="{kind}"><b>{_e(head)}</b>{_e(detail)}</div>'
            for kind, head, detail in glance(page, metric)
        )
        + "</div></header>",
        context_section(page),
        comparison_section(page),
        trends_section(page, metric),
        lessons_section(page.lessons) if page.lessons else "",
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


# The page's stylesheet: inline (the page loads nothing), the verdicts' colors as variables.


CSS = """
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #e2e2e2; --bg: #ffffff; --panel: #f6f7f9;
  --regression: #c62828; --improvement: #1b7f3b; --error: #8e24aa; --missing: #6a1b9a;
  --unsure: #b26a00; --new: #00838f; --same: #6b6b6b; --slower: #e57373; }
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
.badge.SLOWER { background: var(--slower); }
.badge.tag { background: #e8eaed; color: #3c4043; font-weight: 500; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; margin: 8px 0 14px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.name { overflow-wrap: anywhere; min-width: 18em; }
td.why { color: var(--muted); min-width: 14em; }
tr.REGRESSION td.change { color: var(--regression); font-weight: 600; }
tr.SLOWER td.change { color: var(--regression); }
tr.IMPROVEMENT td.change { color: var(--improvement); font-weight: 600; }
details { margin: 8px 0 14px; }
details > summary { cursor: pointer; color: #1a56b0; }
ul.notes { color: var(--muted); font-size: 14px; padding-left: 20px; }
figure.kw-figure { margin: 18px 0 28px; padding: 0; }
figure.kw-figure .kw-svg { display: block; width: 100%; height: auto; margin: 4px 0; }
figure.kw-figure p.caption { color: #3c4043; font-size: 14px; max-width: 1000px; }
.trend-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 10px 22px; }
.trend-grid figure.kw-figure { margin: 6px 0 10px; }
.trend-grid figure.kw-figure p.caption { font-size: 12.5px; margin: 2px 0 0; }
.trend-grid figcaption { font-size: 13.5px; min-height: 2.9em; }
.trend-grid figcaption .badge { margin-right: 6px; }
.trend-grid figcaption code { font-size: 12.5px; overflow-wrap: anywhere; }
.glance { display: flex; flex-wrap: wrap; gap: 10px; margin: 12px 0 0; }
.glance div { flex: 1 1 240px; border-radius: 8px; padding: 8px 12px; background: var(--panel);
  border-left: 5px solid #9aa0a6; font-size: 14px; }
.glance div b { display: block; font-size: 15px; }
.glance .bad { border-color: var(--regression); } .glance .good { border-color: var(--improvement); }
.glance .warn { border-color: var(--unsure); }
tr.explained td { border-bottom: none; }
tr.explanation td { padding-top: 0; }
.explain { color: var(--fg); overflow-wrap: anywhere; }
.explain .kchange { margin: 2px 0 4px; }
.badge.kcode { background: var(--regression); } .badge.klaunch { background: var(--unsure); }
.badge.ksame { background: #5f6368; }
table.moved { width: auto; font-size: 12.5px; margin: 4px 0; }
table.moved td, table.moved th { padding: 2px 8px; }
table.moved td:first-child { overflow-wrap: anywhere; }  /* ncu metric names: one long token */
pre.sass { font-size: 12px; background: var(--panel); padding: 8px; overflow-x: auto; max-height: 420px; }
.knote { color: var(--muted); font-size: 13px; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; border-top: 1px solid var(--line); padding-top: 10px; }
"""


# The page's lesson figures: the classic CUDA memory lessons redrawn from the run, and the ones
# left out (their benchmarks are not in the run).


def lessons_section(drawn: Iterable[lessons.Lesson]) -> str:
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
            f'</figcaption>{svg_with_width(lesson.svg)}<p class="caption">{_e(lesson.caption)}</p></figure>'
        )
    if omitted:
        items = "".join(
            f"<li><b>{_e(o.title)}</b>: left out, {_e(o.reason)}.</li>" for o in omitted
        )
        out.append(f'<div class="box info">Figures not drawn:' f"<ul>{items}</ul></div>")
    out.append("</section>")
    return "".join(out)
