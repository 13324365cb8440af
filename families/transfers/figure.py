"""Host↔device transfers (`transfers/`): pageable and pinned by size; staged overlap."""

from __future__ import annotations

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    BPS,
    GB,
    Figure,
    Lesson,
    Omitted,
    finish,
    log2_axis,
    new_panels,
    xy,
)
from kernelwatch.report.lessons.rundata import RunData


def draw(data: RunData) -> Lesson:
    key, title = "lesson-transfers", "Host↔device transfers: pageable and pinned"
    lines = {
        (direction, memory): data.sweep(f"transfers/{direction}/{memory}", "bytes", BPS)
        for direction in ("h2d", "d2h")
        for memory in ("pinned", "pageable")
    }
    overlap: list[tuple[float, float]] = []
    for count, _ in data.sweep("transfers/overlap", "streams", BPS):
        time = data.value("transfers/overlap", "real_time", streams=count)
        if time:
            overlap.append((count, time))
    if not any(lines.values()) and not overlap:
        return Omitted(key, title, "the run has no transfers benchmarks")
    panels = (["size"] if any(lines.values()) else []) + (["overlap"] if len(overlap) > 1 else [])
    figure, axes = new_panels(len(panels), 5.4, 3.7)
    for ax, panel in zip(axes, panels):
        if panel == "size":
            xs: list[float] = []
            names = {"h2d": "host→device", "d2h": "device→host"}
            for (direction, memory), points in lines.items():
                if not points:
                    continue
                x, y = xy(points, GB)
                xs += x
                ax.plot(
                    x,
                    y,
                    color=svg.BLUE if direction == "h2d" else svg.ORANGE,
                    linestyle="-" if memory == "pinned" else "--",
                    marker="o" if memory == "pinned" else "s",
                    label=f"{names[direction]}, {memory}",
                )
            log2_axis(ax, xs, "B")
            ax.tick_params(axis="x", labelrotation=35)
            ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
            ax.set_xlabel("bytes per copy")
            ax.set_ylabel("bandwidth (GB/s)")
            ax.set_title("cudaMemcpyAsync bandwidth against size")
        else:
            serial = overlap[0][1]
            streams = [int(s) for s, _ in overlap]
            speedup = [serial / t for _, t in overlap]
            ax.bar(range(len(streams)), speedup, color=svg.GREEN, width=0.6)
            for i, value in enumerate(speedup):
                ax.text(i, value, f"{value:.2f}×", ha="center", va="bottom", fontsize=8)
            ax.axhline(
                1.0,
                color=svg.REFERENCE,
                linestyle="--",
                linewidth=1.2,
                label="one stream: copy, kernel, copy in sequence",
            )
            ax.axhline(
                3.0,
                color=svg.LIGHT,
                linestyle=":",
                linewidth=1.2,
                label="3×: three equal stages fully overlapped",
            )
            ax.set_xticks(range(len(streams)), [str(s) for s in streams])
            ax.set_ylim(0, 3.4)
            ax.set_xlabel("streams (64 MiB in chunks: upload, kernel, download)")
            ax.set_ylabel("speed-up over one stream (×)")
            ax.set_title("staged copy and execute")
            ax.grid(axis="x", visible=False)
    # Under the panels: inside, the legends lay on the rising curves and on the 3× line.
    svg.legend_below(figure, axes, ncol=3)
    caption = (
        "Pageable copies go through a staging buffer with the CPU; pinned (page-locked) memory "
        "is copied by DMA directly and is the reference. Small copies are bound by the per-copy "
        "overhead. Overlapping upload, kernel and download over streams shortens the pipeline."
    )
    h2d_pinned = data.value("transfers/h2d/pinned", BPS, bytes=2**26)
    h2d_pageable = data.value("transfers/h2d/pageable", BPS, bytes=2**26)
    if h2d_pinned and h2d_pageable:
        caption += (
            f" This run at 64 MiB host→device: pinned {h2d_pinned / GB:.1f} GB/s, pageable "
            f"{h2d_pageable / GB:.1f} GB/s ({h2d_pinned / h2d_pageable:.1f}× slower)."
        )
    return finish(key, title, caption, figure)


FIGURE = Figure(position=50, draw=draw)
