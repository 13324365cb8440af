"""matplotlib figures as SVG fragments that can be inlined in one HTML page.

No pyplot (no global figure registry): figures are `matplotlib.figure.Figure` objects saved
with the SVG backend, with the report's look set by an rc context for the duration of a call.
Each SVG is post-processed so that many of them can live in one document: the XML prolog and
DOCTYPE go, the fixed width and height go (the viewBox keeps the aspect ratio; CSS sets the
width), and every id gets a per-figure prefix (matplotlib names its groups `figure_1`,
`axes_1`, ... in every figure, and `url(#...)` references resolve document-wide).

Text is drawn as glyph paths (`svg.fonttype: path`), on purpose. The layout (constrained
layout, the stacking of labels, the overlap checks of the tests) is computed with matplotlib's
own font metrics; as `<text>` the browser would set it in whatever sans-serif the machine has
(a GPU box without DejaVu Sans, a mail client), wider or narrower, and labels measured not to
overlap would overlap or be cut at the edge. What paths take away, a searchable and readable
text, the page gives back without depending on fonts: every figure's caption, with its numbers,
is HTML text beside it (find-in-page and selection work on it), and every `<svg>` is
`role="img"` named by a `<title>` (the figure's title) and described by a `<desc>` (the caption
and the words and numbers drawn in the figure, describe()), which a screen reader reads.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kernelwatch.errors import missing_extra

if TYPE_CHECKING:  # imported lazily at run time: matplotlib is only needed for the report
    from matplotlib.figure import Figure
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

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
    # Labels come from the inputs (commits, dates, benchmark names): "$...$" in one is text,
    # not mathtext (an unknown command in it was an internal error).
    "text.parse_math": False,
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


def to_svg(figure: Figure, prefix: str, title: str, caption: str = "") -> str:
    """The figure as an `<svg>` element for inlining in HTML, named by `title` and described by
    `caption` and the text drawn in it (see the module docstring)."""
    description = " ".join(part for part in (caption.strip(), describe(figure)) if part)
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata=_NO_METADATA)
    return inline_svg(buffer.getvalue(), prefix, title, description)


def inline_svg(text: str, prefix: str, title: str, description: str = "") -> str:
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
    described = f' aria-describedby="{prefix}-desc"' if description else ""
    head = head.replace(
        "<svg", f'<svg class="kw-svg" role="img" aria-labelledby="{prefix}-title"{described}', 1
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
    accessible = f'<title id="{prefix}-title">{html.escape(title)}</title>'
    if description:
        accessible += f'<desc id="{prefix}-desc">{html.escape(description)}</desc>'
    return head + accessible + body


# ------------------------------------------------------------------------- text in a figure


def _tick_labels(axis: Any) -> list[Text]:
    """The tick labels an axis draws: those of the ticks inside its view (matplotlib keeps
    spare Tick objects, and a locator may return positions outside the limits)."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    found = []
    for locs, ticks in (
        (axis.get_majorticklocs(), axis.get_major_ticks),
        (axis.get_minorticklocs(), axis.get_minor_ticks),
    ):
        for loc, tick in zip(locs, ticks(len(locs))):
            if low - span <= loc <= high + span:
                found += [t for t in (tick.label1, tick.label2) if _shown(t)]
    return found


def _shown(text: Text) -> bool:
    axes = text.axes
    visible = bool(text.get_visible() and (axes is None or axes.get_visible()))
    return visible and bool(text.get_text().strip())


def _renderer(figure: Figure) -> Any:
    """The figure laid out as saving will do it, and a renderer to measure it with (an Agg
    canvas: its text extents are those of the SVG's glyph paths, the same font and size).
    Nothing is rasterised (rasterising made the test history's report take 9.7 s, not 4.6 s)."""
    canvas: Any = figure.canvas
    if not hasattr(canvas, "get_renderer"):  # a Figure made without pyplot
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(figure)
    figure.draw_without_rendering()
    return canvas.get_renderer()


