"""Reductions (`reduction/sum/`): variants against the streaming read, and against size."""

from __future__ import annotations

import itertools

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    BPS,
    GB,
    TYPE_STYLES,
    Figure,
    Lesson,
    Omitted,
    finish,
    gbs,
    log2_axis,
    new_panels,
    pct,
    reference_line,
    size_label,
    xy,
)
from kernelwatch.report.lessons.rundata import RunData


def _reduction_n(data: RunData) -> int | None:
    counts: dict[int, int] = {}
    for path in data.paths("reduction/sum/"):
        for entry in data.entries(path):
            n = entry.integer("n")
            if n is not None:
                counts[n] = counts.get(n, 0) + 1
    if not counts:
        return None
    return 67108864 if 67108864 in counts else max(counts, key=lambda n: (counts[n], n))


def draw(data: RunData) -> Lesson:
    key, title = "lesson-reduction", "Reductions: variants against the streaming read"
    n = _reduction_n(data)
    if n is None:
        return Omitted(key, title, "the run has no reduction/sum benchmarks")
    variants = data.variants("reduction/sum/")  # as the C++ registers them
    marked = data.reference("reduction")  # the streaming read
    ceiling = marked.path.split("/")[2] if marked else None
    dtypes: list[str] = []  # the types, as registered
    for v in variants:
        dtypes += [t for t in data.variants(f"reduction/sum/{v}/") if t not in dtypes]
    dtypes = [
        t for t in dtypes if any(data.value(f"reduction/sum/{v}/{t}", BPS, n=n) for v in variants)
    ]
    variants = [
        v for v in variants if any(data.value(f"reduction/sum/{v}/{t}", BPS, n=n) for t in dtypes)
    ]
    first = dtypes[0] if dtypes else ""
    scaling = {v: data.sweep(f"reduction/sum/{v}/{first}", "n", BPS) for v in variants}
    has_scaling = sum(len(p) > 1 for p in scaling.values()) > 0
    figure, axes = new_panels(2 if has_scaling else 1, 5.4, 3.9)
    ax = axes[0]
    height = 0.8 / max(len(dtypes), 1)
    colors = {t: color for t, (color, _) in zip(dtypes, TYPE_STYLES)}
    for j, dtype in enumerate(dtypes):
        stream = data.value(f"reduction/sum/{ceiling}/{dtype}", BPS, n=n) if ceiling else None
        for i, variant in enumerate(variants):
            value = data.value(f"reduction/sum/{variant}/{dtype}", BPS, n=n)
            if value is None:
                continue
            row = i - 0.4 + height * (j + 0.5)
            ax.barh(
                row,
                value / GB,
                height=height * 0.9,
                color=colors[dtype],
                alpha=0.55 if variant == ceiling else 1.0,
                label=dtype if i == 0 or (variant == variants[0]) else None,
            )
            if stream:
                ax.text(value / GB + 40, row, pct(value, stream), va="center", fontsize=7)
        reference_line(
            ax,
            stream,
            f"streaming read ({dtype}) {gbs(stream)}",
            GB,
            vertical=True,
            color=colors[dtype],
        )
    svg.legend_below(figure, ax, ncol=2)
    ax.set_yticks(range(len(variants)), variants)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, ax.get_xlim()[1] * 1.12)
    ax.set_xlabel("effective bandwidth (GB/s)" + (f";  (% of {ceiling})" if ceiling else ""))
    ax.set_title(f"sum of n = {size_label(n)} elements")
    if has_scaling:
        ax = axes[1]
        # The variants measured at several sizes, the reference first.
        swept = sorted((v for v in variants if len(scaling[v]) > 1), key=lambda v: v != ceiling)
        styles = itertools.cycle(
            ((svg.BLUE, "-", "o"), (svg.GREEN, "-", "s"), (svg.PURPLE, "-", "^"))
        )
        xs: list[float] = []
        for variant in swept:
            points = scaling[variant]
            if points:
                color, line, marker = (
                    (svg.REFERENCE, "--", "D") if variant == ceiling else next(styles)
                )
                label = f"{variant} (reference)" if variant == ceiling else variant
                x, y = xy(points, GB)
                xs += x
                ax.plot(x, y, color=color, linestyle=line, marker=marker, label=label)
        log2_axis(ax, xs)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
        ax.set_xlabel(f"elements n ({first})")
        ax.set_ylabel("effective bandwidth (GB/s)")
        ax.set_title(f"bandwidth against size ({first})")
        ax.legend(loc="lower right")
    caption = (
        "The teaching kernels (one element per thread, a shared-memory tree or a warp shuffle "
        "per block) are latency-bound; a grid-stride kernel with 16-byte loads, and CUB, reach "
        "the streaming read. Small inputs are dominated by launch and ramp-up."
    )
    return finish(key, title, caption, figure, without_reference=marked is None)


FIGURE = Figure(position=40, draw=draw)
