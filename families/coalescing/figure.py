"""Global-memory coalescing (`coalescing/`): bandwidth against offset and stride."""

from __future__ import annotations

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    BPS,
    GB,
    TYPE_STYLES,
    Figure,
    Lesson,
    Omitted,
    dram_peak,
    finish,
    gbs,
    new_panels,
    pct,
    reference_line,
    xy,
)
from kernelwatch.report.lessons.rundata import RunData


def draw(data: RunData) -> Lesson:
    key, title = "lesson-coalescing", "Global-memory coalescing: offset and stride"
    types = data.variants("coalescing/offset/", "coalescing/stride/")
    sweeps = {
        kind: {t: data.sweep(f"coalescing/{kind}/{t}", kind, BPS) for t in types}
        for kind in ("offset", "stride")
    }
    # The types drawn, as registered, each styled alike in both panels.
    styles = dict(zip([t for t in types if any(s[t] for s in sweeps.values())], TYPE_STYLES))
    kinds = [k for k in ("offset", "stride") if any(sweeps[k].values())]
    if not kinds:
        return Omitted(
            key, title, "the run has no coalescing/offset or coalescing/stride benchmarks"
        )
    reference = data.reference("coalescing")
    copy = data.value(reference.path, BPS, **reference.params) if reference else None
    peak = dram_peak(data)
    figure, axes = new_panels(len(kinds), 5.4, 3.6)
    for ax, kind in zip(axes, kinds):
        top = 0.0
        for dtype, points in sweeps[kind].items():
            if points:
                color, marker = styles[dtype]
                x, y = xy(points, GB)
                ax.plot(x, y, color=color, marker=marker, label=dtype)
                top = max(top, max(y))
        reference_line(ax, copy, f"cudaMemcpy D2D (copy reference) {gbs(copy)}", GB)
        reference_line(
            ax, peak, f"theoretical DRAM peak {gbs(peak)}", GB, color=svg.LIGHT, style=":"
        )
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
    f32 = data.value("coalescing/stride/float", BPS, stride=32)
    if copy is not None:  # (the percentages are of the copy: none without it)
        if f1 is not None and d1 is not None:
            facts.append(
                f"at offset 1, float copies reach {gbs(f1)} ({pct(f1, copy)} of the copy "
                f"reference) and double copies {gbs(d1)} ({pct(d1, copy)})"
            )
        if f32 is not None:
            facts.append(f"at stride 32 float copies keep {gbs(f32)} ({pct(f32, copy)})")
    caption = (
        "Bandwidth counts the bytes the copy must move. A misaligned start costs little on "
        "current GPUs; a stride wastes most of every 32-byte sector fetched, so useful "
        "bandwidth falls as 1/stride."
    )
    if facts:
        caption += " This run: " + "; ".join(facts) + "."
    return finish(key, title, caption, figure, without_reference=reference is None)


FIGURE = Figure(position=10, draw=draw)
