"""Levels of variation on real files from the H200 machines (tests/data/gpu), judged against the
H200 baseline of their time: b9b23ab's, pooled from seven cards of two kinds, kept in
tests/data/gpu/h200-baseline-b9b23ab (the committed one is today's harness, measured on nine
other cards: test_baseline_h200.py): which level a comparison crosses, a card the
baseline holds, a card of a kind the baseline never held, host-bound transfers, the prior for
single-process files, the sensitivity, and that `report` judges a run exactly as `run` and
`compare` do."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import GPU_DATA, REPO
from kernelwatch import baseline as baselines
from kernelwatch import explain
from kernelwatch import levels
from kernelwatch import noise as noises
from kernelwatch import verdict
from kernelwatch.compare import Settings, Verdict, compare
from kernelwatch.config import load_config
from kernelwatch.gbench import read_json
from kernelwatch.levels import Level
from kernelwatch.loading import from_documents, load
from kernelwatch.report.build import Options, build_page
from kernelwatch.results import gpu_model, resolve_metric
from kernelwatch.verdict import Judging

TIME = resolve_metric("time")
BASELINES = GPU_DATA / "h200-baseline-b9b23ab"  # a baselines folder: the H200 one alone
BASELINE = BASELINES / "nvidia-h200-sm90"
# A second run on card L (GPU-a5b8dffa), whose first run is one of the baseline's five.
CARD_IN_BASELINE = GPU_DATA / "h200-suite-card-a5b8dffa-second-run.json.gz"
# Card S, not in the baseline, of the kind of its cards M, N, O and R; the same harness (the
# pool), its imprecise medians topped up (15 benchmarks).
OTHER_CARD = GPU_DATA / "h200-suite-card-5e6217f4.json.gz"
# Card E, not in the baseline either, of that kind too; an earlier harness (cudaMalloc).
CARD_E = GPU_DATA / "h200-suite-card-86422532.json.gz"
# Card C, not in the baseline, of the kind of its cards K, L and Q; an earlier harness.
CARD_C = GPU_DATA / "h200-suite-card-54f59374.json.gz"
# Card a2348aed, not in the baseline, of the kind of M, N, O and R by its shape, yet 1.2-2.5 %
# slower than all four on 13 DRAM-read-bound reductions; unchanged kernels (6972a59).
CARD_UNLIKE_ITS_KIND = GPU_DATA / "h200-card-a2348aed-plain" / "plain.json.gz"
# GPU 0 of a two-GPU host, both GPUs measuring the suite at once (4 repetitions in 2 processes).
TWO_GPU_HOST = GPU_DATA / "h200-x2-card-6a541b71-both-gpus.json.gz"
H200 = "NVIDIA H200 (sm 9.0)"  # the model of these files: its own prior applies (levels.PRIORS)
SETTINGS = Settings(rules=load_config(REPO / "baselines" / "kernelwatch.toml").rules)

pytestmark = pytest.mark.skipif(
    not all(p.is_file() for p in (CARD_IN_BASELINE, OTHER_CARD, CARD_E, CARD_C)),
    reason="no H200 card files",
)


def against_baseline(path: Path):
    run = load(path)
    found = baselines.against(BASELINES, run.context, str(path))
    return compare(from_documents(found.label, found.documents), run, TIME, SETTINGS, found.noise)


def test_the_baseline_measured_the_host_and_kind_levels_on_seven_hosts() -> None:
    context = read_json(BASELINE / "result.json.gz")["context"]
    units = levels.units_of(context)
    assert (
        len(units) == 7 and len({u.card for u in units}) == 7 and len({u.host for u in units}) == 7
    )
    stored, warning = noises.stored_beside(BASELINE / "result.json.gz", context)
    assert warning is None and stored is not None
    assert np.isfinite(stored.host).sum() > 300 and np.isnan(stored.card).all()
    # two kinds (four cards and three): the spread within kinds, kept in noise.json as a
    # description, is far narrower than between hosts
    entries = json.loads((BASELINE / "noise.json").read_text())["benchmarks"].values()
    both = [(e["kind"], e["host"]) for e in entries if None not in (e["kind"], e["host"])]
    assert len(both) > 300
    assert np.median([k for k, _ in both]) < np.median([h for _, h in both]) / 3


def test_a_card_the_baseline_holds_is_compared_with_its_own_runs() -> None:
    report = against_baseline(CARD_IN_BASELINE)
    assert {c.level for c in report.comparisons if c.level} == {"process"}
    assert any("holds a run on this card" in n for n in report.notes)
    assert report.exit_status == 0


def test_another_card_of_a_held_kind_is_held_to_the_host_spread_and_passes_unchanged() -> None:
    report = against_baseline(OTHER_CARD)
    measured = [c for c in report.comparisons if c.level]
    assert {c.level for c in measured} == {"host"} and all(c.level_measured for c in measured)
    assert report.exit_status == 0 and report.counts()[Verdict.SAME] == 356
    assert any(
        "of a kind the baseline holds" in n and "held all the same" in n for n in report.notes
    )
    factor = levels.upper_bound_factor(7)  # 7 hosts: 6 degrees of freedom
    assert any(f"x{factor:.2f}" in n and "7 hosts" in n for n in report.notes)


def test_a_card_that_times_some_benchmarks_unlike_its_kind_passes_unchanged() -> None:
    """Card a2348aed matches the kind of four baseline cards (shape distance 0.12 %) but times
    13 DRAM-read-bound reductions 1.2-2.5 % slower than all four, which agree within 0.2 %;
    held to that kind's spread, compare failed all 13 on unchanged kernels."""
    report = against_baseline(CARD_UNLIKE_ITS_KIND)
    assert any("of a kind the baseline holds" in n for n in report.notes)
    slower = [c for c in report.comparisons if c.name.startswith("reduction/") and c.ratio > 1.012]
    assert len(slower) >= 13 and {c.level for c in slower} == {"host"}
    assert report.counts()[Verdict.SAME] == 356 and report.exit_status == 0


