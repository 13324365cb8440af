"""Matrix transpose (`transpose/`): every variant against the copy with the same traffic."""

from __future__ import annotations

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    BPS,
    GB,
    Figure,
    Lesson,
    Omitted,
    dram_peak,
    finish,
    gbs,
    pct,
    reference_line,
)
from kernelwatch.report.lessons.rundata import RunData


def _transpose_shape(data: RunData) -> tuple[int, int] | None:
    shapes: dict[tuple[int, int], int] = {}
    for path in data.paths("transpose/"):
        for entry in data.entries(path):
            rows, cols = entry.integer("rows"), entry.integer("cols")
            if rows is not None and cols is not None:
                shapes[rows, cols] = shapes.get((rows, cols), 0) + 1
    if not shapes:
        return None
    if (8192, 8192) in shapes:
        return (8192, 8192)
    return max(shapes, key=lambda s: (shapes[s], s[0] * s[1]))


def draw(data: RunData) -> Lesson:
    key, title = "lesson-transpose", "Matrix transpose: variants against the copy"
    shape = _transpose_shape(data)
    if shape is None:
        return Omitted(key, title, "the run has no transpose benchmarks")
    rows, cols = shape
    marked = data.reference("transpose")  # the copy with the same traffic
    copy = (
        data.value(marked.path, BPS, **{**marked.params, "rows": rows, "cols": cols})
        if marked
        else None
    )
    bars: list[tuple[str, float | None, float | None]] = []
    for variant in data.variants("transpose/"):  # as the C++ registers them
        path = f"transpose/{variant}"
        if variant == "best":
            b8, b32 = data.value(path, BPS, rows=rows, cols=cols), None
        else:
            b8 = data.value(path, BPS, rows=rows, cols=cols, block_rows=8)
            b32 = data.value(path, BPS, rows=rows, cols=cols, block_rows=32)
        if b8 is not None or b32 is not None:
            bars.append((variant, b8, b32))
    figure, ax = svg.new_figure(9.5, 0.34 * len(bars) + 1.3)
    height = 0.38
    labelled: set[str] = set()
    for i, (variant, b8, b32) in enumerate(bars):
        single = b32 is None
        for value, offset, color, label in (
            (
                b8,
                0.0 if single else -height / 2,
                svg.GREEN if variant == "best" else svg.BLUE,
                (
                    "best: 64×64 tile, 16 elements per thread"
                    if variant == "best"
                    else "32×8 threads (block_rows:8)"
                ),
            ),
            (b32, height / 2, svg.SKY, "32×32 threads (block_rows:32)"),
        ):
            if value is None:
                continue
            ax.barh(
                i + offset,
                value / GB,
                height=height,
                color=color,
                label=None if label in labelled else label,
            )
            labelled.add(label)
            ax.text(
                value / GB + 30,
                i + offset,
                f"{value / GB:,.0f}" + (f"  ({pct(value, copy)})" if copy else ""),
                va="center",
                fontsize=7.5,
                color="#333333",
            )
    ax.set_yticks(range(len(bars)), [b[0] for b in bars])
    ax.invert_yaxis()
    reference_line(
        ax, copy, f"copy with the same traffic (copy_rows, 32×8) {gbs(copy)}", GB, vertical=True
    )
    peak = dram_peak(data)
    reference_line(
        ax,
        peak,
        f"theoretical DRAM peak {gbs(peak)}",
        GB,
        vertical=True,
        color=svg.LIGHT,
        style=":",
    )
    largest = max([v for b in bars for v in b[1:] if v] + [copy or 0, peak or 0])
    ax.set_xlim(0, largest / GB * 1.18)
    ax.set_xlabel("effective bandwidth (GB/s) = 2 × matrix bytes / time;  (% of the copy)")
    ax.grid(axis="y", visible=False)
    svg.legend_below(figure, ax, ncol=3)
    padded = data.value("transpose/tiled_padded", BPS, rows=rows, cols=cols, block_rows=8)
    tiled = data.value("transpose/tiled", BPS, rows=rows, cols=cols, block_rows=8)
    best = data.value("transpose/best", BPS, rows=rows, cols=cols)
    caption = (
        f"Float matrix of {rows}×{cols}, 32×32 tiles. Strided writes (copy_columns, naive_rows) "
        "cost the most; the shared-memory tile makes both sides coalesced, and one column of "
        "padding removes its 32-way bank conflict."
    )
    facts = []
    if copy is not None and tiled is not None and padded is not None:
        facts.append(f"tiled {pct(tiled, copy)} → tiled_padded {pct(padded, copy)} of the copy")
    if copy is not None and best is not None:
        facts.append(f"best {pct(best, copy)}")
    if facts:
        caption += " This run: " + ", ".join(facts) + "."
    return finish(key, title, caption, figure, without_reference=marked is None)


FIGURE = Figure(position=20, draw=draw)
