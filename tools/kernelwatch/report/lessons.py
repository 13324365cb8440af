"""The classic figures of the CUDA memory lessons, redrawn from one run (docs/kernels.md).

One builder per family. Each reads the run's medians (RunData) and returns a Drawn figure, or
Omitted with the reason when the run holds none of the benchmarks it needs (a filtered run):
never an error. A figure whose benchmarks are partly there draws what is there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kernelwatch.report import svg
from kernelwatch.report.rundata import RunData

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


def _pct(value: float | None, reference: float | None) -> str:
    if value is None or not reference:
        return "?"
    return f"{value / reference:.0%}"


def _gbs(value: float | None) -> str:
    return "?" if value is None else f"{value / GB:,.0f} GB/s"


def _xy(
    points: Sequence[tuple[float, float]], scale: float = 1.0
) -> tuple[list[float], list[float]]:
    return [p[0] for p in points], [p[1] / scale for p in points]


def _reference(
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


def _peak(data: RunData) -> float | None:
    return data.context_number("gpu_peak_bandwidth_bytes_per_second")


def _size_label(n: float) -> str:
    for unit, scale in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n / scale:g} {unit}"
    return f"{n:g}"


def _log2_axis(ax: Any, values: Sequence[float], suffix: str = "") -> None:
    """A base-2 log x axis with a tick at each measured value (labelled 4 Ki, 1 Mi, ...)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.set_xscale("log", base=2)
    ticks = sorted(set(values))
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([_size_label(v) + suffix for v in ticks])


def _panels(count: int, width_each: float, height: float) -> tuple[Any, list[Any]]:
    figure, axes = svg.new_figure(width_each * count, height, ncols=count, squeeze=False)
    return figure, list(axes[0])


def _finish(key: str, title: str, caption: str, figure: Any) -> Drawn:
    try:
        return Drawn(key, title, caption, svg.to_svg(figure, key, title))
    finally:
        svg.close(figure)


# --------------------------------------------------------------------------------- coalescing


def coalescing(data: RunData) -> Lesson:
    key, title = "lesson-coalescing", "Global-memory coalescing: offset and stride"
    sweeps = {
        kind: {t: data.sweep(f"coalescing/{kind}/{t}", kind, BPS) for t in ("float", "double")}
        for kind in ("offset", "stride")
    }
    kinds = [k for k in ("offset", "stride") if any(sweeps[k].values())]
    if not kinds:
        return Omitted(
            key, title, "the run has no coalescing/offset or coalescing/stride benchmarks"
        )
    copy = data.value("coalescing/memcpy_d2d", BPS)
    peak = _peak(data)
    figure, axes = _panels(len(kinds), 5.4, 3.6)
    for ax, kind in zip(axes, kinds):
        top = 0.0
        for dtype, color, marker in (("float", svg.BLUE, "o"), ("double", svg.ORANGE, "s")):
            points = sweeps[kind][dtype]
            if points:
                x, y = _xy(points, GB)
                ax.plot(
                    x,
                    y,
                    color=color,
                    marker=marker,
                    label=f"{dtype} (4 B)" if dtype == "float" else f"{dtype} (8 B)",
                )
                top = max(top, max(y))
        _reference(ax, copy, f"cudaMemcpy D2D (copy reference) {_gbs(copy)}", GB)
        _reference(ax, peak, f"theoretical DRAM peak {_gbs(peak)}", GB, color=svg.LIGHT, style=":")
        top = max([top] + [v / GB for v in (copy, peak) if v])
        ax.set_ylim(0, top * 1.12)
        ax.set_xlim(-0.5 if kind == "offset" else 0, 32.5)
        ax.set_xticks(
            [0, 4, 8, 12, 16, 20, 24, 28, 32]
            if kind == "offset"
            else [1, 4, 8, 12, 16, 20, 24, 28, 32]
        )
        ax.set_ylabel("effective bandwidth (GB/s)")
        if kind == "offset":
            ax.set_title("out[i] = in[i + offset]")
            ax.set_xlabel("offset (elements)")
        else:
            ax.set_title("out[i·s] = in[i·s]")
            ax.set_xlabel("stride s (elements)")
    svg.legend_below(figure, axes, ncol=4)
    facts = []
    f1 = data.value("coalescing/offset/float", BPS, offset=1)
    d1 = data.value("coalescing/offset/double", BPS, offset=1)
    if f1 is not None or d1 is not None:
        facts.append(
            f"at offset 1, float copies reach {_gbs(f1)} ({_pct(f1, copy)} of the copy "
            f"reference) and double copies {_gbs(d1)} ({_pct(d1, copy)})"
        )
    f32 = data.value("coalescing/stride/float", BPS, stride=32)
    if f32 is not None:
        facts.append(f"at stride 32 float copies keep {_gbs(f32)} ({_pct(f32, copy)})")
    caption = (
        "Bandwidth counts the bytes the copy must move. A misaligned start costs little on "
        "current GPUs; a stride wastes most of every 32-byte sector fetched, so useful "
        "bandwidth falls as 1/stride."
    )
    if facts:
        caption += " This run: " + "; ".join(facts) + "."
    return _finish(key, title, caption, figure)


