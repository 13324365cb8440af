"""Why a benchmark changed, as data: the Explanation that a Report holds (compare.py)
and the views show (render/, report/page), with its parts and their wording: how the kernel
changed (kernels.py classifies it), the ncu metrics that moved (ncu.py measures them) and the
SASS diff (sass.py makes it).

explain.py, a workflow, fills it in after the timing; the core only holds it. (Issue 33: the
type lived in explain.py, so the core's Report and the views imported a workflow for it.)
"""

from __future__ import annotations

import enum
import functools
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# --- the ncu metrics ------------------------------------------------------------------------------

# The fixed metric set (Hopper names; docs/running.md, "Explaining a regression").
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L1_HIT = "l1tex__t_sector_hit_rate.pct"
L2_HIT = "lts__t_sector_hit_rate.pct"
BANK_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
BANK_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
INSTRUCTIONS = "smsp__inst_executed.sum"
DURATION = "gpu__time_duration.sum"
_STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
STALL_REASONS = (
    "long_scoreboard",
    "short_scoreboard",
    "mio_throttle",
    "lg_throttle",
    "barrier",
    "wait",
    "math_pipe_throttle",
    "not_selected",
    "no_instruction",
    "branch_resolving",
    "membar",
    "dispatch_stall",
    "drain",
    "tex_throttle",
)
STALLS = tuple(_STALL.format(reason) for reason in STALL_REASONS)
METRICS = (
    DRAM_READ,
    DRAM_WRITE,
    L1_HIT,
    L2_HIT,
    BANK_LD,
    BANK_ST,
    OCCUPANCY,
    INSTRUCTIONS,
    DURATION,
    *STALLS,
)
# Short names for the views.
LABELS: Mapping[str, str] = {
    DRAM_READ: "DRAM read B",
    DRAM_WRITE: "DRAM written B",
    L1_HIT: "L1 hit %",
    L2_HIT: "L2 hit %",
    BANK_LD: "smem bank conflicts (ld)",
    BANK_ST: "smem bank conflicts (st)",
    OCCUPANCY: "achieved occupancy %",
    INSTRUCTIONS: "instructions",
    DURATION: "duration ns (ncu)",
    **{s: f"stall {r} (per issue)" for s, r in zip(STALLS, STALL_REASONS)},
}


@dataclass(frozen=True)
class Moved:
    metric: str
    before: float
    after: float

    @property
    def label(self) -> str:
        return LABELS.get(self.metric, self.metric)

    def text(self) -> str:
        return f"{self.label} {format_number(self.before)}→{format_number(self.after)}"


def format_number(value: float) -> str:
    """Three significant digits with an SI prefix from 1,000 up (1820: 1.82k, where `.3g` wrote
    1.82e+03 beside 492k in one column)."""
    if value != 0 and (abs(value) >= 1e3 or abs(value) < 0.01):
        for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if abs(value) >= scale:
                return f"{value / scale:.3g}{prefix}"
        return f"{value:.2g}"
    return f"{value:.3g}"


def top_stalls(metrics: Mapping[str, float], count: int = 3) -> list[tuple[str, float]]:
    """The largest stall reasons: (reason, warps stalled per issued instruction)."""
    ranked = sorted((m for m in STALLS if m in metrics), key=lambda m: -metrics[m])
    return [(STALL_REASONS[STALLS.index(m)], metrics[m]) for m in ranked[:count]]


# --- the SASS diff --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SassDiff:
    """Two listings of one kernel, compactly: the instruction mix that moved and the changed
    lines (a unified diff, truncated)."""

    name: str
    before: str  # fingerprints
    after: str
    instructions: tuple[int, int]
    mix: tuple[tuple[str, int, int], ...]  # (mnemonic, before, after), largest moves first
    shared: tuple[tuple[str, int, int], ...]  # shared-memory ops (LDS, STS, ...), moved or not
    diff: tuple[str, ...]
    truncated: int  # diff lines left out

    def mix_text(self, limit: int = 8) -> str:
        """`LDS 2→4, STS 1→1 ...`: the mnemonics whose counts moved, largest first."""
        return ", ".join(f"{op} {a}→{b}" for op, a, b in self.mix[:limit])


# --- the kernel's change --------------------------------------------------------------------------


