"""Where a run of the suite spends its wall time, per family, from the harness's timeline.

    KERNELWATCH_TIMELINE=DIR python3 -m kernelwatch run --build-dir build ...   (DIR exists)
    python3 scripts/gpu/wall_breakdown.py DIR [--wall SECONDS] [--json OUT.json]

Each benchmark process appends its phase marks to DIR/<pid>.jsonl (bench/harness: timeline.hpp).
This reads them all and prints, per family (one binary each) and for the whole run, the seconds
spent in each phase:

  start        exec to main: loading, static initialisation, registration
  context      cudaSetDevice and the CUDA context
  fingerprint  the context's keys, the host's and the GPU's fingerprints (NVML)
  ceiling      the copy ceiling, measured once per process
  setup        a repetition's set-up in the benchmark body: allocation, inputs, host buffers
  check        the first launch and, once per instance and process, the correctness check
  warmup       the warm-up launches and the kernel record
  samples      the kept samples' own GPU time (what the median is taken from)
  flush_hold   GPU time of the sampling batches beyond the samples: L2 flushes, the blocking
               kernel, clock probes, set-aside and calibration batches
  host_gaps    the rest of the sampling: launching, synchronising, statistics
  teardown     freeing the repetition's buffers
  gbench       Google Benchmark between repetitions, and writing the results
  shutdown     after the last benchmark, to the end of main

Processes whose arguments carry a --benchmark_filter are counted apart as re-runs (top-ups and
confirming re-runs, which `run` filters to the benchmarks concerned). With --wall, the run's
whole wall time (e.g. its `kernelwatch_run_seconds`), the rest is the runner's own: listing,
starting processes, reading and comparing results. Processes of one GPU are assumed to run one
after another.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PHASES = (
    "start",
    "context",
    "fingerprint",
    "ceiling",
    "setup",
    "check",
    "warmup",
    "samples",
    "flush_hold",
    "host_gaps",
    "teardown",
    "gbench",
    "shutdown",
)
# process-level marks, in order: each phase ends at its mark
_PROCESS_MARKS = (
    ("context", "context"),
    ("fingerprints", "fingerprint"),
    ("copy_ceiling", "ceiling"),
)


def read_process(path: Path) -> list[dict[str, Any]]:
    marks = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return sorted(marks, key=lambda m: m["t"])


def family_of(marks: Iterable[dict[str, Any]]) -> str | None:
    for mark in marks:
        if "instance" in mark:
            return str(mark["instance"]).split("/", 1)[0]
    return None


def breakdown(marks: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds per phase of one process's marks."""
    out: dict[str, float] = defaultdict(float)
    by_phase = {m["phase"]: m for m in marks if "instance" not in m}
    main = by_phase.get("main")
    if main is None:
        return out
    out["start"] = max(float(main.get("process_age_s", 0.0)), 0.0)
    previous = main["t"]
    for mark, phase in _PROCESS_MARKS:
        if mark in by_phase:
            out[phase] += by_phase[mark]["t"] - previous
            previous = by_phase[mark]["t"]
    # Everything from here to the first benchmark, between benchmarks and after the last one
    # until the results are written is Google Benchmark's (and the monitors' start).
    current: dict[str, dict[str, Any]] = {}
    for mark in marks:
        phase, instance = mark["phase"], mark.get("instance")
        if instance is None:
            continue
        if phase == "run_start":
            out["gbench"] += mark["t"] - previous
            current = {"run_start": mark}
            continue
        current[phase] = mark
        if phase == "run_end":
            _add_run(out, current)
            previous = mark["t"]
            current = {}
    if "benchmarks_done" in by_phase:
        out["gbench"] += by_phase["benchmarks_done"]["t"] - previous
        previous = by_phase["benchmarks_done"]["t"]
    if "end" in by_phase:
        out["shutdown"] += by_phase["end"]["t"] - previous
    return out


def _add_run(out: dict[str, float], run: dict[str, dict[str, Any]]) -> None:
    order = ["run_start", "measure_start", "verified", "warmed", "sampled", "run_end"]
    seen = [name for name in order if name in run]
    spans = {later: run[later]["t"] - run[earlier]["t"] for earlier, later in zip(seen, seen[1:])}
    out["setup"] += spans.get("measure_start", 0.0)
    out["check"] += spans.get("verified", 0.0)
    out["warmup"] += spans.get("warmed", 0.0)
    out["teardown"] += spans.get("run_end", 0.0)
    sampled = run.get("sampled")
    if sampled is not None:
        wall = spans.get("sampled", 0.0)
        samples, gpu = float(sampled["sample_s"]), float(sampled["batch_gpu_s"])
        out["samples"] += samples
        out["flush_hold"] += max(gpu - samples, 0.0)
        out["host_gaps"] += max(wall - gpu, 0.0)
        out["repetitions"] += 1


def collect(folder: Path) -> dict[tuple[str, str], dict[str, float]]:
    """(family, "first" or "re-run") -> phase -> seconds, with "processes" and "repetitions"."""
    table: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for path in sorted(folder.glob("*.jsonl")):
        marks = read_process(path)
        main = next((m for m in marks if m["phase"] == "main"), {})
        if "--benchmark_list_tests" in str(main.get("args", "")):
            key = ("(listing)", "first")
        else:
            family = family_of(marks) or "(no benchmark)"
            rerun = "--benchmark_filter" in str(main.get("args", ""))
            key = (family, "re-run" if rerun else "first")
        row = table[key]
        for phase, seconds in breakdown(marks).items():
            row[phase] += seconds
        row["processes"] += 1
    return table


def render(table: dict[tuple[str, str], dict[str, float]], wall: float | None) -> str:
    header = ["family", "pass", "proc", "reps", "wall s", *PHASES, "samples %"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    total: dict[str, float] = defaultdict(float)
    for (family, kind), row in sorted(table.items()):
        seconds = sum(row[p] for p in PHASES)
        for key, value in row.items():
            total[key] += value
        lines.append(_line(family, kind, row, seconds))
    processes_total = sum(total[p] for p in PHASES)
    lines.append(_line("all", "", total, processes_total))
    if wall is not None:
        lines.append(
            f"\nrun wall {wall:.1f} s; in benchmark processes {processes_total:.1f} s; "
            f"the runner's own (listing, starting processes, reading, comparing): "
            f"{wall - processes_total:.1f} s"
        )
    return "\n".join(lines)


def _line(family: str, kind: str, row: dict[str, float], seconds: float) -> str:
    share = 100 * row["samples"] / seconds if seconds > 0 else 0.0
    cells = [family, kind, f"{row['processes']:.0f}", f"{row['repetitions']:.0f}", f"{seconds:.1f}"]
    cells += [f"{row[p]:.1f}" for p in PHASES]
    cells.append(f"{share:.0f}")
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--wall", type=float, help="the run's whole wall time, seconds")
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    args = parser.parse_args(argv)
    table = collect(args.folder)
    if not table:
        print(f"wall_breakdown: no timeline files (*.jsonl) in {args.folder}", file=sys.stderr)
        return 2
    print(render(table, args.wall))
    if args.json:
        rows = [{"family": f, "pass": k, **dict(row)} for (f, k), row in sorted(table.items())]
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
