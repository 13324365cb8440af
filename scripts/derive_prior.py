#!/usr/bin/env python3
"""Derive the prior of levels.py (relative + absolute / time, per level) from real runs, and
print the table of measured spreads per level and family that docs/measurement.md shows.

    PYTHONPATH=tools python3 scripts/derive_prior.py RUN.json RUN.json [RUN.json ...]

Each file is one `kernelwatch run` (two processes or more) on one card of one host. The process
level is the spread of each run's per-process medians; the host level, the spread of the runs'
medians (the runs were made on different cards of different one-GPU hosts). Host-bound
benchmarks are left out: they do not fail against another host whatever their spread.
A constant is the 99th percentile of the spreads it must cover, rounded up: the relative part
from benchmarks of 100 us or more, the absolute part from the shorter ones' excess over it.
"""

from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

from kernelwatch import noise as noises
from kernelwatch.compare import HOST_BOUND_COUNTER
from kernelwatch.results import load

LONG_NS = 100_000.0


def _medians(path: str) -> tuple[dict[str, float], dict[str, float], set[str]]:
    """Per benchmark: its median, the spread of its per-process medians, host-bound or not."""
    result = load(path)
    measured = noises.measure(result, pool=False)
    times = result.columns["real_time"]
    flags = result.columns.get(HOST_BOUND_COUNTER)
    medians, spreads, host_bound = {}, {}, set()
    for k, name in enumerate(result.names):
        rows = slice(result.starts[k], result.starts[k] + result.counts[k])
        if not result.counts[k]:
            continue
        medians[name] = float(np.median(times[rows]))
        if np.isfinite(measured.between[k]):
            spreads[name] = float(measured.between[k])
        if flags is not None and (np.nan_to_num(flags[rows]) == 1).any():
            host_bound.add(name)
    return medians, spreads, host_bound


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(relative, absolute ns) covering the 99th percentile of the spreads."""
    spread = np.array([s for _, s in points])
    time = np.array([t for t, _ in points])
    long = spread[time >= LONG_NS]
    relative = float(np.quantile(long, 0.99)) if len(long) else float(np.quantile(spread, 0.99))
    excess = (spread - relative) * time
    short = excess[time < LONG_NS]
    absolute = float(np.quantile(short, 0.99)) if len(short) else 0.0
    return relative, max(absolute, 0.0)


def _family(name: str) -> str:
    return name.split("/", 1)[0]


def main(paths: list[str]) -> int:
    if len(paths) < 2:
        print("usage: derive_prior.py RUN.json RUN.json [...]", file=sys.stderr)
        return 2
    runs = [_medians(p) for p in paths]
    host_bound = set().union(*(r[2] for r in runs))
    names = sorted(set.intersection(*(set(r[0]) for r in runs)) - host_bound)
    process: list[tuple[float, float]] = []
    host: list[tuple[float, float]] = []
    by_family: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for name in names:
        medians = np.array([r[0][name] for r in runs])
        time = float(np.median(medians))
        for r in runs:
            if name in r[1]:
                process.append((time, r[1][name]))
                by_family[_family(name)]["process"].append(r[1][name])
        # a run's median's standard deviation across hosts, relative
        spread = float(np.std(medians, ddof=1) / np.mean(medians))
        host.append((time, spread))
        by_family[_family(name)]["host"].append(spread)
    print(
        f"{len(names)} benchmarks in all {len(paths)} runs ({len(host_bound)} host-bound left out)"
    )
    for level, points in (("process", process), ("host", host)):
        relative, absolute = _fit(points)
        print(f"{level:8s} p99: relative {relative:.4%}, absolute {absolute:.0f} ns")
    print("\n| family | benchmarks | process: median | p99 | host: median | p99 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for family, levels in sorted(by_family.items()):
        p, h = np.array(levels["process"]), np.array(levels["host"])
        print(
            f"| {family} | {len(h)} | {np.median(p):.3%} | {np.quantile(p, 0.99):.3%} | "
            f"{np.median(h):.3%} | {np.quantile(h, 0.99):.3%} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
