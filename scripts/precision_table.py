"""The same-card precision of runs (scripts/gpu/precision.sh): per family, the spread between
a benchmark's processes (|median of process 1 - median of process 2| / their median, the two
rounds every benchmark has; top-ups add processes to the imprecise ones only, and a range over
six processes is wider than over two), median / p99 over the family's benchmarks; then the
median sensitivity (the smallest slowdown caught with 90 % power) of comparing each run with
a run like it on the same card (`compare RUN RUN`: the process level, both sides that run's
spread), and of a run against the first whose label starts the same ("after, 2nd" against
"after, 1st": an A/A).

    PYTHONPATH=tools python3 scripts/precision_table.py LABEL=RUN.json ...
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json

FAMILIES = ("coalescing", "transpose", "reduction", "matmul", "shared_banks", "occupancy",
            "local_memory", "probe", "transfers")  # fmt: skip


USAGE = "usage: precision_table.py LABEL=RUN.json [LABEL=RUN.json ...]"


def checked(path: str) -> dict:
    """The result at `path`; InputError where it is none."""
    document = read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise InputError(f'{path}: not a Google Benchmark result (no "benchmarks" list)')
    if not isinstance(document.get("context"), dict):
        raise InputError(f"{path}: not a Google Benchmark result (no context)")
    return document


def process_spreads(document: dict) -> dict[str, list[float]]:
    times: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in document["benchmarks"]:
        if row.get("run_type") != "aggregate" and row.get("kernelwatch_process") in (1, 2):
            times[row["run_name"]][row["kernelwatch_process"]].append(row["real_time"])
    spreads: dict[str, list[float]] = defaultdict(list)
    for name, processes in times.items():
        if len(processes) == 2:
            first, second = (statistics.median(processes[k]) for k in (1, 2))
            spreads[name.split("/")[0]].append(abs(first - second) / ((first + second) / 2))
    return spreads


def sensitivities(baseline: str, contender: str) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "compare.json"
        done = subprocess.run([sys.executable, "-m", "kernelwatch", "compare", baseline, contender,
                        "--json", str(out)], check=False, capture_output=True,
                       text=True)  # fmt: skip
        if not out.exists():  # compare refused the input (its exit 2): say why
            lines = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
            raise InputError(f"compare {baseline} {contender}: {lines[-1]}")
        rows = json.loads(out.read_text())["benchmarks"]
    found: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row.get("sensitivity") is not None:
            found[row["name"].split("/")[0]].append(row["sensitivity"])
    return found


def line(label: str, values: dict[str, list[float]], cell) -> str:
    every = [v for family in values.values() for v in family]
    cells = [cell(values[f]) if values.get(f) else "-" for f in FAMILIES]
    return f"| {label} | " + " | ".join(cells) + f" | {cell(every)} |"


def main(argv: list[str]) -> None:
    if not argv or any("=" not in arg for arg in argv):
        raise InputError(USAGE)
    runs = dict(arg.split("=", 1) for arg in argv)
    documents = {label: checked(path) for label, path in runs.items()}
    print("| | " + " | ".join(FAMILIES) + " | all |\n" + "| --- " * (len(FAMILIES) + 2) + "|")
    spread = lambda v: f"{100 * np.median(v):.2f} / {100 * np.percentile(v, 99):.2f} %"  # noqa
    median = lambda v: f"{100 * np.median(v):.2f} %"  # noqa: E731
    for label in runs:
        print(
            line(
                f"{label}: process spread, median / p99", process_spreads(documents[label]), spread
            )
        )
    for label, path in runs.items():
        print(line(f"{label}: median sensitivity", sensitivities(path, path), median))
    firsts: dict[str, tuple[str, str]] = {}  # "after, 2nd" against "after, 1st": an A/A
    for label, path in runs.items():
        kind = label.split(",")[0]
        if kind in firsts:
            first_label, first = firsts[kind]
            print(line(f"{label} against {first_label}", sensitivities(first, path), median))
        firsts.setdefault(kind, (label, path))
    for label in runs:
        context = documents[label]["context"]
        print(
            f"{label}: {context.get('kernelwatch_git_commit', '')[:7]} on {context.get('gpu_uuid')}, "
            f"{context.get('kernelwatch_run_seconds')} s of run time"
        )


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except InputError as exc:  # no runs, a missing file, not a result, compare refusing it
        sys.exit(f"precision_table: {exc}")
