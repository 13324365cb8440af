#!/usr/bin/env python3
"""The run-to-run spread of `history changes` (changes.run_spread) against its candidates, on
simulated series: false changes and steps found, with and without one run far off. The figures
of docs/history.md, "One run far off".

    PYTHONPATH=tools python3 scripts/far_off_run_sim.py [--processes N] SCENARIO SEEDS LENGTH...

e.g. `odd_a 50 8 12 20 30` (a 12 % step, 1.5 % noise, one run 1.5x slower after it) or
`flat3 300 5 10 20 30` (flat, 3 % noise). Each series is drawn as tests/tools/test_changes.py's
make_history draws one; Otava's candidates are computed once per series, then the run-level
rules (changes.detect, its run_spread and far_off_run swapped) are applied with each spread and
with the far-off run in or out of the t-test. --processes: worker processes (default 2; 1: none).
"""

from __future__ import annotations

import collections
import math
import sys
from collections.abc import Callable
from multiprocessing import Pool

import numpy as np

from kernelwatch import changes
from kernelwatch.results import resolve_metric

ANALYSIS = changes.otava_analysis()
METRIC = resolve_metric("real_time")


def rms(dev: np.ndarray) -> float:
    f = len(dev) - 2
    return math.sqrt(float(np.sum(dev**2)) / f) if f > 0 else 0.0


def mad(dev: np.ndarray) -> float:
    # dev are already deviations from each side's median
    return 1.4826 * float(np.median(np.abs(dev))) if len(dev) else 0.0


def none_far_off(deviations: np.ndarray) -> int | None:
    """The t-test on every run's repetitions (before 2026-12-03): no run left out of it."""
    return None


ADOPTED = changes.run_spread
ADOPTED_FAR_OFF = changes.far_off_run
# name -> (the spread, the far-off run left out of the t-test: changes.far_off_run)
SPREADS: dict[str, tuple[Callable[[np.ndarray], float], Callable[[np.ndarray], int | None]]] = {
    "rms": (rms, none_far_off),  # before 2026-12-02
    "mad": (mad, none_far_off),
    "spread": (ADOPTED, none_far_off),  # 2026-12-02: the far-off run out of the spread only
    "adopted": (ADOPTED, ADOPTED_FAR_OFF),  # ... and out of the t-test (its mean)
}


def detect_all(
    series: changes.Series, threshold: float = 0.05
) -> dict[str, list[tuple[int, float]]]:
    """{rule name: [(boundary, ratio)]}: changes.detect with its run_spread and far_off_run
    swapped for each (Otava's windows computed once, shared by them)."""
    windows: dict = {}
    found = {}
    for name, (spread, far_off) in SPREADS.items():
        changes.run_spread = spread  # type: ignore[assignment]
        changes.far_off_run = far_off  # type: ignore[assignment]
        try:
            detected = changes.detect(series, METRIC, threshold, 0.05, ANALYSIS, windows)
        finally:
            changes.run_spread = ADOPTED  # type: ignore[assignment]
            changes.far_off_run = ADOPTED_FAR_OFF  # type: ignore[assignment]
        found[name] = [(change.index, change.ratio) for change in detected]
    return found


def make(medians, rng, noise, within=0.0005, reps=10):
    """As tests/tools/test_changes.py's make_history draws one benchmark."""
    values, offsets, runs = [], [], []
    for k, m in enumerate(medians):
        center = m * math.exp(rng.normal(0.0, noise))
        offsets.append(len(values))
        values += [center * math.exp(rng.normal(0.0, within)) for _ in range(reps)]
        runs.append(changes.SeriesRun(k, f"d{k}", f"c{k}", f"i{k}"))
    offsets.append(len(values))
    return changes.Series("gpu", "b", tuple(runs), np.asarray(values), np.asarray(offsets))


