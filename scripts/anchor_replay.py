#!/usr/bin/env python3
"""How often an anchored verdict flags a kernel that did not change: `ab`'s rounds on one card
replayed as anchored runs, every way the suite's two processes per side can fall.

    PYTHONPATH=tools python3 scripts/anchor_replay.py AB_DIR BASELINE_DIR [PROCESSES]

AB_DIR holds `kernelwatch ab`'s rounds (A/round-K.json[.gz], B/round-K.json[.gz]: one process
each, one card). Each replay takes PROCESSES (default 2, the suite's; 3 is `ab`'s default) rounds
of one side as the anchor and as many other rounds as the run, and judges the run as `run`
judges it against an anchor (anchor.as_baseline, verdict.judge_result), with the suite's
settings: once with the anchor's own spread alone, once at least what the committed baseline
BASELINE_DIR measured between the processes of one card (noise.process_floor). A/A: anchor and
run from the same side; A/B: anchor from A, run from B. Printed per pairing and way: the
replays, the benchmarks judged in each, the replays with any verdict but SAME (and their
share), all such verdicts (and their share of the comparisons), and the REGRESSIONs before any
confirming re-run. Only meaningful where the two sides' kernels time alike (an `ab` whose
verdicts are all SAME).
docs/measurement.md ("An anchor's two processes") quotes the result.
"""

from __future__ import annotations

import gzip
import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from kernelwatch import anchor, verdict
from kernelwatch import noise as noises
from kernelwatch.compare import Verdict
from kernelwatch.loading import from_documents, load
from kernelwatch.results import resolve_metric


def rounds(folder: Path) -> list[Any]:
    found = sorted(
        folder.glob("round-*.json*"), key=lambda p: int(p.name.split("-")[1].split(".")[0])
    )
    return [json.loads((gzip.open if p.suffix == ".gz" else open)(p, "rt").read()) for p in found]


def replays(
    anchor_side: list[Any], run_side: list[Any], same: bool, k: int
) -> list[tuple[list[Any], list[Any]]]:
    """Every choice of k anchor rounds and k run rounds (disjoint when both come from one side)."""
    chosen = []
    for a in itertools.combinations(range(len(anchor_side)), k):
        left = [i for i in range(len(run_side)) if not (same and i in a)]
        for b in itertools.combinations(left, k):
            chosen.append(([anchor_side[i] for i in a], [run_side[i] for i in b]))
    return chosen


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    ab_dir, baseline = Path(argv[0]), Path(argv[1])
    k = int(argv[2]) if len(argv) == 3 else 2
    sides = {"A": rounds(ab_dir / "A"), "B": rounds(ab_dir / "B")}
    stored = noises.levels_from_file(noises.read_noise_file(baseline / "noise.json"))
    floor = noises.process_floor(load(baseline), stored)
    judging = verdict.Judging(
        resolve_metric("real_time"),
        verdict.settings(verdict.suite_config(baseline.parent / "kernelwatch.toml")),
    )
    print(f"{ab_dir}: A {len(sides['A'])} rounds, B {len(sides['B'])}; {k} processes a side")
    print("pairing  way             replays judged flagged  (share) verdicts  (share) REGRESSIONs")
    for pairing, (x, y) in {"A/A": ("A", "A"), "B/B": ("B", "B"), "A/B": ("A", "B")}.items():
        chosen = replays(sides[x], sides[y], x == y, k)
        if not chosen:
            print(f"{pairing:8} (too few rounds for two disjoint sets of {k})")
            continue
        for way, least in (("own spread", None), ("baseline floor", floor)):
            flagged = verdicts = regressions = judged = 0
            for anchor_docs, run_docs in chosen:
                against = anchor.as_baseline("anchor", anchor_docs, least)
                run = from_documents("run", run_docs)
                report = verdict.judge_result(verdict.baseline_side(against), run, judging, against)
                counts = Counter(c.verdict for c in report.comparisons)
                judged = len(report.comparisons)
                moved = judged - counts[Verdict.SAME]
                flagged += moved > 0
                verdicts += moved
                regressions += counts[Verdict.REGRESSION]
            share = flagged / len(chosen)
            each = verdicts / (len(chosen) * judged)
            print(
                f"{pairing:8} {way:15} {len(chosen):7} {judged:6} {flagged:7} ({share:6.1%}) "
                f"{verdicts:8} ({each:6.2%}) {regressions:11}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
