"""Reductions (`reduction/sum/`): variants against the streaming read, and against size."""

from __future__ import annotations

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    BPS,
    GB,
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


def _reduction_n(data: RunData) -> str | None:
    counts: dict[str, int] = {}
    for path in data.paths("reduction/sum/"):
        for entry in data.entries(path):
            if "n" in entry.params:
                counts[entry.params["n"]] = counts.get(entry.params["n"], 0) + 1
    if not counts:
        return None
    return "67108864" if "67108864" in counts else max(counts, key=lambda n: (counts[n], int(n)))


def draw(data: RunData) -> Lesson:
    key, title = "lesson-reduction", "Reductions: variants against the streaming read"
    n = _reduction_n(data)
    if n is None:
        return Omitted(key, title, "the run has no reduction/sum benchmarks")
    variants = data.variants("reduction/sum/")  # as the C++ registers them
    # The types as the page draws them: float first, blue; double, orange. Not read from the
    # run (data.variants of each variant): a run without family_index (Google Benchmark < 1.6)
    # would list double first, and a run filtered to double would colour it as the first type.
    dtypes = [
        t
        for t in ("float", "double")
        if any(data.value(f"reduction/sum/{v}/{t}", BPS, n=n) for v in variants)
    ]
    variants = [
        v for v in variants if any(data.value(f"reduction/sum/{v}/{t}", BPS, n=n) for t in dtypes)
    ]
    scaling = {
        v: data.sweep(f"reduction/sum/{v}/float", "n", BPS)
        for v in ("vectorized", "cub", "streaming")
    }
    has_scaling = sum(len(p) > 1 for p in scaling.values()) > 0
    figure, axes = new_panels(2 if has_scaling else 1, 5.4, 3.9)
    ax = axes[0]
    height = 0.8 / max(len(dtypes), 1)
    colors = {"float": svg.BLUE, "double": svg.ORANGE}
    for j, dtype in enumerate(dtypes):
        stream = data.value(f"reduction/sum/streaming/{dtype}", BPS, n=n)
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
                alpha=0.55 if variant == "streaming" else 1.0,
                label=dtype if i == 0 or (variant == variants[0]) else None,
            )
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
    ax.set_xlabel("effective bandwidth (GB/s);  (% of streaming)")
    ax.set_title(f"sum of n = {size_label(float(n))} elements")
    if has_scaling:
        ax = axes[1]
        styles = {
            "streaming": (svg.REFERENCE, "--", "D", "streaming read (reference)"),
            "vectorized": (svg.BLUE, "-", "o", "vectorized (16-byte loads)"),
            "cub": (svg.GREEN, "-", "s", "cub::DeviceReduce::Sum"),
        }
        xs: list[float] = []
        for variant in ("streaming", "vectorized", "cub"):
            points = scaling[variant]
            if points:
                color, line, marker, label = styles[variant]
                x, y = xy(points, GB)
                xs += x
                ax.plot(x, y, color=color, linestyle=line, marker=marker, label=label)
        log2_axis(ax, xs)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.08)
        ax.set_xlabel("elements n (float)")
        ax.set_ylabel("effective bandwidth (GB/s)")
        ax.set_title("bandwidth against size (float)")
        ax.legend(loc="lower right")
    caption = (
        "The teaching kernels (one element per thread, a shared-memory tree or a warp shuffle "
        "per block) are latency-bound; a grid-stride kernel with 16-byte loads, and CUB, reach "
        "the streaming read. Small inputs are dominated by launch and ramp-up."
    )
    return finish(key, title, caption, figure)


FIGURE = Figure(
    position=40,
    draw=draw,
    reference="reduction/sum/streaming/float/n:67108864/manual_time",
)
