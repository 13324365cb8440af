#!/usr/bin/env python3
"""Derive the prior of levels.py (relative + absolute / time, per level) from real runs, and
print the table of measured spreads per level and family that docs/measurement.md shows.

    PYTHONPATH=tools python3 scripts/derive_prior.py RUN.json RUN.json [RUN.json ...]

Each file is one `kernelwatch run` (two processes or more) on one card of one host. The process
level is the spread of each run's per-process medians; the host level, the spread of the runs'
medians (the runs were made on different cards of different one-GPU hosts); the kind level, the
spread of the runs' medians around the mean of their kind of card (kinds.py), pooled. Host-bound
benchmarks are left out: they do not fail against another host whatever their spread.
A constant is the 99th percentile of the spreads it must cover, rounded up: the relative part
from benchmarks of 100 us or more, the absolute part from the shorter ones' excess over it. With
two kinds or more, the prior for a card of a kind the baseline never held: half the widest gap
between a run and a run of another kind, the largest over the benchmarks (a limit is twice a
spread; a baseline of one run is such a run, and a pooled one's mean lies inside the gap).
"""

from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

from kernelwatch import kinds
from kernelwatch import noise as noises
from kernelwatch.loading import load
from kernelwatch.results import HOST_BOUND_COUNTER

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


def _fit(points: list[tuple[float, float]], quantile: float = 0.99) -> tuple[float, float]:
    """(relative, absolute ns) covering that quantile of the spreads."""
    spread = np.array([s for _, s in points])
    time = np.array([t for t, _ in points])
    long = spread[time >= LONG_NS]
    source = long if len(long) else spread
    relative = float(np.quantile(source, quantile))
    excess = (spread - relative) * time
    short = excess[time < LONG_NS]
    absolute = float(np.quantile(short, quantile)) if len(short) else 0.0
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
    kind: list[tuple[float, float]] = []
    unseen_kind: list[tuple[float, float]] = []
    medians_of_run = np.array([[r[0][n] for n in names] for r in runs])
    kind_of_run = kinds.group(medians_of_run)
    kinds_seen = int(kind_of_run.max()) + 1
    kind_dof = len(runs) - kinds_seen
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
        if kind_dof > 0:  # pooled around each kind's mean
            logs = np.log(medians)
            centred = logs - np.array([logs[kind_of_run == k].mean() for k in kind_of_run])
            within_kind = float(np.sqrt(np.sum(centred**2) / kind_dof))
            kind.append((time, within_kind))
            by_family[_family(name)]["kind"].append(within_kind)
        if kinds_seen > 1:  # each run against every run of another kind, halved: a limit is 2x it
            logs = np.log(medians)
            gaps = np.abs(logs[:, None] - logs[None, :])[kind_of_run[:, None] != kind_of_run]
            unseen_kind.append((time, float(gaps.max()) / 2.0))
    print(
        f"{len(names)} benchmarks in all {len(paths)} runs ({len(host_bound)} host-bound left out)"
    )
    print(f"kinds of card: {kind_of_run.tolist()} (kinds.py), {kind_dof} degrees of freedom")
    for level, points in (("process", process), ("kind", kind), ("host", host)):
        if not points:
            continue
        relative, absolute = _fit(points)
        print(f"{level:8s} p99: relative {relative:.4%}, absolute {absolute:.0f} ns")
    if unseen_kind:
        # Kinds differ systematically, the same on every card of a kind: a percentile would
        # leave known false alarms on every card of an unseen kind, so the largest gap is used.
        relative, absolute = _fit(unseen_kind, quantile=1.0)
        print(f"unseen kind, largest: relative {relative:.4%}, absolute {absolute:.0f} ns")
    print(
        "\n| family | benchmarks | process: median | p99 | kind: median | p99 | host: median | p99 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for family, levels in sorted(by_family.items()):
        cells = []
        for level in ("process", "kind", "host"):
            v = np.array(levels[level])
            cells += [f"{np.median(v):.3%}", f"{np.quantile(v, 0.99):.3%}"] if len(v) else ["", ""]
        print(f"| {family} | {len(levels['host'])} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
