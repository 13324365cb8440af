"""Block size and occupancy (`occupancy/`): bandwidth against block size and occupancy."""

from __future__ import annotations

from typing import Any

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    BPS,
    GB,
    Figure,
    Lesson,
    Omitted,
    finish,
    gbs,
    new_panels,
    reference_line,
    xy,
)
from kernelwatch.report.lessons.rundata import RunData


def draw(data: RunData) -> Lesson:
    key, title = "lesson-occupancy", "Block size and occupancy"
    copy = data.sweep("occupancy/copy", "block", BPS)
    limited = data.sweep("occupancy/smem_limited", "blocks_per_sm", BPS)
    if not copy and not limited:
        return Omitted(key, title, "the run has no occupancy benchmarks")
    panels = (["block"] if copy else []) + (["smem"] if limited else [])
    figure, axes = new_panels(len(panels), 5.4, 3.7)
    marked = data.reference("coalescing")  # the device-to-device copy
    ceiling = data.value(marked.path, BPS, **marked.params) if marked else None
    legend_axes: list[Any] = []
    for ax, panel in zip(axes, panels):
        if panel == "block":
            x, y = xy(copy, GB)
            occupancy_values = data.sweep("occupancy/copy", "block", "occupancy")
            twin = ax.twinx()
            if occupancy_values:
                ox, oy = xy(occupancy_values)
                twin.plot(
                    ox,
                    oy,
                    color=svg.GREY,
                    linestyle=":",
                    marker="s",
                    markersize=3.5,
                    linewidth=1.1,
                    label="theoretical occupancy (right axis)",
                )
            twin.set_ylim(0, 1.25)
            twin.set_ylabel("theoretical occupancy", color=svg.GREY)
            twin.tick_params(axis="y", colors=svg.GREY)
            twin.grid(False)
            twin.spines["right"].set_visible(True)
            ax.set_zorder(twin.get_zorder() + 1)
            ax.patch.set_visible(False)
            ax.plot(x, y, color=svg.BLUE, marker="o", label="copy, one float per thread")
            reference_line(ax, ceiling, f"cudaMemcpy D2D (copy reference) {gbs(ceiling)}", GB)
            ax.set_ylim(0, max(y + [ceiling / GB if ceiling else 0]) * 1.15)
            ax.set_xticks([32, 128, 256, 384, 512, 640, 768, 896, 1024])
            ax.tick_params(axis="x", labelrotation=35)
            ax.set_xlabel("threads per block")
            ax.set_ylabel("effective bandwidth (GB/s)")
            ax.set_title("block size sweep")
            legend_axes.append(twin)
        else:
            occ = dict(data.sweep("occupancy/smem_limited", "blocks_per_sm", "occupancy"))
            points = [(occ.get(b, b / 8), v) for b, v in limited]
            x, y = xy(points, GB)
            ax.plot(
                x,
                y,
                color=svg.PURPLE,
                marker="o",
                label="copy, 256 threads, shared memory reserved",
            )
            for (blocks, _), xi, yi in zip(limited, x, y):
                ax.annotate(
                    f"{blocks:g}",
                    (xi, yi),
                    textcoords="offset points",
                    xytext=(-8, 5),
                    fontsize=7.5,
                )
            top = max(points, key=lambda p: p[0])
            ax.plot(
                [0, top[0]],
                [0, top[1] / GB],
                color=svg.GREY,
                linestyle=":",
                linewidth=1.2,
                label="proportional to occupancy",
            )
            reference_line(ax, ceiling, f"cudaMemcpy D2D (copy reference) {gbs(ceiling)}", GB)
            ax.set_xlim(0, 1.05)
            ax.set_ylim(0, max(y + [ceiling / GB if ceiling else 0]) * 1.15)
            ax.set_xlabel("theoretical occupancy (labels: resident blocks per SM)")
            ax.set_ylabel("effective bandwidth (GB/s)")
            ax.set_title("residency limited by shared memory")
    svg.legend_below(figure, axes + legend_axes, ncol=3)
    caption = (
        "A memory-bound copy needs many resident warps to cover DRAM latency: with shared memory "
        "limiting residency, bandwidth grows almost linearly with occupancy. Small blocks are "
        "limited by how fast the SMs start and retire blocks even at full theoretical occupancy."
    )
    return finish(key, title, caption, figure, without_reference=marked is None)


FIGURE = Figure(position=70, draw=draw)
