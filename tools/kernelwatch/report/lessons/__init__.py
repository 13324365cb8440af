"""The classic figures of the CUDA memory lessons, redrawn from one run (docs/kernels.md).

One module per kernel family, named after it: the family's benchmark names and its figure
together, declared as `FIGURE = Figure(position, draw, reference)`. figure.py holds the types,
the shared plotting helpers and the discovery: adding a family's figure is adding its module
here, nothing else. Each figure reads the run's medians (RunData) and returns a Drawn figure, or
Omitted with the reason when the run holds none of the benchmarks it needs.
"""

from __future__ import annotations

from kernelwatch.report import svg
from kernelwatch.report.lessons.figure import Drawn, Figure, Lesson, Omitted, figures
from kernelwatch.report.rundata import RunData

__all__ = ["REFERENCES", "Drawn", "Figure", "Lesson", "Omitted", "draw_all", "figures"]

# Each family's speed-of-light reference, in page order: plotted in the trends.
REFERENCES: tuple[str, ...] = tuple(f.reference for _, f in figures() if f.reference)


def draw_all(data: RunData) -> list[Lesson]:
    """Every family's figure, in page order."""
    found: list[Lesson] = []
    for name, figure in figures():
        with svg.style(name):  # the module's name: the SVG's hash salt, as before the split
            found.append(figure.draw(data))
    return found
