"""Registers and local memory (`local_memory/`): the same computation, three ways."""

from __future__ import annotations

from kernelwatch.report import svg
from kernelwatch.report.lessons.drawing import (
    Figure,
    Lesson,
    Omitted,
    finish,
)
from kernelwatch.report.lessons.rundata import RunData


def _attribute(data: RunData, kernel: str, metric: str, rounds: list[int]) -> float | None:
    """The kernel's `metric` (its registers, ...) from a benchmark drawn: one whose name the
    figure cannot read may be another build's."""
    found = (data.value(f"local_memory/{kernel}", metric, rounds=r) for r in rounds)
    return next((v for v in found if v is not None), None)


def draw(data: RunData) -> Lesson:
    key, title = "lesson-local-memory", "Registers and local memory"
    kernels = [  # as the C++ registers them: the variants measured at a number of rounds
        k
        for k in data.variants("local_memory/")
        if any(e.integer("rounds") is not None for e in data.entries(f"local_memory/{k}"))
    ]
    if not kernels:
        return Omitted(key, title, "the run has no local_memory benchmarks")
    rounds = sorted(
        {
            r
            for k in kernels
            for e in data.entries(f"local_memory/{k}")
            if (r := e.integer("rounds")) is not None
        }
    )
    figure, ax = svg.new_figure(8.6, 3.5)
    width = 0.8 / max(len(rounds), 1)
    colors = (svg.BLUE, svg.SKY, svg.PURPLE)
    marked = data.reference("local_memory")  # the array in registers
    for j, r in enumerate(rounds):
        reference = data.value(marked.path, "real_time", rounds=r) if marked else None
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
        regs = _attribute(data, kernel, "registers_per_thread", rounds)
        local = _attribute(data, kernel, "local_bytes_per_thread", rounds)
        blocks = _attribute(data, kernel, "resident_blocks_per_sm", rounds)
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
    return finish(key, title, caption, figure, without_reference=marked is None)


FIGURE = Figure(position=80, draw=draw)