def test_todays_harness_on_another_card_passes_unchanged_at_the_host_level() -> None:
    """Card GPU-5f632982 (not in the baseline), the tree of 2cd5aac: the family folders, the
    checks on the GPU, the sampling tools kept per thread; the baseline's harness is b9b23ab's.
    Unchanged kernels, 356 SAME without any re-run (docs/measurement.md)."""
    report = against_baseline(GPU_DATA / "h200-card-5f632982.json.gz")
    assert {c.level for c in report.comparisons if c.level} == {"host"}
    assert report.exit_status == 0 and report.counts()[Verdict.SAME] == 356


@pytest.mark.skipif(not TWO_GPU_HOST.is_file(), reason="no two-GPU host file")
def test_a_host_configured_unlike_the_baselines_is_held_to_at_least_the_host_prior() -> None:
    """Short kernels took 0.7-1.6 us more there than on the baseline's one-GPU hosts (the
    empty kernel 3.65 -> 4.32 us). The card is of a kind the baseline holds, but no baseline
    host was configured so: every limit is at least the host prior, and unchanged code passes."""
    report = against_baseline(TWO_GPU_HOST)
    assert any("configured unlike every host" in n for n in report.notes)
    assert {c.level for c in report.comparisons if c.level} == {"host"}
    empty = next(c for c in report.comparisons if c.name.startswith("probe/empty_kernel/"))
    assert empty.ratio is not None and empty.ratio > 1.15
    for c in report.comparisons:
        if c.noise_floor is not None and not c.host_bound:
            host_prior = levels.prior(Level.HOST, np.array([c.baseline.median]), model=H200)[0]
            assert c.noise_floor >= SETTINGS.noise_multiplier * host_prior * (1 - 1e-9)
    assert report.exit_status == 0


def test_a_card_of_no_held_kind_falls_back_to_the_host_spread() -> None:
    """Card S's run with its times moved in a pattern unlike either kind (every other
    benchmark 1.5 % slower): no kind matches, and the note says so; the host level applies."""
    document = read_json(OTHER_CARD)
    names = sorted({row["run_name"] for row in document["benchmarks"]})
    slower = set(names[::2])
    for row in document["benchmarks"]:
        if row["run_name"] in slower:
            row["real_time"] *= 1.015
    run = from_documents("S, reshaped", [document])
    found = baselines.against(BASELINES, run.context, "S")
    report = compare(from_documents(found.label, found.documents), run, TIME, SETTINGS, found.noise)
    assert {c.level for c in report.comparisons if c.level} == {"host"}
    assert any("of none of the baseline's 2 kind(s)" in n for n in report.notes)


def _baseline_of_one_kind() -> dict:
    """The committed baseline's runs on cards M, N and O only: one kind, not C's."""
    document = read_json(BASELINE / "result.json.gz")
    runs = document["context"][levels.RUNS_KEY]
    cards_m_n_o = (
        "GPU-295b2056-942e-902e-12e0-839104189a4c",
        "GPU-5e652b35-03c9-9e98-57e5-9bc13acd4ebb",
        "GPU-33a20bea-234b-1d40-9972-0f3a2161ddaf",
    )
    kept = [r for r in runs if r["card"] in cards_m_n_o]
    assert len(kept) == 3
    keep = {p for r in kept for p in r["processes"]}
    rows = [row for row in document["benchmarks"] if row["kernelwatch_process"] in keep]
    return {"context": {**document["context"], levels.RUNS_KEY: kept}, "benchmarks": rows}


