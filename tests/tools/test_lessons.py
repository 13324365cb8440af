"""The report's lesson figures are found by listing report/lessons/: one module per family
(what each figure draws is tested with the report, in test_report.py); and every committed
baseline shows the lessons' effects at least as large as docs/kernels.md's floors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import GPU_DATA, REPO
from kernelwatch.loading import load
from kernelwatch.report import lessons
from kernelwatch.report.lessons import figure

SUITE = GPU_DATA / "h200-suite-rep10.json"


def test_every_module_of_the_package_is_a_figure_in_page_order() -> None:
    folder = Path(lessons.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__", "figure"}
    found = figure.figures()
    assert {name for name, _ in found} == modules
    positions = [f.position for _, f in found]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    assert lessons.REFERENCES == tuple(f.reference for _, f in found if f.reference)
    # A module is named after its family (`transpose/...`): its reference is one of its own.
    for name, declared in found:
        assert declared.reference is None or declared.reference.startswith(name + "/")


def test_the_references_of_the_suite_s_families_are_benchmarks_of_the_suite() -> None:
    if not SUITE.is_file():
        pytest.skip("no H200 result files in tests/data/gpu")
    names = set(load(SUITE).names)
    families = {name.split("/", 1)[0] for name in names}
    checked = [f.reference for n, f in figure.figures() if n in families and f.reference]
    assert checked and set(checked) <= names


BASELINES = sorted((REPO / "baselines").glob("*/result.json"))
# The floors docs/kernels.md states for the lessons' effects: the median rate of the first
# benchmark over the second's is at least the floor, on every GPU model with a baseline.
FLOORS = [
    (
        "vectorized copy / cudaMemcpy",
        "coalescing/vectorized_copy/manual_time",
        "coalescing/memcpy_d2d/manual_time",
        "bytes_per_second",
        0.90,
    ),
    (
        "sgemm_tiled / cuBLAS at 4096",
        "matmul/sgemm_tiled/size:4096/manual_time",
        "matmul/cublas_sgemm/size:4096/manual_time",
        "flop_per_second",
        0.40,
    ),
    (
        "vectorized reduction / streaming read",
        "reduction/sum/vectorized/float/n:1073741824/manual_time",
        "reduction/sum/streaming/float/n:1073741824/manual_time",
        "bytes_per_second",
        0.85,
    ),
    (
        "pinned / pageable, up",
        "transfers/h2d/pinned/bytes:67108864/manual_time",
        "transfers/h2d/pageable/bytes:67108864/manual_time",
        "bytes_per_second",
        1.5,
    ),
    (
        "pinned / pageable, down",
        "transfers/d2h/pinned/bytes:67108864/manual_time",
        "transfers/d2h/pageable/bytes:67108864/manual_time",
        "bytes_per_second",
        1.5,
    ),
]


@pytest.mark.parametrize("path", BASELINES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("what, faster, slower, key, floor", FLOORS, ids=[f[0] for f in FLOORS])
def test_every_committed_baseline_shows_the_lessons_effects(
    path: Path, what: str, faster: str, slower: str, key: str, floor: float
) -> None:
    result = load(path)

    def median(name: str) -> float:
        return float(np.median(result.benchmark(name).values[key]))

    assert median(faster) / median(slower) >= floor, what
