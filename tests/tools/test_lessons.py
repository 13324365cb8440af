"""The report's lesson figures are found by listing families/: one module per family, in its
folder (families/<family>/figure.py; what each figure draws is tested with the report, in
test_report.py), reading the family's variants from the run; none without the folder (an
installed package); and every committed baseline shows the lessons' effects at least as large
as the families' pages' floors (families/<family>/README.md).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import GPU_DATA, REPO
from kernelwatch import baseline as baselines
from kernelwatch.loading import load
from kernelwatch.report import lessons
from kernelwatch.report.lessons import discovery
from kernelwatch.report.lessons.drawing import NO_REFERENCE
from kernelwatch.report.lessons.rundata import RunData

SUITE = GPU_DATA / "h200-suite-rep10.json.gz"
# A run of the suite whose binaries mark each family's reference (kernelwatch::mark_reference).
MARKED = GPU_DATA / "h200-x4-card-d501b18d-marked" / "suite.json.gz"


def test_every_family_s_figure_module_is_a_figure_in_page_order() -> None:
    assert discovery.families_folder() == REPO / "families"
    modules = {p.parent.name for p in (REPO / "families").glob("*/figure.py")}
    assert len(modules) >= 8  # (a family without a figure.py has no figure)
    found = discovery.figures()
    assert {name for name, _ in found} == modules
    positions = [f.position for _, f in found]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)


def test_without_the_families_folder_there_are_no_figures_and_the_report_draws_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed package (no checkout): no figures, and draw_all draws none, raising nothing;
    a folder whose families have no figure.py is the same."""
    (tmp_path / "families" / "coalescing").mkdir(parents=True)
    (tmp_path / "families" / "coalescing" / "coalescing.cu").write_text("")
    assert discovery.figures(tmp_path / "families") == ()
    assert discovery.figures(tmp_path / "absent") == ()
    monkeypatch.setattr(discovery.project, "package_checkout", lambda: None)
    assert discovery.families_folder() is None and discovery.figures() == ()
    assert lessons.draw_all(RunData({})) == []


def test_a_module_without_a_figure_is_refused_with_its_path(tmp_path: Path) -> None:
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "figure.py").write_text("FIGURE = None\n")
    with pytest.raises(TypeError, match="probe/figure.py: declares no FIGURE"):
        discovery.figures(tmp_path)


def test_a_figure_reads_the_variants_in_the_order_the_cpp_registers_them() -> None:
    """Google Benchmark's family_index, not the rows' order (interleaved at random) nor a list
    restated in Python; by name where a file has no family_index (Google Benchmark < 1.6)."""
    if not SUITE.is_file():
        pytest.skip("no H200 result files in tests/data/gpu")
    data = RunData.from_result(load(SUITE))
    assert data.variants("transpose/") == [
        "copy_rows",
        "copy_columns",
        "naive_rows",
        "naive_columns",
        "tiled",
        "tiled_padded",
        "diagonal_rows",
        "diagonal_columns",
        "unrolled_rows",
        "unrolled_columns",
        "best",
    ]
    assert data.variants("reduction/sum/") == [
        "naive",
        "interleaved",
        "sequential",
        "warp_shuffle",
        "vectorized",
        "cub",
        "streaming",
    ]
    unordered = RunData(data.medians)
    assert unordered.variants("transpose/") == sorted(data.variants("transpose/"))


def test_each_family_with_a_figure_marks_one_reference_read_from_the_results() -> None:
    """The C++ marks the reference (its rows carry reference = 1): read from the run, in page
    order; a run of a harness from before the mark has none, and each figure says so."""
    if not MARKED.is_file() or not SUITE.is_file():
        pytest.skip("no H200 result files in tests/data/gpu")
    data = RunData.from_result(load(MARKED))
    assert lessons.references(data) == (
        "coalescing/memcpy_d2d/manual_time",
        "transpose/copy_rows/rows:8192/cols:8192/block_rows:8/manual_time",
        "matmul/cublas_sgemm/size:4096/manual_time",
        "reduction/sum/streaming/float/n:67108864/manual_time",
        "transfers/h2d/pinned/bytes:67108864/manual_time",
        "shared_banks/read/u32/stride:1/manual_time",
        "occupancy/copy/block:256/manual_time",
        "local_memory/registers/n:16777216/rounds:2/manual_time",
    )
    in_run = {name.split("/", 1)[0] for name in data.medians}
    for family in (f for f, _ in discovery.figures() if f in in_run):  # (not a family since)
        marked = data.reference(family)
        assert marked is not None and marked.path.startswith(family + "/")
    assert data.reference("probe") is None  # a family without a figure marks none
    older = RunData.from_result(load(SUITE))
    assert lessons.references(older) == () and older.reference("coalescing") is None
    captions = {d.key: getattr(d, "caption", "") for d in lessons.draw_all(older)}
    # every figure that draws a reference says it has none; transfers draws none anyway
    assert [k for k, c in captions.items() if NO_REFERENCE not in c] == ["lesson-transfers"]