def test_a_card_of_a_kind_a_one_kind_baseline_never_held_gets_the_unseen_kind_prior() -> None:
    """Held to the spread between M, N and O (0.1 % apart), cards K, L, C and H of the other
    kind failed 87-88 benchmarks each with unchanged code: that spread never crossed kinds.
    With the unseen-kind prior card C passes, and the notes say why and what to do."""
    report = compare(
        from_documents("M+N+O", [_baseline_of_one_kind()]), load(CARD_C), TIME, SETTINGS
    )
    assert {c.level for c in report.comparisons if c.level} == {"host"}
    assert any("none of the baseline's 1 kind(s)" in n and "unseen kind" in n for n in report.notes)
    # The prior applied is named where it applies (the level note names the host prior only).
    assert any("unseen kind, 2.50% + 730 ns / time" in n for n in report.notes), report.notes
    for c in report.comparisons:
        if c.noise_floor is not None:
            floor = levels.unseen_kind_prior(np.array([c.baseline.median]), model=H200)[0]
            assert c.noise_floor >= SETTINGS.noise_multiplier * floor * (1 - 1e-9)
    assert report.exit_status == 0
    # the widest gap between the kinds, measured: occupancy/smem_limited, 4.6 %
    widest = next(
        c for c in report.comparisons if "smem_limited/block:256/blocks_per_sm:3/" in c.name
    )
    assert widest.ratio is not None and widest.ratio > 1.04 and not widest.failed


def _on_one_host(path: Path, host_of: Path) -> dict:
    """`path`'s run as if its card sat in the host of `host_of`'s run (the card level)."""
    document = read_json(path)
    host = read_json(host_of)["context"]
    keys = ("host_gpu_uuids", "host_machine_id", *levels.HOST_CONFIG_KEYS)
    document["context"].update({key: host[key] for key in keys if key in host})
    document["context"]["host_gpu_uuids"] = ",".join(
        sorted({host.get("gpu_uuid", ""), document["context"]["gpu_uuid"]} - {""})
    )
    return document


@pytest.mark.parametrize("level", ["host", "card"])
def test_two_single_runs_of_two_kinds_are_held_to_the_unseen_kind_prior(level: str) -> None:
    """`compare A.json B.json`, card S against card C, unchanged code: one run is a baseline of
    one kind, and the gap between the kinds (occupancy/smem_limited, +4.7 %) failed it against
    the host prior (2.0 % + 770 ns: limit 4.7 %). Two cards of one host (the card level) of two
    kinds did the same on a two-GPU H200 host (GPU-25583732, GPU-fe9a1c25)."""
    contender = load(CARD_C)
    if level == "card":
        document = _on_one_host(CARD_C, OTHER_CARD)
        own = read_json(OTHER_CARD)
        own["context"]["host_gpu_uuids"] = document["context"]["host_gpu_uuids"]
        baseline = from_documents("S", [own])
        contender = from_documents("C", [document])
    else:
        baseline = load(OTHER_CARD)
    report = compare(baseline, contender, TIME, SETTINGS)
    assert {c.level for c in report.comparisons if c.level} == {level}
    assert any("none of the baseline's 1 kind(s)" in n and "unseen kind" in n for n in report.notes)
    widest = next(
        c for c in report.comparisons if "smem_limited/block:256/blocks_per_sm:3/" in c.name
    )
    assert widest.ratio is not None and widest.ratio > 1.045 and not widest.failed
    assert report.exit_status == 0


def test_a_filtered_run_too_small_to_tell_its_kind_is_held_as_one_of_another_kind() -> None:
    """S against C again, occupancy alone (18 benchmarks: too few to tell a kind): held as the
    whole runs are, to the unseen-kind prior, so that smem_limited's +4.7 % (the kinds' gap)
    does not fail a filtered run that the whole suite passes."""

    def occupancy(path: Path, label: str):
        document = read_json(path)
        document["benchmarks"] = [
            row for row in document["benchmarks"] if row["name"].startswith("occupancy/")
        ]
        return from_documents(label, [document])

    report = compare(occupancy(OTHER_CARD, "S"), occupancy(CARD_C, "C"), TIME, SETTINGS)
    assert any("tell nothing of this card's kind" in n and "unseen kind" in n for n in report.notes)
    widest = next(
        c for c in report.comparisons if "smem_limited/block:256/blocks_per_sm:3/" in c.name
    )
    assert widest.ratio is not None and widest.ratio > 1.045 and not widest.failed
    assert report.exit_status == 0


