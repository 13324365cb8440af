"""The spread between hosts of a pool holding cards of two kinds (noise._level_spreads): at
least as wide as if each kind were drawn alike, so that the number of cards of each kind a pool
happens to hold does not decide whether a fresh card of the rarer kind fails unchanged code
(docs/measurement.md, "Kinds of card")."""

from __future__ import annotations

import numpy as np
from kernelwatch import noise as noises
from kernelwatch.baseline.pool import pool
from kernelwatch.compare import Settings, Verdict, compare
from kernelwatch.loading import from_documents
from kernelwatch.results import resolve_metric
from test_levels import run, where

TIME = resolve_metric("time")
# Enough benchmarks for kinds.py to tell a card's kind (kinds.MIN_SHARED).
BASE = {f"fam/k/n:{i}/manual_time": 100.0 + 3 * i for i in range(30)}
# The rarer kind: 1-3 % slower, by a pattern over more than half of the benchmarks (H200:
# offset copies +1.6-2.0 %, double strides faster), so that its shape, not only its level,
# differs (kinds.shape_distance).
SLOWER = {name: time * (1.01 if i % 2 else 1.03) for i, (name, time) in enumerate(BASE.items())}


def card(name: str, medians: dict[str, float], seed: int) -> dict:
    """One card's run on a one-GPU host, each host a little off the others (0.1 %)."""
    off = np.random.default_rng(seed).normal(0.0, 0.001)
    return run(where(name), {n: t * (1 + off) for n, t in medians.items()}, seed)


def baseline(common: int, rare: int) -> dict:
    runs = [(f"a{k}.json", card(f"GPU-a{k}", BASE, k)) for k in range(common)]
    runs += [(f"b{k}.json", card(f"GPU-b{k}", SLOWER, 100 + k)) for k in range(rare)]
    return pool(runs)


def test_a_fresh_card_of_the_rarer_kind_passes_however_few_the_pool_holds() -> None:
    """Nine cards of one kind and one of the other: the spread between all hosts (sd 0.3 of the
    kinds' gap) times 2 at its upper bound came to 0.9 of the gap, and a fresh card of the rarer
    kind, the gap away from the pool's centre, failed each benchmark."""
    fresh = from_documents("c", [card("GPU-new", SLOWER, 999)])
    for common, rare in ((9, 1), (5, 5)):
        report = compare(from_documents("b", [baseline(common, rare)]), fresh, TIME, Settings())
        assert {c.verdict for c in report.comparisons} == {Verdict.SAME}, (common, rare)
        assert {c.level for c in report.comparisons} == {"host"}


def test_the_spread_is_at_least_half_the_gap_between_the_kinds() -> None:
    spread = noises.measure(from_documents("b", [baseline(9, 1)])).host
    gap = np.array([SLOWER[n] / BASE[n] - 1.0 for n in BASE])
    assert (spread >= 0.5 * gap * 0.95).all()


def test_a_slower_card_of_the_common_kind_is_still_caught() -> None:
    """Drawing the kinds alike widens the limits by no more than the gap: 5 % slower than its
    kind, a card of the common kind fails every benchmark."""
    slow = from_documents("c", [card("GPU-new", {n: t * 1.05 for n, t in BASE.items()}, 999)])
    report = compare(from_documents("b", [baseline(9, 1)]), slow, TIME, Settings())
    assert {c.verdict for c in report.comparisons} == {Verdict.REGRESSION}
