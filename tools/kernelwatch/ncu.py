"""Nsight Compute (`ncu`) on one benchmark: a small fixed metric set of the kernels it launches,
and which of those metrics moved most between two builds.

ncu runs the benchmark binary with one repetition and a short sampling time, profiles only the
benchmark's own kernels (their mangled names, from the kernel records) and only their first
launches (the correctness launch: the same kernel and configuration as the timed ones, after
setup), with `--clock-control none` so that the clocks stay as the GPU sets them. Its report is
exported, then read back with `--csv --page raw --print-units base` (one row per profiled
launch, the metrics as columns, the units in the second row).
"""

from __future__ import annotations

import csv
import io
import math
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kernelwatch import runner, tool
from kernelwatch.explanation import DURATION, METRICS, STALLS, Moved
from kernelwatch.sass import find_tool

# Percentages move by points, the rest by ratio; below these a move is not shown.
_MIN_POINTS = 2.0
_MIN_RATIO = 1.1
_ID_COLUMN = "ID"
_NAME_COLUMN = "Kernel Name"


class NcuUnavailable(Exception):
    """ncu is missing, or refuses to profile here (permissions, no GPU); one line."""


@dataclass(frozen=True)
class Profile:
    """The metrics of one benchmark's kernels on one side, summed over its kernels (rates and
    percentages: of the longest kernel)."""

    metrics: Mapping[str, float]
    kernels: tuple[str, ...] = ()
    seconds: float = 0.0


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text in ("n/a", "N/A"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_raw_csv(text: str) -> list[dict[str, object]]:
    """ncu's `--csv --page raw` output: one dict per profiled launch, "Kernel Name" and the
    metric columns (numbers; None for n/a). Lines before the header (`==PROF==` messages) and
    the units row (its "ID" cell empty) are skipped."""
    lines = text.splitlines()
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if line.startswith((f'"{_ID_COLUMN}"', f"{_ID_COLUMN},"))
        ),
        None,
    )
    if start is None:
        return []
    reader = csv.reader(io.StringIO("\n".join(lines[start:])))
    header = next(reader)
    rows: list[dict[str, object]] = []
    for cells in reader:
        if len(cells) != len(header) or not cells[0].strip():
            continue  # the units row, a message line
        row: dict[str, object] = {}
        for column, cell in zip(header, cells):
            if column == _NAME_COLUMN:
                row[column] = cell
            elif "__" in column:
                row[column] = _number(cell)
        rows.append(row)
    return rows


def summarise(rows: Sequence[Mapping[str, object]]) -> dict[str, float]:
    """One benchmark's launches as one set of metrics: counts (bytes, conflicts,
    instructions, duration) summed; percentages and ratios taken from the longest launch."""
    if not rows:
        return {}
    longest = max(rows, key=lambda r: _as_float(r.get(DURATION)) or 0.0)
    out: dict[str, float] = {}
    columns = {c for r in rows for c in r if "__" in c}
    for column in sorted(columns):
        if column.endswith((".pct", ".ratio")) or "pct_of" in column:
            value = _as_float(longest.get(column))
            if value is not None:
                out[column] = value
        else:
            values = [v for v in (_as_float(r.get(column)) for r in rows) if v is not None]
            if values:
                out[column] = math.fsum(values)
    return out


