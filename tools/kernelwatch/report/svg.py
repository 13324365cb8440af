"""matplotlib figures as SVG fragments that can be inlined in one HTML page.

No pyplot (no global figure registry): figures are `matplotlib.figure.Figure` objects saved
with the SVG backend, with the report's look set by an rc context for the duration of a call.
Each SVG is post-processed so that many of them can live in one document: the XML prolog and
DOCTYPE go, the fixed width and height go (the viewBox keeps the aspect ratio; CSS sets the
width), and every id gets a per-figure prefix (matplotlib names its groups `figure_1`,
`axes_1`, ... in every figure, and `url(#...)` references resolve document-wide).
Glyphs are drawn as paths: the figure looks the same with or without the fonts installed.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kernelwatch.errors import missing_extra

if TYPE_CHECKING:  # imported lazily at run time: matplotlib is only needed for the report
    from matplotlib.figure import Figure

# Colours (colour-blind safe, Okabe-Ito) used consistently across the figures.
BLUE = "#0072B2"
ORANGE = "#E69F00"
GREEN = "#009E73"
RED = "#D55E00"
PURPLE = "#CC79A7"
SKY = "#56B4E9"
GREY = "#6b6b6b"
LIGHT = "#b8b8b8"
REFERENCE = "#222222"  # speed-of-light reference lines

STYLE: Mapping[str, Any] = {
    "font.size": 9.5,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.labelsize": 9.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e3e3e3",
    "grid.linewidth": 0.7,
    "axes.axisbelow": True,
    "axes.edgecolor": "#888888",
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 4.5,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "svg.fonttype": "path",
    "figure.dpi": 100,
}

_NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


def require_matplotlib() -> None:
    """One line (exit 2) when matplotlib is missing, instead of an ImportError."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise missing_extra("kernelwatch report", "report", exc) from None


@contextmanager
def style(salt: str) -> Iterator[None]:
    """The report's look, and a fixed hash salt so that the same figure is the same SVG."""
    import matplotlib

    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):  # type: ignore[dict-item]
        yield


def new_figure(width: float, height: float, **subplots: Any) -> tuple[Figure, Any]:
    """A figure (inches) and its axes, laid out with constrained layout."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.subplots(**subplots)


_ID = re.compile(r'\bid="([^"]+)"')


def to_svg(figure: Figure, prefix: str, title: str) -> str:
    """The figure as an `<svg>` element for inlining in HTML (see the module docstring)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata=_NO_METADATA)
    return inline_svg(buffer.getvalue(), prefix, title)


def inline_svg(text: str, prefix: str, title: str) -> str:
    """Post-process a standalone SVG document into an element safe to inline many times."""
    start = text.find("<svg")
    if start < 0:
        raise ValueError("not an SVG document")
    svg = text[start:].strip()
    head_end = svg.find(">")
    head, body = svg[: head_end + 1], svg[head_end + 1 :]
    # The root element: no fixed size (CSS scales it), no namespace URLs (HTML needs none).
    head = re.sub(r'\s(?:width|height)="[^"]*"', "", head)
    head = re.sub(r'\sxmlns(?::\w+)?="[^"]*"', "", head)
    head = head.replace(
        "<svg", f'<svg class="kw-svg" role="img" aria-labelledby="{prefix}-title"', 1
    )
    ids = set(_ID.findall(body))

    def rename(match: re.Match[str]) -> str:
        return f'id="{prefix}-{match.group(1)}"'

    body = _ID.sub(rename, body)
    # xlink:href is SVG 1.1; plain href is understood everywhere inline SVG is.
    body = body.replace("xlink:href=", "href=")

    def reference(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in ids:
            return match.group(0)
        return f"{match.group(1)}{prefix}-{name}{match.group(3)}"

    body = re.sub(r'(href="#)([^"]+)(")', reference, body)
    body = re.sub(r"(url\(#)([^)]+)(\))", reference, body)
    return head + f'<title id="{prefix}-title">{html.escape(title)}</title>' + body


def legend_below(figure: Figure, axes: Any, ncol: int = 2) -> None:
    """One legend for the whole figure, under its panels: the entries of `axes` (one or
    several), each label once. The figure grows by the legend's height, so the panels keep
    their size. (matplotlib >= 3.6; "outside" legend locations need 3.7.)"""
    handles: dict[str, Any] = {}
    for ax in axes if isinstance(axes, (list, tuple)) else [axes]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label and not label.startswith("_"):
                handles.setdefault(label, handle)
    if not handles:
        return
    ncol = max(1, min(ncol, len(handles)))
    rows = -(-len(handles) // ncol)
    extra = 0.19 * rows + 0.12  # inches: rows of legend text and a margin
    height = figure.get_figheight() + extra
    figure.set_figheight(height)
    engine: Any = figure.get_layout_engine()  # constrained: its set() takes the rect
    if engine is not None:
        engine.set(rect=(0, extra / height, 1, 1 - extra / height))
    figure.legend(
        list(handles.values()),
        list(handles.keys()),
        loc="lower center",
        ncol=ncol,
        bbox_to_anchor=(0.5, 0.01),
    )


def close(figure: Figure) -> None:
    """Release a figure's memory (without pyplot nothing else holds it)."""
    figure.clear()