class Change(enum.StrEnum):
    CODE = "kernel code changed"
    LAUNCH = "launch changed"
    IDENTICAL = "kernel identical"
    UNKNOWN = "kernel not compared"


@dataclass(frozen=True)
class KernelChange:
    change: Change
    details: tuple[str, ...] = ()
    # Kernels whose SASS differs: (binary A, name in A, binary B, name in B), for the SASS diff.
    changed_code: tuple[tuple[str, str, str, str], ...] = ()

    def text(self) -> str:
        """One line: `kernel code changed: transpose_tiled<...>: SASS 1a2b→3c4d, ...`."""
        if self.change is Change.IDENTICAL:
            return (
                "kernel identical (same SASS, resources and launch): the change came from "
                "elsewhere (harness, host, card)"
            )
        return self.change.value + (": " + "; ".join(self.details) if self.details else "")

    def as_json(self) -> dict[str, Any]:
        return {"change": self.change.value, "details": list(self.details)}


@functools.lru_cache(maxsize=4096)
def short_name(mangled: str) -> str:
    """A readable kernel name: demangled by c++filt where there is one, without the
    parameter list; the mangled name otherwise."""
    from kernelwatch.tool import (
        ToolError,
    )
    from kernelwatch.tool import (
        run as run_tool,
    )  # (a subprocess: compare without records runs none)

    tool = shutil.which("c++filt")
    if tool is None or not mangled.startswith("_Z"):
        return mangled
    try:
        done = run_tool([tool, mangled], timeout=10, check=False)
    except ToolError:
        return mangled
    text = done.stdout.strip() or mangled
    return _without_parameters(text)


def _without_parameters(name: str) -> str:
    """`void f<int, 3>(int*, float)` -> `f<int, 3>`."""
    depth = 0
    for i, ch in enumerate(name):
        if ch in "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            name = name[:i]
            break
    return name.removeprefix("void ").strip()


# --- the explanation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Explanation:
    kernel: KernelChange | None = None
    before: Mapping[str, float] = field(default_factory=dict)  # ncu metrics, baseline
    after: Mapping[str, float] = field(default_factory=dict)  # ncu metrics, contender
    moved: tuple[Moved, ...] = ()
    sass_diffs: tuple[SassDiff, ...] = ()
    note: str = ""  # why no counters or no SASS diff
    seconds: float = 0.0  # spent on ncu and cuobjdump for this benchmark

    @property
    def profiled(self) -> bool:
        return bool(self.before and self.after)

    def kernel_text(self) -> str:
        return self.kernel.text() if self.kernel is not None else ""

    def counters_text(self) -> str:
        """`smem bank conflicts (ld) 0→1.05M, achieved occupancy % 91→88`, or why none."""
        if self.moved:
            return "; ".join(m.text() for m in self.moved)
        if self.profiled:
            return "no counter of the fixed set moved much"
        return self.note

    def line(self) -> str:
        """One line for the table: the kernel verdict, then the counters that moved."""
        parts = [p for p in (self.kernel_text(), self.counters_text()) if p]
        mixes = [f"{short_name(d.name)}: {d.mix_text(4)}" for d in self.sass_diffs if d.mix]
        if mixes:
            parts.append("SASS " + "; ".join(mixes))
        return " | ".join(parts)

    def as_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.kernel is not None:
            found["kernel"] = self.kernel.as_json()
        if self.before or self.after:
            found["counters"] = {
                "baseline": dict(self.before),
                "contender": dict(self.after),
                "moved": [
                    {
                        "metric": m.metric,
                        "label": m.label,
                        "baseline": m.before,
                        "contender": m.after,
                    }
                    for m in self.moved
                ],
                "top_stalls": {
                    "baseline": top_stalls(self.before),
                    "contender": top_stalls(self.after),
                },
            }
        if self.sass_diffs:
            found["sass_diff"] = [
                {
                    "kernel": d.name,
                    "baseline": d.before,
                    "contender": d.after,
                    "instructions": list(d.instructions),
                    "mix": [list(m) for m in d.mix],
                    "shared_ops": [list(m) for m in d.shared],
                    "diff": list(d.diff),
                    "diff_lines_left_out": d.truncated,
                }
                for d in self.sass_diffs
            ]
        if self.note:
            found["note"] = self.note
        if self.seconds:
            found["seconds"] = round(self.seconds, 2)
        return found