def test_two_single_runs_of_one_kind_are_compared_as_before() -> None:
    """Cards S and E, one kind (shape distance 0.09 %): no unseen-kind floor, the host prior."""
    report = compare(load(OTHER_CARD), load(CARD_E), TIME, SETTINGS)
    assert not any("kind" in n for n in report.notes)
    assert {c.level for c in report.comparisons if c.level} == {"host"}
    assert report.exit_status == 0


def test_host_bound_transfers_against_other_hosts_never_fail() -> None:
    """Card C's run, its transfers 60 % slower (pageable copies moved by up to 143 % between
    one-GPU hosts): reported as slowdowns of a host-bound benchmark, SLOWER, none failing."""
    document = read_json(CARD_C)
    for row in document["benchmarks"]:
        if row["run_name"].startswith("transfers/"):
            row["real_time"] *= 1.6
    slower = from_documents("C, slower transfers", [document])
    baseline = from_documents("M+N+O", [_baseline_of_one_kind()])
    report = compare(baseline, slower, TIME, SETTINGS)
    transfers = [c for c in report.comparisons if c.name.startswith("transfers/")]
    assert transfers and all(c.host_bound and not c.failed for c in transfers)
    assert not [c for c in transfers if c.verdict is Verdict.REGRESSION]
    moved = [c for c in transfers if c.verdict is Verdict.SLOWER]
    assert len(moved) > len(transfers) / 2 and all("host-bound" in c.reason for c in moved)
    assert report.exit_status == 0


def test_two_single_process_files_get_the_process_prior() -> None:
    """One process of card C's run against the other: the spread between processes of the
    baseline side is unknown, so the process-level prior, not the within-process spread."""
    document = read_json(CARD_C)
    first, second = (
        {
            **document,
            "benchmarks": [r for r in document["benchmarks"] if r["kernelwatch_process"] == k],
        }
        for k in (1, 2)
    )
    for side in (first, second):
        for row in side["benchmarks"]:
            del row["kernelwatch_process"]
    report = compare(from_documents("p1", [first]), from_documents("p2", [second]), TIME, SETTINGS)
    kernels = [c for c in report.comparisons if c.level and not c.host_bound]
    assert kernels and {c.level for c in kernels} == {"process"}
    assert not any(c.level_measured for c in kernels)
    relative, absolute = levels.prior_constants(Level.PROCESS, gpu_model(first["context"]))
    for c in kernels:
        assert c.noise_floor >= 2 * (relative + absolute / c.baseline.median) * 0.999
    assert report.exit_status == 0


def test_sensitivity_is_stated_and_tight_on_the_baselines_own_card() -> None:
    own = [c for c in against_baseline(CARD_IN_BASELINE).comparisons if c.sensitivity]
    other = [c for c in against_baseline(OTHER_CARD).comparisons if c.sensitivity]
    long = lambda cs: [c.sensitivity for c in cs if c.baseline.median >= 50_000]  # noqa: E731
    # the card's own run: 1.2 % median sensitivity; another card, held to the host level: 5.1 %
    # on card S (1.30 % at the kind level, which card a2348aed showed unsafe: an anchored run
    # on the card is what judges it sharply)
    assert np.median(long(own)) <= 0.015 < np.median(long(other)) <= 0.06


def test_report_and_run_give_the_same_verdicts() -> None:
    """One path to a verdict: the report finds the baseline, its stored noise and the part of
    the suite that ran exactly as `run` does (verdict.find_baseline, judge_result)."""
    pytest.importorskip("matplotlib")
    run = load(CARD_E)
    found = verdict.find_baseline(BASELINES, run.context, str(CARD_E), set(run.names))
    judging = Judging(TIME, SETTINGS)
    report = verdict.judge_result(verdict.baseline_side(found), run, judging, found)
    shown = build_page(Options(result=CARD_E, judging=Judging(TIME, SETTINGS), baselines=BASELINES))
    assert shown.comparison is not None
    assert [(c.name, c.verdict, c.limit) for c in shown.comparison.comparisons] == [
        (c.name, c.verdict, c.limit) for c in report.comparisons
    ]


def test_the_same_kernels_on_two_cards_are_kernel_identical() -> None:
    """Cards C and E ran builds of two commits with the same kernels: nvcc's anonymous-namespace
    ids in the mangled names differ between the builds, the kernels do not."""
    report = compare(load(CARD_C), load(CARD_E), TIME, Settings(allow_missing=True))
    found = explain.explain(report).explanations
    kinds = {e.kernel.change.value for e in found.values() if e.kernel is not None}
    assert kinds <= {"kernel identical", "kernel not compared"}
    identical = [
        n for n, e in found.items() if e.kernel and e.kernel.change.value == "kernel identical"
    ]
    assert len(identical) >= 300
