"""The vendored Otava (kernelwatch/_vendor/otava) finds what Apache Otava 0.8.0 finds: its faster
steps (kernelwatch/_vendor/README.md lists them) give, on real and random series, the weak
change points of the split step and the change points of the merge step that the original
code gave, with the same statistics. Those are pinned in tests/data/otava-0.8.0.json, written
by the original code (f58db93's copy, the wheel's files with only the import paths changed):

    PYTHONPATH=/checkout/at/f58db93/tools python3 tests/tools/test_otava_vendored.py --write

Indices must be equal; the statistics to 1e-9 (scipy's t distribution may differ in the last
digits between versions; on the machine that pinned them they are bitwise equal)."""

from __future__ import annotations

import gzip
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

DATA = Path(__file__).resolve().parent.parent / "data"
PINNED = DATA / "otava-0.8.0.json"
CARDS = ("54f59374", "86422532", "a5b8dffa-second-run", "5e6217f4", "d716bf60-no-transfers")
# (max_pvalue, min_magnitude): kernelwatch's defaults, a strict and a lax one
SETTINGS = ((0.05, 0.05), (0.01, 0.0), (0.5, 0.2))


def real_times() -> dict[str, list[float]]:
    """Each benchmark's real_time repetitions in the five real H200 runs, run after run."""
    series: dict[str, list[float]] = {}
    for card in CARDS:
        path = DATA / "gpu" / f"h200-suite-card-{card}.json.gz"
        document = json.loads(gzip.decompress(path.read_bytes()))
        for row in document["benchmarks"]:
            if row.get("run_type") == "iteration":
                series.setdefault(row["run_name"], []).append(float(row["real_time"]))
    return series


def cases() -> Iterator[tuple[str, list[float], int]]:
    """(name, series, window): real series as they are, stepped, and as a long history; random
    series (numpy's legacy RandomState: its streams are fixed); and degenerate ones."""
    real = real_times()
    names = sorted(real)[::60]
    for name in names:
        values = real[name]
        yield f"real {name}", values, 50
        yield f"real {name}, +15 % from run 4", values[:30] + [v * 1.15 for v in values[30:]], 50
    rng = np.random.RandomState(2026)
    reps = np.asarray(real[names[0]][:10])
    for step in (1.0, 0.93):
        nights = 1 + rng.normal(0, 0.005, 100)
        nights[60:] *= step
        long = (nights[:, None] * reps[None, :]).ravel()
        yield f"real {names[0]}, 100 nights, step {step}", long.tolist(), 50
    for k in range(24):
        runs, size = int(rng.randint(4, 60)), int(rng.randint(1, 12))
        level = 1 + rng.normal(0, rng.choice([0.002, 0.01, 0.05]), runs)
        for _ in range(rng.randint(0, 4)):
            level[rng.randint(0, runs) :] *= rng.choice([0.8, 0.95, 1.05, 1.3])
        values = (100 * level[:, None] * (1 + rng.normal(0, 0.001, (runs, size)))).ravel()
        if k % 4 == 0:  # ties: equal values, equal candidates
            values = np.round(values, 0)
        yield f"random {k}", values.tolist(), max(50, 5 * size)
    yield "constant", [5.0] * 120, 50
    yield "two levels", [1.0] * 60 + [2.0] * 60, 50
    yield "three points", [1.0, 2.0, 1.5], 50
    yield "small window", rng.normal(0, 1, 40).tolist(), 4


def points(change_points: list[Any]) -> list[list[Any]]:
    return [[int(c.index), float(c.qhat), float(c.stats.pvalue)] for c in change_points]


def analyse(analysis: Any) -> dict[str, Any]:
    """What Otava finds in every case, in every setting: the split step's weak points and the
    change points, each [index, qhat, p-value] (of the 8,000 weak points, their indices)."""
    found: dict[str, Any] = {}
    for name, values, window in cases():
        for max_pvalue, min_magnitude in SETTINGS:
            first_pass = max_pvalue * 10 if max_pvalue < 0.05 else max_pvalue * 2  # (Otava's)
            weak = analysis.split(list(values), window, first_pass)
            final, _ = analysis.compute_change_points(
                list(values), window_len=window, max_pvalue=max_pvalue, min_magnitude=min_magnitude
            )
            found[f"{name} | {max_pvalue} {min_magnitude}"] = {
                "weak": [int(c.index) for c in weak],
                "final": points(final),
            }
    return found


def same(a: list[list[Any]], b: list[list[Any]]) -> bool:
    return len(a) == len(b) and all(
        p[0] == q[0]
        and all(
            (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9)
            for x, y in zip(p[1:], q[1:])
        )
        for p, q in zip(a, b)
    )


def test_the_vendored_otava_finds_what_otava_0_8_0_found() -> None:
    pytest.importorskip("scipy", reason="scipy is not installed (the history extra)")
    from kernelwatch._vendor.otava import analysis

    pinned = json.loads(PINNED.read_text())
    found = analyse(analysis)
    assert found.keys() == pinned.keys()
    differ = [
        key
        for key, was in pinned.items()
        if found[key]["weak"] != was["weak"] or not same(found[key]["final"], was["final"])
    ]
    assert not differ
    # (the cases hold what they are for: many weak points, and change points in many of them)
    assert sum(len(v["weak"]) for v in found.values()) > 5000
    assert sum(bool(v["final"]) for v in found.values()) > 60


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    from kernelwatch._vendor.otava import analysis as original

    PINNED.write_text(json.dumps(analyse(original), separators=(",", ":")) + "\n")
    print(f"wrote {PINNED}")


def test_windows_kept_between_states_change_nothing() -> None:
    """`windows` (what changes.unseen's earlier states of a series reuse): the same change points
    as without, for the series and its states without the last runs, in any order."""
    pytest.importorskip("scipy", reason="scipy is not installed (the history extra)")
    from kernelwatch._vendor.otava import analysis

    series = [values for name, values, _ in cases() if "100 nights, step 0.93" in name][0]
    states = [series, series[:-10], series[:-20], series[:-500], series[:30], series]
    windows: dict[Any, Any] = {}
    for state in states:
        fresh, _ = analysis.compute_change_points(state, max_pvalue=0.05, min_magnitude=0.05)
        kept, _ = analysis.compute_change_points(
            state, max_pvalue=0.05, min_magnitude=0.05, windows=windows
        )
        assert points(kept) == points(fresh)
        assert any(c.index == 600 for c in fresh) == (len(state) > 600)
    assert 0 < len(windows) < 50  # (the windows of the later states were the first's)
