"""The report as one self-contained HTML page: inline CSS, inline SVG figures, no script, no
external URL of any kind (it works offline, from a CI artifact or an e-mail attachment).

    style.py                the stylesheet
    markup.py               small HTML pieces the sections share (dates, inline SVG)
    run_section.py          the run: GPU, software, settings, failed benchmarks
    comparison_section.py   against the baseline: headline, counts, the table with explanations
    trends_section.py       the trends from the history: change points and plots
    lessons_section.py      the CUDA memory-lesson figures
"""

from __future__ import annotations

from html import escape as _e

from kernelwatch import __version__
from kernelwatch.names import short_commit
from kernelwatch.render.markdown import headline as render_headline
from kernelwatch.report import lessons, trend_plot
from kernelwatch.report.build import Page
from kernelwatch.report.page.comparison_section import comparison_section
from kernelwatch.report.page.lessons_section import lessons_section
from kernelwatch.report.page.markup import when
from kernelwatch.report.page.run_section import context_section
from kernelwatch.report.page.style import CSS
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
        word = trend_plot.direction_word(metric, True)
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
            f"{left} left out (why: under the lessons)" if left else "every lesson of the suite",
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
            ("lessons", "CUDA memory lessons"),
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
        lessons_section(page.lessons),
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