def task(args):
    scen, n, seed, noise, thr, step, odd, where = args
    rng = np.random.default_rng(seed)
    cut = n // 2
    med = [100.0] * n
    if step:
        med = [100.0] * cut + [100.0 * (1 + step)] * (n - cut)
    pos = None
    if odd:
        orng = np.random.default_rng(10_000 + seed)
        if where == "before":  # not one of the MIN_RUNS runs next to the step
            choices = list(range(0, cut - 2))
        elif where == "after":
            choices = list(range(cut + 2, n))
        else:  # anywhere
            choices = list(range(n))
        pos = int(orng.choice(choices))
        med[pos] *= odd
    s = make(med, rng, noise)
    found = detect_all(s, threshold=thr)
    res = {}
    for name, cs in found.items():
        hit = step and any(b == cut for b, _ in cs)
        near = step and any(abs(b - cut) <= 1 for b, _ in cs)
        other = sum(1 for b, _ in cs if not step or abs(b - cut) > 1)
        res[name] = (bool(hit), bool(near), other)
    return (scen, n), res


def main():
    arguments = sys.argv[1:]
    processes = 2
    if arguments[:1] == ["--processes"]:  # (--processes 1: in this process, one core)
        processes, arguments = int(arguments[1]), arguments[2:]
    scen = arguments[0]
    seeds = int(arguments[1])
    lengths = [int(x) for x in arguments[2:]]
    p = dict(
        flat15=(0.015, 0.05, 0, None, None),
        flat3=(0.03, 0.05, 0, None, None),
        flat15t3=(0.015, 0.03, 0, None, None),
        step15=(0.015, 0.05, 0.10, None, None),
        step3=(0.03, 0.05, 0.10, None, None),
        step3t10=(0.03, 0.10, 0.12, None, None),
        odd_b=(0.015, 0.05, 0.12, 1.5, "before"),
        odd_a=(0.015, 0.05, 0.12, 1.5, "after"),
        oddlow_b=(0.015, 0.05, 0.12, 1 / 1.5, "before"),
        oddlow_a=(0.015, 0.05, 0.12, 1 / 1.5, "after"),
        odd3_b=(0.03, 0.05, 0.12, 1.5, "before"),
        odd3_a=(0.03, 0.05, 0.12, 1.5, "after"),
        step12=(0.015, 0.05, 0.12, None, None),
    )
    flat_odd = {}
    for noise in (0.015, 0.03):
        for f in (1.1, 1.2, 1.5, 2.0, 1 / 1.5):
            flat_odd[f"flatodd{noise*100:g}x{f:.2f}"] = (noise, 0.05, 0, f, "any")
    p.update(flat_odd)
    p["flatodd3x1.50t10"] = (0.03, 0.10, 0, 1.5, "any")
    p["flat3t10"] = (0.03, 0.10, 0, None, None)
    noise, thr, step, odd, where = p[scen]
    jobs = [(scen, n, seed, noise, thr, step, odd, where) for n in lengths for seed in range(seeds)]
    tally = collections.defaultdict(lambda: collections.Counter())

    def count(key, res):
        for name, (hit, near, other) in res.items():
            t = tally[(key, name)]
            t["n"] += 1
            t["hit"] += hit
            t["near"] += near
            t["fa"] += other > 0

    if processes <= 1:
        for job in jobs:
            count(*task(job))
    else:
        with Pool(processes) as pool:
            for key, res in pool.imap_unordered(task, jobs, chunksize=4):
                count(key, res)
    for n in lengths:
        for name in SPREADS:
            t = tally[((scen, n), name)]
            print(
                f"{scen:14s} runs {n:3d} {name:10s} n={t['n']:4d} "
                f"exact {t['hit']:4d} ({t['hit']/t['n']:6.1%})  within1 {t['near']:4d}  "
                f"series with other change {t['fa']:4d} ({t['fa']/t['n']:6.1%})"
            )
    totals = collections.Counter()
    for name in SPREADS:
        t = collections.Counter()
        for n in lengths:
            t.update(tally[((scen, n), name)])
        print(
            f"{scen:14s} ALL      {name:10s} n={t['n']:4d} exact {t['hit']:4d} ({t['hit']/t['n']:6.1%}) other {t['fa']:4d} ({t['fa']/t['n']:6.1%})"
        )


if __name__ == "__main__":
    main()
