"""The page's lesson figures: the classic CUDA memory lessons redrawn from the run, and the ones
left out (their benchmarks are not in the run)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape as _e

from kernelwatch.report import lessons
from kernelwatch.report.page.markup import svg_with_width


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
