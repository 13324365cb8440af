"""What a family's figure module (families/<family>/figure.py) uses: the figure types and the
plotting helpers. The run it draws from is rundata.RunData; discovery finds the modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kernelwatch.report import svg
from kernelwatch.report.lessons.rundata import RunData

BPS = "bytes_per_second"
FLOPS = "flop_per_second"
GB = 1e9


@dataclass(frozen=True)
class Drawn:
    key: str  # the HTML id of the figure
    title: str
    caption: str
    svg: str


@dataclass(frozen=True)
class Omitted:
    key: str
    title: str
    reason: str


Lesson = Drawn | Omitted


@dataclass(frozen=True)
class Figure:
    """A family's figure. `draw` returns Omitted with the reason, never raises, when the run
    holds none of the benchmarks it needs (a filtered run), and draws what is there when it
    holds some."""

    position: int  # its place on the page, ascending (steps of 10 leave room to insert)
    draw: Callable[[RunData], Lesson]


# ---------------------------------------------------------------------------------- helpers


# A family's types (float, double, ...) in the order its binary registered them: colour and
# marker by that place, so that no figure restates the type names.
TYPE_STYLES = ((svg.BLUE, "o"), (svg.ORANGE, "s"), (svg.GREEN, "^"), (svg.SKY, "D"))
# The caption's note where the run holds no reference of the family (RunData.reference).
NO_REFERENCE = (
    "The run has no marked reference of this family (a filter left it out, it failed, or a "
    "harness from before kernelwatch::mark_reference measured it): drawn without one."
)


def pct(value: float | None, reference: float | None) -> str:
    if value is None or not reference:
        return "?"
    return f"{value / reference:.0%}"


def gbs(value: float | None) -> str:
    return "?" if value is None else f"{value / GB:,.0f} GB/s"


def xy(
    points: Sequence[tuple[float, float]], scale: float = 1.0
) -> tuple[list[float], list[float]]:
    return [p[0] for p in points], [p[1] / scale for p in points]


def reference_line(
    ax: Any,
    value: float | None,
    label: str,
    scale: float,
    vertical: bool = False,
    color: str = svg.REFERENCE,
    style: str = "--",
) -> None:
    if value is None:
        return
    line = ax.axvline if vertical else ax.axhline
    line(value / scale, color=color, linestyle=style, linewidth=1.2, label=label, zorder=1)


def dram_peak(data: RunData) -> float | None:
    return data.context_number("gpu_peak_bandwidth_bytes_per_second")


def size_label(n: float) -> str:
    for unit, scale in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n / scale:g} {unit}"
    return f"{n:g}"


def log2_axis(ax: Any, values: Sequence[float], suffix: str = "") -> None:
    """A base-2 log x axis with a tick at each measured value (labelled 4 Ki, 1 Mi, ...); a
    linear one where no value is positive (benchmarks named `bytes:0`: matplotlib warned on
    stderr that it cannot log-scale them)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    ticks = sorted(v for v in set(values) if v > 0)
    if not ticks:
        return
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([size_label(v) + suffix for v in ticks])


def new_panels(count: int, width_each: float, height: float) -> tuple[Any, list[Any]]:
    figure, axes = svg.new_figure(width_each * count, height, ncols=count, squeeze=False)
    return figure, list(axes[0])


def finish(
    key: str, title: str, caption: str, figure: Any, *, without_reference: bool = False
) -> Drawn:
    """The figure drawn, with its caption; `without_reference`: a figure that draws its
    family's reference found none in the run, and its caption says so (NO_REFERENCE)."""
    if without_reference:
        caption = f"{caption} {NO_REFERENCE}"
    try:
        return Drawn(key, title, caption, svg.to_svg(figure, key, title, caption))
    finally:
        svg.close(figure)
