#!/usr/bin/env python3
"""How often a change of one benchmark alone is caught: two runs of unchanged code on one card
judged as anchor and run (the process level, as `run` judges an anchored run), each of N
benchmarks drawn at random made SHIFT slower in the run alone, one at a time.

    PYTHONPATH=tools python3 scripts/lone_changes.py ANCHOR.json RUN.json [SHIFT [N]]

SHIFT defaults to 0.05 (5 %), N to 60 (drawn with a fixed seed; host-bound benchmarks left out).
Prints each drawn benchmark's median, its verdict and whether it fails, then the failing share
of those of at least 50 us and of the shorter. docs/compare.md ("Power") quotes the result: a
tied benchmark's change alone cannot reach significance by itself among 356, but in a real run
the unchanged benchmarks' small p-values share the Benjamini-Hochberg correction.
"""

from __future__ import annotations

import copy
import random
import sys
from typing import Any

from kernelwatch.compare import Settings, compare
from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json
from kernelwatch.loading import from_documents
from kernelwatch.results import resolve_metric


def main(anchor_path: str, run_path: str, shift: float, count: int) -> None:
    time = resolve_metric("time")
    anchor: dict[str, Any] = read_json(anchor_path)
    run: dict[str, Any] = read_json(run_path)
    for path, document in ((anchor_path, anchor), (run_path, run)):
        if not isinstance(document, dict) or not isinstance(document.get("context"), dict):
            raise InputError(f"{path}: not a Google Benchmark result with a context")
        if not isinstance(document.get("benchmarks"), list) or not document["benchmarks"]:
            raise InputError(f"{path}: not a Google Benchmark result (no benchmarks)")
    run["context"] = dict(anchor["context"])  # one card: the process level
    base = from_documents("anchor", [anchor])
    first = compare(base, from_documents("run", [run]), time, Settings())
    median_ns = {c.name: c.baseline.median for c in first.comparisons if c.baseline}
    names = sorted(
        {
            r["run_name"]
            for r in run["benchmarks"]
            if r.get("run_type") == "iteration" and not r.get("host_bound")
        }
    )
    caught: dict[bool, list[bool]] = {True: [], False: []}
    for name in random.Random(1).sample(names, min(count, len(names))):
        changed = copy.deepcopy(run)
        for row in changed["benchmarks"]:
            if row["run_name"] == name:
                row["real_time"] *= 1 + shift
        report = compare(base, from_documents("run", [changed]), time, Settings())
        row = next(c for c in report.comparisons if c.name == name)
        median = median_ns.get(name) or 0.0
        caught[median >= 50_000].append(row.failed)
        print(f"{name:72s} {median / 1e3:10.1f} us  {row.verdict.value:10s} {row.failed}")
    for long, fails in caught.items():
        label = ">= 50 us" if long else "< 50 us"
        print(f"{label}: {sum(fails)} of {len(fails)} caught (+{shift:.0%} alone)")


def _number(text: str, kind: type[float] | type[int], what: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not a number ({kind.__name__})") from None


if __name__ == "__main__":
    args = sys.argv[1:]
    if not 2 <= len(args) <= 4:
        sys.exit("usage: lone_changes.py ANCHOR.json RUN.json [SHIFT [N]]")
    try:
        main(
            args[0],
            args[1],
            _number(args[2], float, "SHIFT") if len(args) > 2 else 0.05,
            _number(args[3], int, "N") if len(args) > 3 else 60,
        )
    except InputError as exc:  # a missing file, not a result
        sys.exit(f"lone_changes: {exc}")
