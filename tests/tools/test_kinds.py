"""Kinds of card (kinds.py): the shape distance, the grouping of a baseline's runs and the
match of a contender, on synthetic medians and on the H200 cards' real files."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import GPU_DATA
from kernelwatch import kinds
from kernelwatch.loading import from_documents, load

CARD_C = GPU_DATA / "h200-suite-card-54f59374.json.gz"
CARD_D = GPU_DATA / "h200-suite-card-d716bf60-no-transfers.json.gz"
CARD_E = GPU_DATA / "h200-suite-card-86422532.json.gz"


def pattern(seed: int, size: int = 300) -> np.ndarray:
    """Medians of one kind of card: a fixed per-benchmark offset of about 1 %."""
    return np.exp(np.random.default_rng(seed).normal(0.0, 0.01, size)) * 100.0


def jitter(values: np.ndarray, seed: int, sd: float = 0.0005) -> np.ndarray:
    return values * np.exp(np.random.default_rng(seed).normal(0.0, sd, len(values)))


def test_the_shape_distance_ignores_a_shift_of_every_benchmark() -> None:
    card = pattern(1)
    assert kinds.shape_distance(card * 1.05, card) == pytest.approx(0.0, abs=1e-12)
    assert kinds.shape_distance(pattern(2), card) > 0.005


def test_the_shape_distance_ignores_a_change_of_fewer_than_half() -> None:
    card = jitter(pattern(1), 3)
    changed = card.copy()
    changed[:120] *= 1.10  # 40 % of the benchmarks 10 % slower
    assert kinds.shape_distance(changed, pattern(1)) < kinds.KIND_DISTANCE


def test_too_few_shared_benchmarks_say_nothing() -> None:
    short = pattern(1, kinds.MIN_SHARED - 1)
    assert np.isnan(kinds.shape_distance(short, short))


def test_runs_group_into_kinds() -> None:
    one, two = pattern(1), pattern(2)
    runs = np.array([jitter(one, 10), jitter(two, 11), jitter(one, 12), jitter(two, 13)])
    assert kinds.group(runs).tolist() == [0, 1, 0, 1]


def test_a_benchmark_no_run_of_a_kind_has_is_left_out_without_a_warning() -> None:
    """nvbench summaries have no per-repetition times: their medians are NaN, and the kind's
    mean of them warned "Mean of empty slice" on compare's stderr."""
    medians = np.array([pattern(1), pattern(1)])
    medians[:, :10] = np.nan
    grouped = kinds.Kinds(np.array([0, 0]), medians, [f"b/{i}" for i in range(medians.shape[1])])
    contender = from_documents(
        "c", [{"context": {}, "benchmarks": [
            {"name": f"b/{i}", "run_name": f"b/{i}", "run_type": "iteration", "iterations": 1,
             "real_time": float(v), "cpu_time": float(v), "time_unit": "ns"}
            for i, v in enumerate(pattern(1))
        ]}],
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = kinds.match(grouped, contender)
    assert found is not None and found.kind == 0 and found.distance < 1e-9


@pytest.mark.skipif(
    not (CARD_C.is_file() and CARD_D.is_file() and CARD_E.is_file()), reason="no H200 card files"
)
def test_real_cards_fall_into_two_kinds() -> None:
    """Cards C and D are of one kind, E of another (docs/measurement.md, "Kinds of card")."""
    results = [load(p) for p in (CARD_C, CARD_D, CARD_E)]
    names = sorted(
        set.intersection(*(set(r.names) for r in results))
        - {n for n in results[0].names if n.startswith("transfers/")}
    )
    medians = np.array([kinds._medians(r, names, None) for r in results])
    assert kinds.group(medians).tolist() == [0, 0, 1]
    assert kinds.shape_distance(medians[0], medians[1]) < 0.001
    assert kinds.shape_distance(medians[0], medians[2]) > 0.005
