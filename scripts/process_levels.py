"""How far a benchmark's processes sit apart, per run setting (scripts/gpu/interleaving_aa.sh;
docs/measurement.md, "An anchor's two processes"). The runs are grouped by card and by
random interleaving (the context's `kernelwatch_random_interleaving`); within a group, each
process's median of each benchmark is one level. Per family and group: the spread of the
levels (their standard deviation over their mean, median / p99 over the family), the steps
(levels more than 1 % above the median level, and the processes holding any), and the shift of
the not-interleaved group's median level against the interleaved one's on the same card.

    PYTHONPATH=tools python3 scripts/process_levels.py RUN.json ...
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict

import numpy as np

from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json

STEP = 0.01  # a level this far above the median level is a step (the slow mode is +2 %)
Levels = dict[str, dict[tuple[str, int], float]]  # benchmark -> (run, process) -> median


def levels(paths: list[str]) -> dict[tuple[str, str], Levels]:
    """(card, interleaved) -> benchmark -> each process's median real time."""
    times: dict[tuple[str, str], dict[str, dict[tuple[str, int], list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for path in paths:
        document = read_json(path)
        if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
            raise InputError(f'{path}: not a Google Benchmark result (no "benchmarks" list)')
        context = document.get("context")
        if not isinstance(context, dict):
            raise InputError(f"{path}: not a Google Benchmark result (no context)")
        group = (str(context.get("gpu_uuid")), str(context.get("kernelwatch_random_interleaving")))
        for row in document["benchmarks"]:
            process = row.get("kernelwatch_process")
            if row.get("run_type") != "aggregate" and isinstance(process, int):
                name = row.get("run_name", row.get("name"))
                times[group][name][(path, process)].append(row["real_time"])
    return {
        group: {
            name: {key: statistics.median(values) for key, values in found.items()}
            for name, found in benchmarks.items()
        }
        for group, benchmarks in times.items()
    }


def family(name: str) -> str:
    return name.split("/")[0]


def steps(level: dict[tuple[str, int], float]) -> dict[tuple[str, int], float]:
    """The processes whose level is more than STEP above the median level, and by how much."""
    middle = float(np.median(list(level.values())))
    return {key: value / middle - 1 for key, value in level.items() if value > middle * (1 + STEP)}


def table(group: Levels) -> dict[str, tuple[list[float], int, set[tuple[str, int]]]]:
    """family -> (each benchmark's spread of levels, steps, the processes holding a step)."""
    found: dict[str, tuple[list[float], int, set[tuple[str, int]]]] = {}
    for name, level in group.items():
        values = np.array(list(level.values()))
        spreads, count, slow = found.setdefault(family(name), ([], 0, set()))
        spreads.append(float(values.std(ddof=1) / values.mean()) if len(values) > 1 else 0.0)
        stepped = steps(level)
        found[family(name)] = (spreads, count + len(stepped), slow | stepped.keys())
    return found


def main(paths: list[str]) -> None:
    if not paths:
        raise InputError("usage: process_levels.py RUN.json ...")
    groups = levels(paths)
    print("| card | interleaved | family | benchmarks | processes | spread of levels, median / "
          "p99 | steps (> 1 %) | processes with a step |")  # fmt: skip
    print("| --- " * 8 + "|")
    for (card, interleaved), group in sorted(groups.items()):
        processes = len({key for level in group.values() for key in level})
        for name, (spreads, count, slow) in sorted(table(group).items()):
            print(
                f"| {card[:12]} | {interleaved} | {name} | {len(spreads)} | {processes} | "
                f"{100 * np.median(spreads):.2f} / {100 * np.percentile(spreads, 99):.2f} % | "
                f"{count} | {len(slow)} |"
            )
    print("\nSteps by benchmark: card, interleaved, name, processes above, the highest level")
    for (card, interleaved), group in sorted(groups.items()):
        for name, level in sorted(group.items()):
            above = steps(level).values()
            if above:
                print(f"{card[:12]} {interleaved} {name}: {len(above)}, +{100 * max(above):.1f} %")
    print("\nNot interleaved against interleaved, same card: the median level's shift")
    for card in sorted({card for card, _ in groups}):
        on, off = groups.get((card, "true")), groups.get((card, "false"))
        if not on or not off:
            continue
        shifts: dict[str, list[float]] = defaultdict(list)
        for name in on.keys() & off.keys():
            before, after = np.median(list(on[name].values())), np.median(list(off[name].values()))
            shifts[family(name)].append(float(after / before - 1))
        for name, values in sorted(shifts.items()):
            largest = max(values, key=abs)
            print(f"{card[:12]} {name}: median {100 * np.median(values):+.2f} %, "
                  f"largest {100 * largest:+.2f} % ({len(values)} benchmarks)")  # fmt: skip


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except InputError as exc:  # no runs, a missing file, not a result
        sys.exit(f"process_levels: {exc}")
