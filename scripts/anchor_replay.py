#!/usr/bin/env python3
"""How often a verdict flags a kernel that did not change: `ab`'s rounds on one card replayed
as anchored runs, every way the suite's two processes per side can fall, and as `ab` judges
them, with and without its confirming rounds.

    PYTHONPATH=tools python3 scripts/anchor_replay.py AB_DIR BASELINE_DIR [PROCESSES [CONFIRM [SHIFT]]]

AB_DIR holds `kernelwatch ab`'s rounds (A/round-K.json[.gz], B/round-K.json[.gz]: one process
each, one card). Each replay takes PROCESSES (default 2, the suite's; 3 is `ab`'s default) rounds
of one side as the anchor and as many other rounds as the run, and judges the run as `run`
judges it against an anchor (anchor.as_baseline, verdict.judge_result), with the suite's
settings: once with the anchor's own spread alone, once at least what the committed baseline
BASELINE_DIR measured between the processes of one card (noise.process_floor), and that again
with `run`'s confirming re-runs (verdict.confirm), one and two, each of PROCESSES spare rounds
of the run's side as `run` re-runs in as many processes as it ran, taken in turn (at most 10
ways, drawn with a fixed seed; averaged, so the counts may be fractional). With CONFIRM, also as `ab`
judges it (ab.judge_confirmed): the own spread's REGRESSIONs measured in CONFIRM more rounds of
each side, taken from the rounds left (at most 10 ways, drawn with a fixed seed), and all the
rounds judged again; a replay fails in the share of those ways where a REGRESSION stands.
A/A: anchor and run from the same side; A/B: anchor from A, run from B. With SHIFT (0.02: 2 %),
instead A/A+ and B/B+: A/A and B/B with every time of the run's rounds (its re-runs' too)
SHIFT slower, a change of that size in every benchmark on the card's own noise; the
REGRESSIONs' share of the comparisons is then the share caught. Printed per pairing and
way: the replays, the benchmarks judged in each, the replays with any verdict but SAME (and
their share), all such verdicts (and their share of the comparisons), the REGRESSIONs, and the
replays that would fail (a REGRESSION: exit 1). Only meaningful where the two sides' kernels
time alike (an `ab` whose verdicts are all SAME).
docs/measurement.md ("An anchor's two processes") quotes the result.
"""

from __future__ import annotations

import gzip
import itertools
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kernelwatch import anchor, verdict
from kernelwatch import baseline as baselines
from kernelwatch import noise as noises
from kernelwatch.compare import Report, Verdict
from kernelwatch.errors import InputError
from kernelwatch.loading import from_documents, load, numeric_order
from kernelwatch.results import resolve_metric


def rounds(folder: Path) -> list[Any]:
    """`ab`'s rounds of one side, in order; InputError where the folder holds none."""
    found = sorted(folder.glob("round-*.json*"), key=numeric_order)
    if not found:
        raise InputError(f"{folder}: no round-K.json[.gz] (a side of `kernelwatch ab`'s folder)")
    documents = []
    for path in found:
        try:
            documents.append(
                json.loads((gzip.open if path.suffix == ".gz" else open)(path, "rt").read())
            )
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise InputError(f"{path}: not a result ({exc})") from None
    return documents


def count(text: str, what: str, kind: type[int] | type[float] = int) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not a number ({kind.__name__})") from None


Choice = tuple[tuple[int, ...], tuple[int, ...]]  # the anchor's rounds, the run's


def replays(anchor_side: list[Any], run_side: list[Any], same: bool, k: int) -> list[Choice]:
    """Every choice of k anchor rounds and k run rounds (disjoint when both come from one side)."""
    chosen = []
    for a in itertools.combinations(range(len(anchor_side)), k):
        left = [i for i in range(len(run_side)) if not (same and i in a)]
        for b in itertools.combinations(left, k):
            chosen.append((a, b))
    return chosen


def confirming(first: Choice, sizes: tuple[int, int], same: bool, k: int) -> list[Choice]:
    """The ways to take k more rounds of each side from those `first` left (at most 10, drawn
    with a fixed seed: enough for a share, and a replay of the reductions stays minutes)."""
    taken = [set(first[0]) | set(first[1])] * 2 if same else [set(first[0]), set(first[1])]
    left = [[i for i in range(size) if i not in used] for size, used in zip(sizes, taken)]
    ways = [
        (a, b)
        for a in itertools.combinations(left[0], k)
        for b in itertools.combinations(left[1], k)
        if not (same and set(a) & set(b))
    ]
    return random.Random(0).sample(ways, min(len(ways), 10))


def slowed(doc: Any, factor: float) -> Any:
    """The run document with every benchmark's time `factor` times longer."""
    rows = [
        {**row, "real_time": row["real_time"] * factor} if "real_time" in row else row
        for row in doc["benchmarks"]
    ]
    return {**doc, "benchmarks": rows}


# A replay judged one way: its first report, and the reports its confirmation leaves (the first
# again when nothing regressed or the way has none; one per way of confirming otherwise).
Judged = tuple[Report, list[Report]]


