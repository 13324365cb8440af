"""`history changes`' run-to-run spread and one far-off run: a run 1.5x off (a throttled
machine) inflated the RMS of the run medians' deviations so much that a real 12 % step stayed
hidden for as long as that run was in the series; one far-off run in a flat series is still no
change (docs/history.md, "Run-to-run noise")."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from kernelwatch import changes, history
from test_trends_input import build  # noqa: F401 (a fixture)

pytest.importorskip("scipy", reason="scipy is not installed (the history extra)")

NAME = "BM_A"


def found_in(db: Path) -> list[tuple[int, bool]]:
    with history.database(db) as connection:
        return [(c.index, c.regression) for c in changes.find_changes(connection)]


@pytest.mark.parametrize(
    "medians, expected",
    [
        # a 12 % regression, a throttled run (1.5x slower) three runs after it
        ([100.0] * 6 + [112.0] * 3 + [168.0] + [112.0] * 2, [(6, True)]),
        # a 12 % improvement, a throttled run before it
        ([112.0] + [168.0] + [112.0] * 4 + [100.0] * 6, [(6, False)]),
        # a 12 % regression, one run 1.5x faster (a lone odd process) before it
        ([100.0] * 2 + [66.7] + [100.0] * 5 + [112.0] * 8, [(8, True)]),
    ],
)
def test_one_far_off_run_does_not_hide_a_step(build, medians, expected) -> None:
    """Hidden before: the RMS of the run medians' deviations was ~0.4 / sqrt(n - 2) with one
    run at 1.5x, over twice that a 12 % step needed to be below (~0.11) at any length."""
    assert found_in(build(medians)) == expected


def series(medians: Sequence[float], run_noise: float, seed: int) -> changes.Series:
    """A series as the history gives it (one benchmark on one GPU), without a database."""
    rng = np.random.default_rng(seed)
    values: list[float] = []
    offsets = [0]
    for median in medians:
        center = median * math.exp(rng.normal(0.0, run_noise))
        values += [center * math.exp(rng.normal(0.0, 0.0005)) for _ in range(10)]
        offsets.append(len(values))
    runs = tuple(changes.SeriesRun(k, f"2026-03-{k + 1:02d}", None) for k in range(len(medians)))
    return changes.Series("gpu", NAME, runs, np.asarray(values), np.asarray(offsets))


@pytest.mark.parametrize("odd", [1.5, 1 / 1.5])
def test_one_far_off_run_in_a_flat_series_is_no_change(odd) -> None:
    """A flat series with one run far off, anywhere (also with MIN_RUNS runs per side, where
    the others' spread is itself a guess), with 1.5 % run-to-run noise: no change, as before."""
    analysis = changes.otava_analysis()
    time = changes.series_metric("real_time")
    for runs in (4, 5, 6, 8, 12):
        for place in range(runs):
            medians = [100.0] * runs
            medians[place] *= odd
            flat = series(medians, 0.015, seed=100 * runs + place)
            assert changes.detect(flat, time, 0.05, 0.05, analysis) == [], (runs, place)


def test_the_spread_leaves_out_one_far_off_run_only() -> None:
    rng = np.random.default_rng(5)
    usual = rng.normal(0.0, 0.02, 10)
    rms = math.sqrt(float(np.sum(usual**2)) / 8)
    assert changes.run_spread(usual) == pytest.approx(rms)  # no far-off run: the RMS
    odd = np.append(usual, math.log(1.5))
    rest = math.sqrt(float(np.sum(usual**2)) / 8)  # the others, less one freedom more
    assert changes.run_spread(odd) == pytest.approx(rest)
    # two far-off runs are a spread, not one odd process
    two = np.append(odd, -math.log(1.5))
    assert changes.run_spread(two) == pytest.approx(math.sqrt(float(np.sum(two**2)) / 10))
    # too few runs to tell one far-off run from the spread: the RMS
    few = np.array([0.01, -0.01, 0.005, -0.004, math.log(1.5)])
    assert changes.run_spread(few) == pytest.approx(math.sqrt(float(np.sum(few**2)) / 3))
