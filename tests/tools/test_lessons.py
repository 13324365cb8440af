"""The report's lesson figures are found by listing report/lessons/: one module per family.
(What each figure draws is tested with the report, in test_report.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import GPU_DATA
from kernelwatch.report import lessons
from kernelwatch.report.lessons import figure
from kernelwatch.results import load

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