def test_a_filtered_run_draws_what_it_has_the_reference_or_not() -> None:
    """Filtered to the padded bank-conflict reads (no plain read), or to the double reductions
    (the marked reference is a float one): drawn, without a reference, saying so."""
    if not MARKED.is_file():
        pytest.skip("no H200 result files in tests/data/gpu")
    full = RunData.from_result(load(MARKED))

    def only(prefix: str) -> RunData:
        kept = {n: m for n, m in full.medians.items() if n.startswith(prefix)}
        return RunData(kept, full.context, registered=full.registered)

    padded = {d.key: d for d in lessons.draw_all(only("shared_banks/padded/"))}
    assert isinstance(padded["lesson-shared-banks"], lessons.Drawn)
    assert NO_REFERENCE in padded["lesson-shared-banks"].caption
    doubles = {d.key: d for d in lessons.draw_all(only("reduction/sum/naive/double"))}
    reduction = doubles["lesson-reduction"]
    assert isinstance(reduction, lessons.Drawn) and NO_REFERENCE in reduction.caption
    assert "?" not in reduction.svg  # no percentage of a reference it does not have


def test_another_project_s_marked_benchmarks_are_references_after_the_figures_ones() -> None:
    marked = {"reference": 1.0, "real_time": 1.0}
    data = RunData(
        {
            "zeta/copy/manual_time": marked,
            "alpha/copy/manual_time": marked,
            "transpose/copy_rows/manual_time": marked,
            "transpose/tiled/manual_time": {"real_time": 2.0},
        }
    )
    assert lessons.references(data) == (
        "transpose/copy_rows/manual_time",
        "alpha/copy/manual_time",
        "zeta/copy/manual_time",
    )
    assert data.reference("transpose") == data.entries("transpose/copy_rows")[0]


BASELINES = [entry.result for entry in baselines.entries(REPO / "baselines")]
# The floors the families' pages state for the lessons' effects: the median rate of the first
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


# The families' pages' tables (families/<family>/README.md), recomputed from the committed H200
# baseline by scripts/kernels_tables.py: a re-measured baseline that moves a figure fails here
# with the new value (that script rewrites them).
sys.path.insert(0, str(REPO / "scripts"))
import kernels_tables  # noqa: E402  (scripts/kernels_tables.py)

H200 = kernels_tables.H200
PAGES = kernels_tables.PAGES
SUFFIX = kernels_tables.SUFFIX


def test_every_figure_of_the_kernels_tables_is_the_committed_h200_baseline_s() -> None:
    result = load(H200)
    wrong = [w for page in PAGES for w in kernels_tables.stale(page.read_text("utf-8"), result)]
    assert not wrong, "\n".join(wrong) + "\n(scripts/kernels_tables.py rewrites them)"


def test_rewriting_the_tables_from_the_baseline_changes_nothing_now() -> None:
    result = load(H200)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert kernels_tables.regenerate(text, result) == text, page


def test_the_kernels_pages_name_only_benchmarks_of_the_baseline_and_every_family() -> None:
    """One page per family, in its folder, titled with the family; every benchmark a page (or
    docs/kernels.md, which says how they were measured) names is the baseline's."""
    names = {n.removesuffix(SUFFIX) for n in load(H200).names}
    families = {n.split("/")[0] for n in names}
    titled = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        titles = re.findall(r"^# .*\(`(\w+)/`\)$", text, re.M)
        assert titles == [page.parent.name], page
        titled[page.parent.name] = text
        assert {c.name for c in kernels_tables.cells(text)} <= names
    # Every family folder has its page, and every family of the baseline has a folder (one
    # added since the baseline was measured has a page, without a table until then).
    folders = {f.parent.name for f in REPO.glob("families/*/*.cu") if f.stem == f.parent.name}
    assert set(titled) == folders and families <= folders
    for text in [*titled.values(), (REPO / "docs" / "kernels.md").read_text(encoding="utf-8")]:
        for quoted in re.findall(r"`([a-z_]+/[^`\s']*)`", text):
            if quoted.split("/")[0] in families:  # a benchmark, or the start of several
                assert any(
                    n == quoted or n.startswith(quoted.rstrip("/") + "/") for n in names
                ), quoted


