"""`kernelwatch report`: one self-contained HTML page about one run (docs/report.md).

    build.py     gathers the data: run, comparison with the baseline, history, lessons (a Page)
    page/        the Page as HTML (inline CSS and SVG, no script, no external URL)
    lessons/     the classic CUDA memory-lesson figures, redrawn from the run: each kernel
                 family's figure is families/<family>/figure.py, found by discovery.py;
                 drawing.py: what they share; rundata.py: the run's medians by name
    trends.py    which benchmarks get a trend plot, with their change points; the plot
    svg.py       matplotlib (no pyplot) to SVG fragments that can share one page

matplotlib is imported only when figures are drawn: the rest of kernelwatch does not need it.
"""

from __future__ import annotations

from pathlib import Path

from kernelwatch.files import write_atomic
from kernelwatch.report.build import Options, Page, build_page
from kernelwatch.report.page import render_html

__all__ = ["Options", "Page", "build_page", "render_html", "write_report"]


def write_report(options: Options, out: str | Path, **build: object) -> Page:
    """Build the page and write it to `out` atomically (temporary file, then rename)."""
    page = build_page(options, **build)  # type: ignore[arg-type]
    write_atomic(out, render_html(page, options.judging.metric))
    return page
