"""Shared-memory bank conflicts (`shared_banks/`): bandwidth against stride."""

from __future__ import annotations

import math

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    TYPE_STYLES,
    Figure,
    Lesson,
    Omitted,
    finish,
    reference_line,
    xy,
)
from kernelwatch.report.lessons.rundata import RunData


def draw(data: RunData) -> Lesson:
    key, title = "lesson-shared-banks", "Shared-memory bank conflicts: bandwidth against stride"
    metric = "shared_bytes_per_second"
    # The word types, as the C++ registers them.
    widths = data.variants("shared_banks/read/", "shared_banks/padded/")
    reads = {w: data.sweep(f"shared_banks/read/{w}", "stride", metric) for w in widths}
    padded = {w: data.sweep(f"shared_banks/padded/{w}", "stride", metric) for w in widths}
    if not any(reads.values()) and not any(padded.values()):
        return Omitted(key, title, "the run has no shared_banks benchmarks")
    from matplotlib.ticker import FixedLocator, NullLocator

    figure, ax = svg.new_figure(8.6, 3.4)
    tb = 1e12
    all_y: list[float] = []
    for width, (color, marker) in zip(widths, TYPE_STYLES):
        if reads[width]:
            x, y = xy(reads[width], tb)
            all_y += y
            ax.plot(x, y, color=color, marker=marker, label=f"{width} words")
        if padded[width]:
            x, y = xy(padded[width], tb)
            all_y += y
            ax.plot(
                x,
                y,
                linestyle="none",
                marker="*",
                markersize=12,
                color=color,
                markeredgecolor="black",
                markeredgewidth=0.5,
                label=f"{width}, padded pitch (stride + 1)",
            )
    marked = data.reference("shared_banks")  # the conflict-free read
    reference = data.value(marked.path, metric, **marked.params) if marked else None
    ways = data.sweep(marked.path, "stride", "bank_conflict_ways") if marked else []
    word = marked.path.rsplit("/", 1)[-1] if marked else ""  # u32
    stride = marked.params.get("stride") if marked else None  # 1
    if reference and ways:
        ax.plot(
            [w[0] for w in ways],
            [reference / tb / max(w[1], 1.0) for w in ways],
            color=svg.GREY,
            linestyle=":",
            linewidth=1.2,
            label=f"prediction: conflict-free ÷ conflict ways ({word})",
        )
    reference_line(
        ax,
        reference,
        f"conflict-free ({word}, stride {stride}) {reference / tb:.1f} TB/s" if reference else "",
        tb,
    )
    ax.set_yscale("log", base=2)
    low = min(all_y) if all_y else 1.0
    high = max(all_y + ([reference / tb] if reference else [])) if all_y else 32.0
    ticks = [2.0**k for k in range(math.floor(math.log2(low)), math.ceil(math.log2(high)) + 1)]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels([f"{t:g}" for t in ticks])
    ax.set_ylim(ticks[0] * 0.8, ticks[-1] * 1.3)
    ax.set_xlim(0, 33)
    ax.set_xticks([1, 2, 4, 8, 12, 16, 20, 24, 28, 32])
    ax.set_xlabel("stride between the words of neighbouring lanes (words)")
    ax.set_ylabel("shared-memory read bandwidth (TB/s, log₂)")
    svg.legend_below(figure, ax, ncol=3)
    caption = (
        "Lane l of a warp reads word l·stride: the 32 addresses fall into gcd(stride, 32)-way "
        "conflicts (gcd(stride, 16) for 8-byte words, served per half-warp). Odd strides are "
        "free; one word of padding restores full speed at stride 32."
    )
    s32 = data.value(marked.path, metric, stride=32) if marked else None
    if reference and s32:
        caption += f" This run: stride 32 is {reference / s32:.1f}× slower than stride 1."
    return finish(key, title, caption, figure, without_reference=marked is None)


FIGURE = Figure(position=60, draw=draw)