def drawn_texts(figure: Figure) -> list[tuple[Text, Bbox]]:
    """Every text the figure draws, with its extent in display units after the layout: titles,
    axis labels, the tick labels in view, annotations, legend entries."""
    from matplotlib.axis import Tick
    from matplotlib.text import Text

    renderer = _renderer(figure)
    ticks = {id(label) for t in figure.findobj(Tick) for label in (t.label1, t.label2)}
    texts = [t for t in figure.findobj(Text) if id(t) not in ticks and _shown(t)]
    for ax in figure.axes:
        texts += _tick_labels(ax.xaxis) + _tick_labels(ax.yaxis)
    unique = list({id(t): t for t in texts}.values())
    return [(t, t.get_window_extent(renderer)) for t in unique]


def _apart(a: Bbox, b: Bbox, slack: float) -> bool:
    width = float(min(a.x1, b.x1) - max(a.x0, b.x0))  # of their intersection, if they meet
    height = float(min(a.y1, b.y1) - max(a.y0, b.y0))
    return width <= slack or height <= slack


def overlapping(figure: Figure, slack: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of texts of the figure drawn over each other (by more than `slack` pixels)."""
    boxes = drawn_texts(figure)
    return [
        (a.get_text(), b.get_text())
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if not _apart(box_a, box_b, slack)
    ]


def stack_labels(figure: Figure, labels: Sequence[Any], row: float, passes: int = 3) -> int:
    """Raise annotations (offsets in points) by whole rows of `row` points until none is drawn
    over another: each, left to right, into the lowest row where it fits. Constrained layout
    then makes room for the rows, which can shift the labels sideways, so it is repeated until
    it holds. Returns the rows used."""
    if len(labels) < 2:
        return len(labels)
    base = {id(a): tuple(a.xyann) for a in labels}
    rows = 1
    for _ in range(passes):
        renderer = _renderer(figure)
        placed: list[tuple[float, float, int]] = []  # x0, x1, row
        moved = False
        boxes = [(a.get_window_extent(renderer), a) for a in labels]
        for box, label in sorted(boxes, key=lambda b: b[0].x0):
            taken = {r for x0, x1, r in placed if x0 < box.x1 + 2 and box.x0 - 2 < x1}
            free = min(set(range(len(placed) + 1)) - taken)
            placed.append((box.x0, box.x1, free))
            dx, dy = base[id(label)]
            if tuple(label.xyann) != (dx, dy + free * row):
                label.xyann = (dx, dy + free * row)
                moved = True
        rows = 1 + max((r for _, _, r in placed), default=0)
        if not moved:
            break
    return rows


def describe(figure: Figure) -> str:
    """The words and numbers drawn in a figure, for its `<desc>`, a sentence each: per panel its
    title, each axis (its label and the range of its ticks, or every tick of a categorical axis),
    the labels written in it; then the legends' entries."""
    from matplotlib.legend import Legend

    _renderer(figure)  # (tick labels get their text when drawn)
    sentences = []
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        sentences += [ax.get_title()] if ax.get_title() else []
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            ticks = [_one_line(t.get_text()) for t in _tick_labels(axis)]
            if not ticks:
                continue
            label = _one_line(axis.get_label().get_text()) or f"{name} axis"
            numeric = all(re.fullmatch(r"[−+-]?[\d.,]+\S{0,3}", t) for t in ticks)
            if numeric and len(ticks) > 1:
                sentences.append(f"{label}: {ticks[0]} to {ticks[-1]}")
            else:  # categories ("; " between them where a category holds a comma)
                sentences.append(f"{label}: " + _listed(ticks))
        written = [_one_line(t.get_text()) for t in ax.texts if _shown(t)]
        if written:
            sentences.append("labels: " + _listed(written))
    legends = [lg for lg in figure.findobj(Legend) if lg.get_visible()]
    entries = [_one_line(t.get_text()) for lg in legends for t in lg.get_texts() if _shown(t)]
    if entries:
        sentences.append("legend: " + "; ".join(entries))
    return "".join(f"{s.rstrip('.')}. " for s in sentences).strip()


def _listed(items: Sequence[str]) -> str:
    return ("; " if any("," in item for item in items) else ", ").join(items)


def _one_line(text: str) -> str:
    return " ".join(text.split())


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