def _as_float(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def moved_most(
    before: Mapping[str, float], after: Mapping[str, float], limit: int = 5
) -> list[Moved]:
    """The metrics that moved most, largest first: percentages by points (at least 2), the
    rest by ratio (at least 1.1x; a move from zero counts as large). Stall reasons are shown
    only when they moved into or out of the top three of either side."""
    top = _top_stalls(before) | _top_stalls(after)
    scored: list[tuple[float, Moved]] = []
    for metric in before.keys() & after.keys():
        a, b = before[metric], after[metric]
        if metric in STALLS and metric not in top:
            continue
        if metric.endswith(".pct") or "pct_of" in metric:
            points = abs(b - a)
            if points >= _MIN_POINTS:
                scored.append((points / 10.0, Moved(metric, a, b)))
            continue
        low, high = sorted((abs(a), abs(b)))
        if high == 0:
            continue
        if low == 0:
            # From (about) nothing: as large as a 100x move once there is something.
            score = math.log(100.0) if high >= 1 else 0.0
        else:
            if high / low < _MIN_RATIO:
                continue
            score = math.log(high / low)
        if score > 0:
            scored.append((score, Moved(metric, a, b)))
    scored.sort(key=lambda s: (-s[0], s[1].metric))
    return [m for _, m in scored[:limit]]


def _top_stalls(metrics: Mapping[str, float], count: int = 3) -> set[str]:
    ranked = sorted((m for m in STALLS if m in metrics), key=lambda m: -metrics[m])
    return set(ranked[:count])


# --- running ncu ------------------------------------------------------------------------------


def find_ncu() -> str | None:
    found = find_tool("ncu")
    if found:
        return found
    candidates = sorted(Path("/opt/nvidia/nsight-compute").glob("*/ncu"), reverse=True)
    return str(candidates[0]) if candidates else None


@dataclass(frozen=True)
class Target:
    """One benchmark to profile on one side."""

    binary: Path
    run_name: str
    kernels: tuple[str, ...]  # mangled names it launches (from its kernel record)
    extra_args: tuple[str, ...] = field(default=())


def command(ncu: str, target: Target, export: Path) -> list[str]:
    pattern = "|".join(runner.ere_escape(k) for k in dict.fromkeys(target.kernels))
    return [
        ncu,
        "--clock-control",
        "none",  # never change the GPU's clocks
        "--metrics",
        ",".join(METRICS),
        "--kernel-name-base",
        "mangled",
        "--kernel-name",
        f"regex:^({pattern})$",
        "--launch-count",
        str(len(target.kernels)),
        "--export",
        str(export),
        "--force-overwrite",
        str(target.binary),
        f"--benchmark_filter={runner.names_filter([target.run_name])}",
        "--benchmark_repetitions=1",
        "--kernelwatch_max_time=0.01",
        "--benchmark_enable_random_interleaving=false",
        *target.extra_args,
    ]


def profile(ncu: str, target: Target, timeout: float) -> Profile:
    """Profile `target`; NcuUnavailable when ncu cannot profile at all (then no other call
    will), RuntimeError for this benchmark alone."""
    started = time.monotonic()
    deadline = started + timeout
    with tempfile.TemporaryDirectory(prefix="kernelwatch-ncu-") as tmp:
        export = Path(tmp, "profile.ncu-rep")
        done = _run(command(ncu, target, export), timeout)
        said = done.stdout + "\n" + done.stderr
        if "ERR_NVGPUCTRPERM" in said or "permission" in said.lower() and done.status != 0:
            raise NcuUnavailable(
                "ncu is not permitted to read the GPU's performance counters here "
                "(ERR_NVGPUCTRPERM: needs root or NVreg_RestrictProfilingToAdminUsers=0)"
            )
        if not export.is_file():
            line = _last(said, "==ERROR==") or _last(said) or f"exit status {done.status}"
            raise RuntimeError(f"ncu wrote no report: {line}")
        raw = _run(
            [ncu, "--import", str(export), "--csv", "--page", "raw", "--print-units", "base"],
            deadline - time.monotonic(),  # what is left: the import took a whole budget more
        )
    try:
        rows = parse_raw_csv(raw.stdout)
    except csv.Error as exc:  # a cell past csv's 128 KiB limit (a kernel name), a broken quote
        raise RuntimeError(f"ncu's CSV could not be read: {exc}") from None
    if not rows:
        raise RuntimeError("ncu profiled no kernel of the benchmark")
    metrics = summarise(rows)
    if not metrics:  # every cell n/a (a metric this GPU or ncu does not have): say so
        raise RuntimeError("ncu measured none of the metrics (n/a) for the benchmark's kernels")
    return Profile(
        metrics,
        tuple(str(r.get(_NAME_COLUMN, "")) for r in rows),
        time.monotonic() - started,
    )


def _run(argv: list[str], timeout: float) -> tool.Finished:
    limit = max(1.0, timeout)
    try:
        return tool.run(argv, timeout=limit, check=False)
    except tool.ToolError as exc:
        if exc.failure == "cannot-run":
            raise NcuUnavailable(f"cannot run ncu: {exc.reason}") from None
        raise RuntimeError(f"ncu did not finish in {limit:.0f} s (the budget)") from None


def _last(text: str, prefix: str = "") -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith(prefix)]
    return lines[-1] if lines else ""
