#!/usr/bin/env python3
"""How many shared benchmarks tell a card's kind (kinds.MIN_SHARED), and which: the shape
distance between a pooled baseline's runs on random subsets of N benchmarks and on each family
alone, within a kind and across kinds (docs/measurement.md, "Kinds of card").

    PYTHONPATH=tools python3 scripts/kind_subsets.py baselines/nvidia-h200-sm90/result.json.gz
"""

from __future__ import annotations

import sys

import numpy as np

from kernelwatch import kinds
from kernelwatch import noise as noises
from kernelwatch.errors import InputError
from kernelwatch.loading import load

DRAWS = 400
SIZES = (5, 10, 15, 20, 30, 40, 60)


def distances(medians: np.ndarray, pairs: list[tuple[int, int]], cols: np.ndarray) -> np.ndarray:
    return np.array([kinds.shape_distance(medians[i, cols], medians[j, cols]) for i, j in pairs])


def main(path: str) -> int:
    result = load(path)
    units = noises.row_units(result)
    if units is None:
        raise InputError(f"{path}: not a baseline pooled from several runs")
    grouped = kinds.of_runs(result, units[0])
    medians, of_run = grouped.medians, grouped.of_run
    pairs = [(i, j) for i in range(len(of_run)) for j in range(i + 1, len(of_run))]
    within = [(i, j) for i, j in pairs if of_run[i] == of_run[j]]
    across = [(i, j) for i, j in pairs if of_run[i] != of_run[j]]
    if not within or not across:
        raise InputError(f"{path}: its runs are not of two kinds or more, with two of one kind")
    every = np.arange(medians.shape[1])
    print(
        f"{len(of_run)} runs, kinds {np.bincount(of_run).tolist()}, {len(every)} benchmarks: "
        f"within a kind at most {distances(medians, within, every).max():.2%}, across kinds "
        f"at least {distances(medians, across, every).min():.2%}"
    )
    kinds.MIN_SHARED = 1  # (the subsets below are what is measured)
    rng = np.random.default_rng(0)
    for size in SIZES:
        apart = alike = 0
        for _ in range(DRAWS):
            cols = rng.choice(len(every), size, replace=False)
            apart += int(np.sum(distances(medians, within, cols) > kinds.KIND_DISTANCE))
            alike += int(np.sum(distances(medians, across, cols) <= kinds.KIND_DISTANCE))
        print(
            f"N = {size:3d}: one kind read as two {apart / (DRAWS * len(within)):.2%}, "
            f"two kinds read as one {alike / (DRAWS * len(across)):.2%}"
        )
    family = np.array([name.split("/", 1)[0] for name in grouped.names])
    for name in sorted(set(family)):
        cols = np.flatnonzero(family == name)
        near = distances(medians, across, cols)
        print(
            f"{name:14s} {len(cols):3d} benchmarks: within at most "
            f"{distances(medians, within, cols).max():.2%}, across at least {near.min():.2%}, "
            f"two kinds read as one {np.mean(near <= kinds.KIND_DISTANCE):.0%}"
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: kind_subsets.py BASELINE_RESULT", file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1]))
    except InputError as exc:
        print(f"kind_subsets.py: error: {exc}", file=sys.stderr)
        sys.exit(2)
