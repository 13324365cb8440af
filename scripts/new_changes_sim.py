"""How often a nightly lists one step: `history changes --new-since` against the two-day window.

240 series grow one run a night (a 10 % step after 5 or 10 runs; 1.5 % or 3 % run-to-run noise,
0.05 % within a run, 10 repetitions; threshold 5 %). Each night lists what is new, three ways:
--new-since (every earlier state of the series), the state at WHEN alone, and --since two days
ago. Printed: per noise and way, how many series had the step (within 3 runs) listed 0, 1, 2 or
3+ times. docs/history.md ("New changes") quotes the result. About two minutes on one core.

    PYTHONPATH=tools python3 scripts/new_changes_sim.py
"""

from __future__ import annotations

import collections
import math

import numpy as np

from kernelwatch import changes
from kernelwatch.results import resolve_metric

ANALYSIS = changes.otava_analysis()
METRIC = resolve_metric("real_time")


def day(k: int, hour: str) -> str:
    return f"2026-{1 + k // 28:02d}-{1 + k % 28:02d}T{hour}:00:00+00:00"


def series(medians: list[float], rng: np.random.Generator, noise: float) -> changes.Series:
    values: list[float] = []
    offsets: list[int] = []
    runs = []
    for k, median in enumerate(medians):
        center = median * math.exp(rng.normal(0, noise))
        offsets.append(len(values))
        values += [center * math.exp(rng.normal(0, 0.0005)) for _ in range(10)]
        runs.append(changes.SeriesRun(k, day(k, "03"), f"c{k}", day(k, "05")))
    offsets.append(len(values))
    return changes.Series("gpu", "bench", tuple(runs), np.asarray(values), np.asarray(offsets))


def detect(s: changes.Series) -> list[changes.Change]:
    return changes.detect(s, METRIC, 0.05, 0.05, ANALYSIS)


def main() -> None:
    counts: collections.Counter[tuple[float, str, int]] = collections.Counter()
    for noise in (0.015, 0.03):
        for step in (5, 10):
            for seed in range(60):
                total = step + 10
                full = series([100.0] * step + [110.0] * 10, np.random.default_rng(seed), noise)
                listed = {"new-since": 0, "WHEN alone": 0, "since 2 days": 0}
                for n in range(1, total + 1):
                    now = changes.as_of(full, day(n - 1, "05"))
                    found = detect(now)
                    when = day(n - 1, "02")  # the workflow run is made before the night's run

                    def near(cs: list[changes.Change]) -> int:
                        return sum(1 for c in cs if abs(c.index - step) <= 3)

                    listed["new-since"] += near(changes.unseen(now, found, when, detect))
                    position = {run.id: k for k, run in enumerate(now.runs)}
                    before = detect(changes.as_of(full, when))
                    listed["WHEN alone"] += near(changes.unmatched(found, before, position))
                    listed["since 2 days"] += near([c for c in found if c.index >= n - 3])
                for way, times in listed.items():
                    counts[(noise, way, min(times, 3))] += 1
    for (noise, way, times), series_count in sorted(counts.items()):
        print(
            f"noise {noise:.1%}  {way:13s}  listed {times}{'+' if times == 3 else ''}: "
            f"{series_count}"
        )


if __name__ == "__main__":
    main()