# --------------------------------------------------------------------------------- transpose

TRANSPOSE_VARIANTS = (
    "copy_rows",
    "copy_columns",
    "naive_rows",
    "naive_columns",
    "tiled",
    "tiled_padded",
    "diagonal_rows",
    "diagonal_columns",
    "unrolled_rows",
    "unrolled_columns",
    "best",
)


def _transpose_shape(data: RunData) -> tuple[str, str] | None:
    shapes: dict[tuple[str, str], int] = {}
    for path in data.paths("transpose/"):
        for entry in data.entries(path):
            shape = (entry.params.get("rows", ""), entry.params.get("cols", ""))
            if all(shape):
                shapes[shape] = shapes.get(shape, 0) + 1
    if not shapes:
        return None
    if ("8192", "8192") in shapes:
        return ("8192", "8192")
    return max(shapes, key=lambda s: (shapes[s], int(s[0]) * int(s[1])))


def transpose(data: RunData) -> Lesson:
    key, title = "lesson-transpose", "Matrix transpose: variants against the copy"
    shape = _transpose_shape(data)
    if shape is None:
        return Omitted(key, title, "the run has no transpose benchmarks")
    rows, cols = shape
    copy = data.value("transpose/copy_rows", BPS, rows=rows, cols=cols, block_rows=8)
    bars: list[tuple[str, float | None, float | None]] = []
    for variant in TRANSPOSE_VARIANTS:
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
                f"{value / GB:,.0f}  ({_pct(value, copy)})",
                va="center",
                fontsize=7.5,
                color="#333333",
            )
    ax.set_yticks(range(len(bars)), [b[0] for b in bars])
    ax.invert_yaxis()
    _reference(
        ax, copy, f"copy with the same traffic (copy_rows, 32×8) {_gbs(copy)}", GB, vertical=True
    )
    peak = _peak(data)
    _reference(
        ax,
        peak,
        f"theoretical DRAM peak {_gbs(peak)}",
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
    if tiled is not None and padded is not None:
        facts.append(f"tiled {_pct(tiled, copy)} → tiled_padded {_pct(padded, copy)} of the copy")
    if best is not None:
        facts.append(f"best {_pct(best, copy)}")
    if facts:
        caption += " This run: " + ", ".join(facts) + "."
    if copy is None:
        caption += " (The copy reference is not in this run: no reference line.)"
    return _finish(key, title, caption, figure)


# --------------------------------------------------------------------------------- matmul


def matmul(data: RunData) -> Lesson:
    key, title = (
        "lesson-matmul",
        "Matrix multiply: the guide's kernels and a tiled SGEMM against cuBLAS",
    )
    guide = [k for k in ("simple", "coalesced_a", "shared_ab") if data.entries(f"matmul/{k}")]
    sizes = sorted(
        {int(e.params["m"]) for k in guide for e in data.entries(f"matmul/{k}") if "m" in e.params}
    )
    sgemm = data.sweep("matmul/sgemm_tiled", "size", FLOPS)
    cublas = data.sweep("matmul/cublas_sgemm", "size", FLOPS)
    panels = (["guide"] if guide and sizes else []) + (["sgemm"] if sgemm or cublas else [])
    if not panels:
        return Omitted(key, title, "the run has no matmul benchmarks")
    figure, axes = _panels(len(panels), 5.2, 3.6)
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
                x, y = _xy(cublas, 1e12)
                ax.plot(
                    x,
                    y,
                    color=svg.REFERENCE,
                    linestyle="--",
                    marker="D",
                    label="cublasSgemm (reference)",
                )
            if sgemm:
                x, y = _xy(sgemm, 1e12)
                ax.plot(
                    x,
                    y,
                    color=svg.GREEN,
                    marker="o",
                    label="sgemm_tiled (128×128 tiles, 8×8 per thread)",
                )
                reference = dict(cublas)
                for size, value in sgemm:
                    if size in reference:
                        ax.annotate(
                            f"{value / reference[size]:.0%}",
                            (size, value / 1e12),
                            textcoords="offset points",
                            xytext=(0, -13),
                            ha="center",
                            fontsize=7.5,
                            color=svg.GREEN,
                        )
            _log2_axis(ax, [p[0] for p in sgemm + cublas], "")
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
    return _finish(key, title, caption, figure)


# --------------------------------------------------------------------------------- reduction

REDUCTION_VARIANTS = (
    "naive",
    "interleaved",
    "sequential",
    "warp_shuffle",
    "vectorized",
    "cub",
    "streaming",
)


def _reduction_n(data: RunData) -> str | None:
    counts: dict[str, int] = {}
    for path in data.paths("reduction/sum/"):
        for entry in data.entries(path):
            if "n" in entry.params:
                counts[entry.params["n"]] = counts.get(entry.params["n"], 0) + 1
    if not counts:
        return None
    return "67108864" if "67108864" in counts else max(counts, key=lambda n: (counts[n], int(n)))


def reduction(data: RunData) -> Lesson:
    key, title = "lesson-reduction", "Reductions: variants against the streaming read"
    n = _reduction_n(data)
    if n is None:
        return Omitted(key, title, "the run has no reduction/sum benchmarks")
    dtypes = [
        t
        for t in ("float", "double")
        if any(data.value(f"reduction/sum/{v}/{t}", BPS, n=n) for v in REDUCTION_VARIANTS)
    ]
    variants = [
        v
        for v in REDUCTION_VARIANTS
        if any(data.value(f"reduction/sum/{v}/{t}", BPS, n=n) for t in dtypes)
    ]
    scaling = {
        v: data.sweep(f"reduction/sum/{v}/float", "n", BPS)
        for v in ("vectorized", "cub", "streaming")
    }
    has_scaling = sum(len(p) > 1 for p in scaling.values()) > 0
    figure, axes = _panels(2 if has_scaling else 1, 5.4, 3.9)
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
            ax.text(value / GB + 40, row, _pct(value, stream), va="center", fontsize=7)
        _reference(
            ax,
            stream,
            f"streaming read ({dtype}) {_gbs(stream)}",
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
    ax.set_title(f"sum of n = {_size_label(float(n))} elements")
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
                x, y = _xy(points, GB)
                xs += x
                ax.plot(x, y, color=color, linestyle=line, marker=marker, label=label)
        _log2_axis(ax, xs)
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
    return _finish(key, title, caption, figure)


# --------------------------------------------------------------------------------- transfers


def transfers(data: RunData) -> Lesson:
    key, title = "lesson-transfers", "Host↔device transfers: pageable and pinned"
    lines = {
        (direction, memory): data.sweep(f"transfers/{direction}/{memory}", "bytes", BPS)
        for direction in ("h2d", "d2h")
        for memory in ("pinned", "pageable")
    }
    overlap: list[tuple[float, float]] = []
    for count, _ in data.sweep("transfers/overlap", "streams", BPS):
        time = data.value("transfers/overlap", "real_time", streams=int(count))
        if time:
            overlap.append((count, time))
    if not any(lines.values()) and not overlap:
        return Omitted(key, title, "the run has no transfers benchmarks")
    panels = (["size"] if any(lines.values()) else []) + (["overlap"] if len(overlap) > 1 else [])
    figure, axes = _panels(len(panels), 5.4, 3.7)
    for ax, panel in zip(axes, panels):
        if panel == "size":
            xs: list[float] = []
            names = {"h2d": "host→device", "d2h": "device→host"}
            for (direction, memory), points in lines.items():
                if not points:
                    continue
                x, y = _xy(points, GB)
                xs += x
                ax.plot(
                    x,
                    y,
                    color=svg.BLUE if direction == "h2d" else svg.ORANGE,
                    linestyle="-" if memory == "pinned" else "--",
                    marker="o" if memory == "pinned" else "s",
                    label=f"{names[direction]}, {memory}",
                )
            _log2_axis(ax, xs, "B")
            ax.tick_params(axis="x", labelrotation=35)
            ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
            ax.set_xlabel("bytes per copy")
            ax.set_ylabel("bandwidth (GB/s)")
            ax.set_title("cudaMemcpyAsync bandwidth against size")
            ax.legend(loc="upper left")
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
            ax.legend(loc="upper left")
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
    return _finish(key, title, caption, figure)


# --------------------------------------------------------------------------------- bank conflicts


def shared_banks(data: RunData) -> Lesson:
    key, title = "lesson-shared-banks", "Shared-memory bank conflicts: bandwidth against stride"
    metric = "shared_bytes_per_second"
    reads = {w: data.sweep(f"shared_banks/read/{w}", "stride", metric) for w in ("u32", "u64")}
    padded = {w: data.sweep(f"shared_banks/padded/{w}", "stride", metric) for w in ("u32", "u64")}
    if not any(reads.values()) and not any(padded.values()):
        return Omitted(key, title, "the run has no shared_banks benchmarks")
    from matplotlib.ticker import FixedLocator, NullLocator

    figure, ax = svg.new_figure(8.6, 3.4)
    tb = 1e12
    colors = {"u32": svg.BLUE, "u64": svg.ORANGE}
    all_y: list[float] = []
    for width in ("u32", "u64"):
        if reads[width]:
            x, y = _xy(reads[width], tb)
            all_y += y
            ax.plot(
                x,
                y,
                color=colors[width],
                marker="o" if width == "u32" else "s",
                label=f"{width} words ({'4' if width == 'u32' else '8'} B)",
            )
        if padded[width]:
            x, y = _xy(padded[width], tb)
            all_y += y
            ax.plot(
                x,
                y,
                linestyle="none",
                marker="*",
                markersize=12,
                color=colors[width],
                markeredgecolor="black",
                markeredgewidth=0.5,
                label=f"{width}, padded pitch (stride + 1)",
            )
    reference = data.value("shared_banks/read/u32", metric, stride=1)
    ways = data.sweep("shared_banks/read/u32", "stride", "bank_conflict_ways")
    if reference and ways:
        ax.plot(
            [w[0] for w in ways],
            [reference / tb / max(w[1], 1.0) for w in ways],
            color=svg.GREY,
            linestyle=":",
            linewidth=1.2,
            label="prediction: conflict-free ÷ conflict ways (u32)",
        )
    _reference(
        ax,
        reference,
        f"conflict-free (u32, stride 1) {reference / tb:.1f} TB/s" if reference else "",
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
    s32 = data.value("shared_banks/read/u32", metric, stride=32)
    if reference and s32:
        caption += f" This run: stride 32 is {reference / s32:.1f}× slower than stride 1."
    return _finish(key, title, caption, figure)


# --------------------------------------------------------------------------------- occupancy


def occupancy(data: RunData) -> Lesson:
    key, title = "lesson-occupancy", "Block size and occupancy"
    copy = data.sweep("occupancy/copy", "block", BPS)
    limited = data.sweep("occupancy/smem_limited", "blocks_per_sm", BPS)
    if not copy and not limited:
        return Omitted(key, title, "the run has no occupancy benchmarks")
    panels = (["block"] if copy else []) + (["smem"] if limited else [])
    figure, axes = _panels(len(panels), 5.4, 3.7)
    ceiling = data.value("coalescing/memcpy_d2d", BPS)
    legend_axes: list[Any] = []
    for ax, panel in zip(axes, panels):
        if panel == "block":
            x, y = _xy(copy, GB)
            occupancy_values = data.sweep("occupancy/copy", "block", "occupancy")
            twin = ax.twinx()
            if occupancy_values:
                ox, oy = _xy(occupancy_values)
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
            _reference(ax, ceiling, f"cudaMemcpy D2D (copy reference) {_gbs(ceiling)}", GB)
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
            x, y = _xy(points, GB)
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
            _reference(ax, ceiling, f"cudaMemcpy D2D (copy reference) {_gbs(ceiling)}", GB)
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
    return _finish(key, title, caption, figure)


# --------------------------------------------------------------------------------- local memory


def local_memory(data: RunData) -> Lesson:
    key, title = "lesson-local-memory", "Registers and local memory"
    kernels = [
        k
        for k in ("registers", "local_array", "register_capped")
        if data.entries(f"local_memory/{k}")
    ]
    if not kernels:
        return Omitted(key, title, "the run has no local_memory benchmarks")
    rounds = sorted(
        {
            int(e.params["rounds"])
            for k in kernels
            for e in data.entries(f"local_memory/{k}")
            if "rounds" in e.params
        }
    )
    figure, ax = svg.new_figure(8.6, 3.5)
    width = 0.8 / max(len(rounds), 1)
    colors = (svg.BLUE, svg.SKY, svg.PURPLE)
    for j, r in enumerate(rounds):
        reference = data.value("local_memory/registers", "real_time", rounds=r)
        for i, kernel in enumerate(kernels):
            value = data.value(f"local_memory/{kernel}", "real_time", rounds=r)
            if value is None:
                continue
            x = i - 0.4 + width * (j + 0.5)
            ax.bar(
                x,
                value / 1e3,
                width=width * 0.92,
                color=colors[j % len(colors)],
                label=f"rounds:{r}" if i == 0 or kernel == kernels[0] else None,
            )
            if reference:
                ax.text(
                    x,
                    value / 1e3,
                    f"{value / reference:.1f}×",
                    ha="center",
                    va="bottom",
                    fontsize=7.5,
                )
    labels = []
    for kernel in kernels:
        regs = data.value(f"local_memory/{kernel}", "registers_per_thread")
        local = data.value(f"local_memory/{kernel}", "local_bytes_per_thread")
        blocks = data.value(f"local_memory/{kernel}", "resident_blocks_per_sm")
        detail = ", ".join(
            text
            for text, value in (
                (f"{regs:g} regs" if regs is not None else "", regs),
                (f"{local:g} B local" if local is not None else "", local),
                (f"{blocks:g} blocks/SM" if blocks is not None else "", blocks),
            )
            if value is not None
        )
        labels.append(f"{kernel}\n{detail}" if detail else kernel)
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    ax.legend(unique.values(), unique.keys(), loc="upper right")
    ax.set_xticks(range(len(kernels)), labels)
    ax.set_ylabel("GPU time (µs)")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.12)
    ax.grid(axis="x", visible=False)
    ax.set_title("the same computation; labels: time relative to the registers kernel")
    caption = (
        "An array indexed at run time lives in local memory (per-thread DRAM, cached in L1); "
        "capping registers with __launch_bounds__ forces spills. Both cost more than the extra "
        "occupancy gains."
    )
    return _finish(key, title, caption, figure)


LESSONS: tuple[Callable[[RunData], Lesson], ...] = (
    coalescing,
    transpose,
    matmul,
    reduction,
    transfers,
    shared_banks,
    occupancy,
    local_memory,
)

# Each family's speed-of-light reference (docs/kernels.md): the trends of these show drift of
# the machine itself (driver, clocks) rather than of one kernel.
REFERENCES: tuple[str, ...] = (
    "coalescing/memcpy_d2d/manual_time",
    "transpose/copy_rows/rows:8192/cols:8192/block_rows:8/manual_time",
    "matmul/cublas_sgemm/size:4096/manual_time",
    "reduction/sum/streaming/float/n:67108864/manual_time",
    "shared_banks/read/u32/stride:1/manual_time",
    "local_memory/registers/n:16777216/rounds:2/manual_time",
    "transfers/h2d/pinned/bytes:67108864/manual_time",
    "occupancy/copy/block:256/manual_time",
)


def draw_all(data: RunData) -> list[Lesson]:
    """Every lesson figure, in the order of docs/kernels.md."""
    found: list[Lesson] = []
    for lesson in LESSONS:
        with svg.style(lesson.__name__):
            found.append(lesson(data))
    return found
