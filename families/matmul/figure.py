"""Matrix multiply (`matmul/`): the guide's kernels, and a tiled SGEMM against cuBLAS."""

from __future__ import annotations

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    FLOPS,
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
    key, title = (
        "lesson-matmul",
        "Matrix multiply: the guide's kernels and a tiled SGEMM against cuBLAS",
    )
    guide = [  # the guide's kernels, as the C++ registers them: the variants sized by m
        k
        for k in data.variants("matmul/")
        if any(e.integer("m") is not None for e in data.entries(f"matmul/{k}"))
    ]
    sizes = sorted(
        {m for k in guide for e in data.entries(f"matmul/{k}") if (m := e.integer("m")) is not None}
    )
    sgemm = data.sweep("matmul/sgemm_tiled", "size", FLOPS)
    reference = data.reference("matmul")  # cuBLAS
    cublas = data.sweep(reference.path, "size", FLOPS) if reference else []
    panels = (["guide"] if guide and sizes else []) + (["sgemm"] if sgemm or cublas else [])
    if not panels:
        return Omitted(key, title, "the run has no matmul benchmarks")
    figure, axes = new_panels(len(panels), 5.2, 3.6)
    for ax, panel in zip(axes, panels):
        if panel == "guide":
            width = 0.8 / len(sizes)
            colors = (svg.BLUE, svg.SKY, svg.PURPLE)
            for j, m in enumerate(sizes):
                values = [data.value(f"matmul/{k}", FLOPS, m=m) for k in guide]
                xs = [i - 0.4 + width * (j + 0.5) for i in range(len(guide))]
                kept = [(at, v) for at, v in zip(xs, values) if v is not None]
                ax.bar(
                    [at for at, _ in kept],
                    [v / 1e12 for _, v in kept],
                    width=width * 0.92,
                    color=colors[j % len(colors)],
                    label=f"C = AB, {m}×32 · 32×{m}",
                )
                for at, v in kept:
                    ax.text(at, v / 1e12, f"{v / 1e12:.2f}", ha="center", va="bottom", fontsize=7.5)
            ax.set_xticks(range(len(guide)), guide)
            ax.set_ylabel("TFLOP/s (FP32)")
            ax.set_title("Best Practices Guide kernels (w = 32)")
            ax.grid(axis="x", visible=False)
            ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
            ax.legend(loc="upper left")
        else:
            if cublas:
                x, y = xy(cublas, 1e12)
                ax.plot(
                    x,
                    y,
                    color=svg.REFERENCE,
                    linestyle="--",
                    marker="D",
                    label="cublasSgemm (reference)",
                )
            if sgemm:
                x, y = xy(sgemm, 1e12)
                ax.plot(
                    x,
                    y,
                    color=svg.GREEN,
                    marker="o",
                    label="sgemm_tiled (128×128 tiles, 8×8 per thread)",
                )
                bar = dict(cublas)
                for size, value in sgemm:
                    if size in bar:
                        ax.annotate(
                            f"{value / bar[size]:.0%}",
                            (size, value / 1e12),
                            textcoords="offset points",
                            xytext=(0, -13),
                            ha="center",
                            fontsize=7.5,
                            color=svg.GREEN,
                        )
            log2_axis(ax, [p[0] for p in sgemm + cublas], "")
            ax.set_xticklabels([f"{int(p)}³" for p in sorted({p[0] for p in sgemm + cublas})])
            ax.set_xlabel("square matrix size n (n×n·n×n)")
            ax.set_ylabel("TFLOP/s (FP32)")
            ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
            ax.set_title("General SGEMM (% of cuBLAS)")
            ax.legend(loc="lower right")
    caption = (
        "Left: C = AB with A M×32 and B 32×N; the guide's shared-memory tiles help where the "
        "data is not already an L1 broadcast. Right: a register-tiled SGEMM against cuBLAS "
        "(plain FP32), labelled with its fraction of cuBLAS."
    )
    return finish(key, title, caption, figure, without_reference=reference is None)


FIGURE = Figure(position=30, draw=draw)