# The lessons' effects as the families' pages state them, on the baseline and on every whole-suite
# H200 run of tests/data/gpu (other cards): (what, slower, faster, low, high) bounds the ratio
# of the medians of the times, slower / faster; `/` expands over `{}`'s values.
T8 = "transpose/{}/rows:8192/cols:8192/block_rows:8"
T32 = "transpose/{}/rows:8192/cols:8192/block_rows:32"
M = "matmul/{}/m:8192/n:8192"
R = "reduction/sum/{}/float/n:67108864"
LM = "local_memory/{}/n:16777216/rounds:"
U32 = "shared_banks/read/u32/stride:{}"
EFFECTS = [
    (
        "float offset 1 costs 3%",
        "coalescing/offset/float/offset:1",
        "coalescing/offset/float/offset:0",
        1.025,
        1.035,
    ),
    (
        "double offset 1 costs 2%",
        "coalescing/offset/double/offset:1",
        "coalescing/offset/double/offset:0",
        1.015,
        1.025,
    ),
    (
        "stride 2 to 8: flat time",
        "coalescing/stride/float/stride:2",
        "coalescing/stride/float/stride:8",
        0.99,
        1.01,
    ),
    (
        "naive_columns 3.4x naive_rows",
        T8.format("naive_rows"),
        T8.format("naive_columns"),
        3.35,
        3.5,
    ),
    ("padding 2.0x", T8.format("tiled"), T8.format("tiled_padded"), 1.95, 2.1),
    (
        "coalesced stores: 32x32 trails by 28-50%",
        T32.format("naive_columns"),
        T8.format("naive_columns"),
        1.38,
        2.0,
    ),
    ("tiled 32x32 trails", T32.format("tiled"), T8.format("tiled"), 1.38, 2.0),
    ("tiled_padded 32x32 trails", T32.format("tiled_padded"), T8.format("tiled_padded"), 1.38, 2.0),
    (
        "strided stores: 32x32 within 4%",
        T32.format("naive_rows"),
        T8.format("naive_rows"),
        0.96,
        1.04,
    ),
    (
        "diagonal_rows 32x32 within 4%",
        T32.format("diagonal_rows"),
        T8.format("diagonal_rows"),
        0.96,
        1.04,
    ),
    (
        "unrolled_rows 32x32 within 4%",
        T32.format("unrolled_rows"),
        T8.format("unrolled_rows"),
        0.96,
        1.04,
    ),
    ("coalesced_a 2.7% slower", M.format("coalesced_a"), M.format("simple"), 1.025, 1.03),
    ("shared_ab +24%", M.format("simple"), M.format("shared_ab"), 1.235, 1.245),
    ("sequential 2x interleaved", R.format("interleaved"), R.format("sequential"), 1.95, 2.05),
    ("naive beats sequential", R.format("sequential"), R.format("naive"), 1.25, 1.3),
    ("vectorized 3.2x warp_shuffle", R.format("warp_shuffle"), R.format("vectorized"), 3.15, 3.35),
    ("stride 32 30.5x", U32.format(32), U32.format(1), 30.3, 30.8),
    ("padding restores full speed", "shared_banks/padded/u32/stride:32", U32.format(1), 0.99, 1.01),
    ("local array 7.7x", LM.format("local_array") + "2", LM.format("registers") + "2", 7.4, 7.85),
    (
        "local array 7.7x, 8 rounds",
        LM.format("local_array") + "8",
        LM.format("registers") + "8",
        7.4,
        7.85,
    ),
    (
        "register cap 2.2x",
        LM.format("register_capped") + "2",
        LM.format("registers") + "2",
        2.2,
        2.35,
    ),
    (
        "register cap 2.2x, 8 rounds",
        LM.format("register_capped") + "8",
        LM.format("registers") + "8",
        2.2,
        2.35,
    ),
    (
        "8 streams 2.18x",
        "transfers/overlap/streams:1/bytes:67108864",
        "transfers/overlap/streams:8/bytes:67108864",
        2.1,
        2.2,
    ),
    (
        "64-thread blocks 32% of 256",
        "occupancy/copy/block:64",
        "occupancy/copy/block:256",
        3.05,
        3.2,
    ),
]
RUNS = [H200] + sorted(GPU_DATA.glob("h200-suite-*.json")) + sorted(GPU_DATA.glob("h200-x2-*.json"))


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.stem if p.suffix else p.name)
def test_every_card_shows_the_lessons_effects_at_the_stated_size(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path.name}: not in this checkout")
    result = load(path)

    def time(name: str) -> float:
        return float(np.median(result.benchmark(name + SUFFIX).values["real_time"]))

    wrong = []
    for what, slower, faster, low, high in EFFECTS:
        if slower + SUFFIX in result and faster + SUFFIX in result:
            ratio = time(slower) / time(faster)
            if not low <= ratio <= high:
                wrong.append(f"{what}: {ratio:.4g} not in [{low}, {high}]")
    # Bank conflicts: a 32-bit stride's time is gcd(stride, 32) times stride 1's, within 5%; a
    # 64-bit one's gcd(stride, 16) times.
    for width, banks in (("u32", 32), ("u64", 16)):
        first = f"shared_banks/read/{width}/stride:"
        if first + "1" + SUFFIX in result:
            for stride in range(2, 33):
                ratio = time(f"{first}{stride}") / time(f"{first}1") / math.gcd(stride, banks)
                if not 0.95 <= ratio <= 1.01:
                    wrong.append(f"{width} stride {stride}: {ratio:.4g} of gcd × stride 1")
    assert not wrong, "\n".join(wrong)
