"""The classic figures of the CUDA memory lessons, redrawn from one run (docs/kernels.md).

Each kernel family's figure lives in its folder, families/<family>/figure.py, declared as
`FIGURE = Figure(position, draw)`: adding a family's figure is adding that module,
nothing else. Here: drawing.py (the types and the shared plotting helpers), rundata.py (the run
a figure draws from), discovery.py (finding the modules; none in an installed package). Each
figure reads the run's medians (RunData) and returns a Drawn figure, or Omitted with the reason
when the run holds none of the benchmarks it needs.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

from kernelwatch.report import svg
from kernelwatch.report.lessons.discovery import figures
from kernelwatch.report.lessons.drawing import Drawn, Figure, Lesson, Omitted
from kernelwatch.report.lessons.rundata import RunData

__all__ = ["Drawn", "Figure", "Lesson", "Omitted", "draw_all", "figures", "references"]


def references(data: RunData) -> tuple[str, ...]:
    """The run's family references (RunData.reference), always plotted in the trends: a
    reference's trend shows drift of the machine itself (driver, clocks) rather than of one
    kernel. In page order: the families with a figure first, the others (another project's
    marked families, say) by name."""
    position = {family: figure.position for family, figure in figures()}
    marked = data.references()
    return tuple(sorted(marked, key=lambda n: (position.get(n.split("/", 1)[0], math.inf), n)))


def unmeasured(data: RunData, family: str) -> str:
    """How many of the family's benchmarks have no value in the run: `6 failed`,
    `2 failed, 1 skipped`, or ""."""
    found = Counter(how for name, how in data.unmeasured.items() if name.startswith(family + "/"))
    return ", ".join(f"{n} {how}" for how, n in sorted(found.items()))


def draw_all(data: RunData) -> list[Lesson]:
    """Every family's figure, in page order; none for a run that holds no benchmark of the
    suite's families (another project's: a list of eight figures left out would only be
    noise). A benchmark that failed or was skipped has no value to draw: the figure says so
    (listed under the run), rather than that the run does not have it. A figure that cannot
    read the run's names is left out, saying why."""
    found: list[Lesson] = []
    families = {name.split("/", 1)[0] for name in (*data.medians, *data.unmeasured)}
    if not families.intersection(name for name, _ in figures()):
        return found
    for name, figure in figures():
        try:
            with svg.style(name):  # the family's name: the SVG's hash salt
                lesson = figure.draw(data)
        except (ArithmeticError, LookupError, ValueError) as exc:
            # A figure reads the suite's names (`m:1024`; one it cannot read is absent,
            # rundata.Entry.integer). Whatever else another project's benchmarks under the same
            # family name make a figure raise loses that figure, not the page.
            why = f"its benchmarks' names are not the suite's ({type(exc).__name__}: {exc})"
            found.append(Omitted(f"lesson-{name}", f"The {name} figure", why))
            continue
        failed = unmeasured(data, name)
        if failed and isinstance(lesson, Omitted):
            why = f"its benchmarks have no value in this run: {failed} (see The run)"
            lesson = replace(lesson, reason=why)
        elif failed and isinstance(lesson, Drawn):
            why = f"Not drawn, without a value in this run: {failed} (see The run)."
            lesson = replace(lesson, caption=f"{lesson.caption} {why}")
        found.append(lesson)
    return found