def regressed(report: Report) -> set[str]:
    return {c.name for c in report.comparisons if c.verdict is Verdict.REGRESSION}


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3, 4, 5):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    ab_dir, baseline = Path(argv[0]), Path(argv[1])
    k = count(argv[2], "PROCESSES") if len(argv) >= 3 else 2
    confirm = count(argv[3], "CONFIRM") if len(argv) >= 4 else 0
    shift = count(argv[4], "SHIFT", float) if len(argv) == 5 else 0.0
    if k < 1 or confirm < 0:
        raise InputError(f"PROCESSES {k} and CONFIRM {confirm}: at least 1 and 0")
    sides = {"A": rounds(ab_dir / "A"), "B": rounds(ab_dir / "B")}
    pairings = {"A/A": ("A", "A", True), "B/B": ("B", "B", True), "A/B": ("A", "B", False)}
    if shift:
        for name in ("A", "B"):
            sides[f"{name}+"] = [slowed(doc, 1 + shift) for doc in sides[name]]
        pairings = {f"{n}/{n}+": (n, f"{n}+", True) for n in ("A", "B")}
    stored = noises.levels_from_file(noises.read_noise_file(baseline / "noise.json"))
    floor = noises.process_floor(load(baseline), stored)
    judging = verdict.Judging(
        resolve_metric("real_time"),
        verdict.settings(verdict.suite_config(baseline.parent / "kernelwatch.toml")),
    )
    print(f"{ab_dir}: A {len(sides['A'])} rounds, B {len(sides['B'])}; {k} processes a side")
    print(
        "pairing  way             replays judged flagged  (share) verdicts  (share) REGRESSIONs"
        "  failing  (share)"
    )
    for pairing, (x, y, same) in pairings.items():
        chosen = replays(sides[x], sides[y], same, k)
        if not chosen:
            print(f"{pairing:8} (too few rounds for two disjoint sets of {k})")
            continue

        def ab_judged(first: Choice, more: Choice, names: set[str]) -> Report:
            """As ab.judge_confirmed judges: all first rounds, and the confirming rounds of
            `names`, of each side."""
            docs = [
                [side[i] for i in taken] + [baselines.restrict(side[i], names) for i in extra]
                for side, taken, extra in zip((sides[x], sides[y]), first, more)
            ]
            return verdict.judge(
                from_documents("A", docs[0]), from_documents("B", docs[1]), judging
            )

        def anchored(least: noises.LevelNoise | None, reruns: int) -> Callable[[Choice], Judged]:
            def judged(choice: Choice) -> Judged:
                anchor_docs, run_docs = (
                    [side[i] for i in c] for side, c in zip((sides[x], sides[y]), choice)
                )
                against = anchor.as_baseline("anchor", anchor_docs, least)
                run = from_documents("run", run_docs)
                report = verdict.judge_result(verdict.baseline_side(against), run, judging, against)
                if not reruns or not regressed(report):
                    return report, [report]
                # `run`'s confirming re-runs (verdict.confirm), each of as many processes as
                # the run: the run side's spare rounds taken as them in every order (at most 10
                # orders, drawn with a fixed seed).
                used = set(choice[1]) | (set(choice[0]) if same else set())
                spare = [i for i in range(len(sides[y])) if i not in used]
                orders = list(itertools.permutations(spare, reruns * k))
                orders = random.Random(0).sample(orders, min(len(orders), 10))

                def kept(order: tuple[int, ...]) -> Report:
                    def rerun(j: int, flagged: Sequence[str]) -> Any:
                        names = set(flagged)
                        taken = order[(j - 1) * k : j * k]
                        docs = [baselines.restrict(sides[y][i], names) for i in taken]
                        return from_documents("re-run", docs)

                    return verdict.confirm(report, against, judging, rerun, reruns)

                return report, [kept(order) for order in orders]

            return judged

        def ab_confirmed(choice: Choice) -> Judged:
            report = ab_judged(choice, ((), ()), set())
            names = regressed(report)
            if not names:
                return report, [report]
            more = confirming(choice, (len(sides[x]), len(sides[y])), same, confirm)
            return report, [ab_judged(choice, extra, names) for extra in more]

        ways: list[tuple[str, Callable[[Choice], Judged]]] = [
            ("own spread", anchored(None, 0)),
            ("baseline floor", anchored(floor, 0)),
            ("floor, re-run", anchored(floor, 1)),
            ("floor, 2 re-runs", anchored(floor, 2)),
        ]
        spare = len(sides[x]) - 2 * k if same else min(len(sides[x]), len(sides[y])) - k
        if confirm and spare < (2 if same else 1) * confirm:
            print(f"{pairing:8} (too few rounds left for ab's {confirm} more a side)")
        elif confirm:
            ways.append((f"ab, {confirm} more", ab_confirmed))
        for way, judge in ways:
            flagged = verdicts = judged = 0
            regressions = failing = 0.0
            for choice in chosen:
                first, after = judge(choice)
                counts = Counter(c.verdict for c in first.comparisons)
                judged = len(first.comparisons)
                moved = judged - counts[Verdict.SAME]
                flagged += moved > 0
                verdicts += moved
                for report in after:  # each way of confirming, of equal weight
                    regressions += len(regressed(report)) / len(after)
                    failing += bool(regressed(report)) / len(after)
            share = flagged / len(chosen)
            each = verdicts / (len(chosen) * judged)
            print(
                f"{pairing:8} {way:16} {len(chosen):7} {judged:6} {flagged:7} ({share:6.1%}) "
                f"{verdicts:8} ({each:6.2%}) {regressions:11.1f} {failing:8.1f} "
                f"({failing / len(chosen):6.2%})"
            )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as exc:  # no rounds, a missing baseline, a count that is not a number
        sys.exit(f"anchor_replay: {exc}")
