"""Kinds of card, completeness, re-runs and host-bound benchmarks fed what hand-edited results
and odd pooled baselines give them (kinds.py, completeness.py): a pooled run that cannot be
told of any kind, a context whose crash list is damaged or contradicts the rows."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import GPU_DATA, REPO, H100_CONTEXT, document, run_module
from kernelwatch import kinds, levels
from kernelwatch.loading import from_documents
from kernelwatch.results import FAILED_KEY, NO_RESULT_KEY

H200_BASELINE = REPO / "baselines" / "nvidia-h200-sm90" / "result.json.gz"
# A run of unchanged code on a card of the kind most of the H200 baseline's runs are of.
H200_RUN = GPU_DATA / "h200-card-d9675f7b-plain" / "plain.json.gz"
# The H200 baseline's runs on cards of the other kind (docs/measurement.md, "Kinds of card").
OTHER_KIND = ("GPU-91844ef6", "GPU-e4a61ee5", "GPU-cefb9859")
OTHER_KIND_TOO = "GPU-462d5a41"


def pattern(seed: int, size: int = 300) -> np.ndarray:
    """Medians of one kind of card: a fixed per-benchmark offset of about 1 %."""
    return np.exp(np.random.default_rng(seed).normal(0.0, 0.01, size)) * 100.0


def jitter(values: np.ndarray, seed: int, sd: float = 0.0005) -> np.ndarray:
    return values * np.exp(np.random.default_rng(seed).normal(0.0, sd, len(values)))


def contender_of(medians: np.ndarray) -> Any:
    rows = [
        {"name": f"b/{i}", "run_name": f"b/{i}", "run_type": "iteration", "iterations": 1,
         "real_time": float(v), "cpu_time": float(v), "time_unit": "ns"}
        for i, v in enumerate(medians)
    ]  # fmt: skip
    return from_documents("c", [{"context": {}, "benchmarks": rows}])


# --- kinds of card ----------------------------------------------------------------------------


def test_a_run_that_cannot_be_told_is_no_kind_of_its_own() -> None:
    """A pooled run holding fewer than MIN_SHARED of the benchmarks that do not touch the host
    (one that measured only the host-bound ones, or another suite's) was grouped as a kind of
    its own: a baseline of one kind said it held two, and a card of another kind was not held
    to the unseen-kind prior."""
    one = pattern(1)
    untold = np.full(len(one), np.nan)
    untold[:5] = one[:5]
    medians = np.array([jitter(one, 10), jitter(one, 11), untold])
    grouped = kinds.Kinds(kinds.group(medians), medians, [f"b/{i}" for i in range(len(one))])
    found = kinds.match(grouped, contender_of(jitter(pattern(2), 12)))
    assert found.kind is None
    assert found.kinds == 1
    # two kinds told apart stay two
    medians = np.array([jitter(one, 10), jitter(pattern(2), 11), untold])
    grouped = kinds.Kinds(kinds.group(medians), medians, [f"b/{i}" for i in range(len(one))])
    assert kinds.match(grouped, contender_of(jitter(pattern(3), 12))).kinds == 2


def pool_of(cards: tuple[str, ...], host_bound_only: tuple[str, ...], out: Path) -> Path:
    """The H200 baseline cut down to its runs on `cards`, and the host-bound rows alone of the
    runs on `host_bound_only` (cards by the start of their UUIDs; their processes renumbered
    1..P, as a pooled file numbers them)."""
    with gzip.open(H200_BASELINE, "rt") as file:
        whole = json.load(file)
    listed = whole["context"][levels.RUNS_KEY]

    def index(card: str) -> int:
        (found,) = [u for u, run in enumerate(listed) if run["card"].startswith(card)]
        return found

    runs, host_bound_only = tuple(map(index, cards)), tuple(map(index, host_bound_only))
    run_of = {p: u for u, run in enumerate(listed) for p in run["processes"]}
    bound = {r["run_name"] for r in whole["benchmarks"] if r.get("host_bound") == 1}
    rows = [
        r
        for r in whole["benchmarks"]
        if run_of[r["kernelwatch_process"]] in runs
        or (run_of[r["kernelwatch_process"]] in host_bound_only and r["run_name"] in bound)
    ]
    used = sorted({r["kernelwatch_process"] for r in rows})
    number = {p: i + 1 for i, p in enumerate(used)}
    pooled = []
    for u in (*runs, *host_bound_only):
        run = dict(listed[u])
        run["processes"] = [number[p] for p in run["processes"] if p in number]
        pooled.append(run)
    for r in rows:
        r["kernelwatch_process"] = number[r["kernelwatch_process"]]
    context = {**whole["context"], levels.RUNS_KEY: pooled}
    out.mkdir(parents=True)
    (out / "result.json").write_text(json.dumps({"context": context, "benchmarks": rows}))
    return out


@pytest.mark.skipif(
    not (H200_BASELINE.is_file() and H200_RUN.is_file()), reason="no H200 baseline or run"
)
def test_unchanged_code_passes_against_one_kind_beside_a_run_of_host_bound_benchmarks(
    tmp_path: Path,
) -> None:
    """Three runs of one kind of card, and one that holds only host-bound benchmarks: a run of
    unchanged code on a card of the other kind failed 52 benchmarks (exit 1), held to the
    spread between the hosts of one kind as if the baseline held two; the three alone: exit 0,
    at least the unseen-kind prior."""
    alone = run_module("compare", pool_of(OTHER_KIND, (), tmp_path / "alone"), H200_RUN)
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr
    assert "prior for an unseen kind" in alone.stdout
    beside = pool_of(OTHER_KIND, (OTHER_KIND_TOO,), tmp_path / "beside")
    done = run_module("compare", beside, H200_RUN)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "of none of the baseline's 1 kind(s)" in done.stdout
    assert "prior for an unseen kind" in done.stdout
    assert "Traceback" not in done.stderr


# --- completeness: a saved result's crash list ---------------------------------------------------

NAMES = [f"k/{i}" for i in range(6)]


def whole_build(tmp_path: Path, name: str, rows_of: list[str], **context: Any) -> Path:
    spec = {n: [10.0, 10.1, 9.9, 10.0, 10.05] for n in rows_of}
    path = tmp_path / name
    path.write_text(
        json.dumps(
            document(spec, context={**H100_CONTEXT, "kernelwatch_whole_build": "true", **context})
        )
    )
    return path


@pytest.mark.parametrize(
    "no_result",
    [
        "k/5",  # one name, not a list
        ["k/5", 7],  # a number among the names
        {"k/5": "crashed"},
        None,  # the key left out, the failures kept
    ],
)
def test_a_damaged_crash_list_is_an_error_not_missing(tmp_path: Path, no_result: Any) -> None:
    """A partial result whose context records failed processes but no readable list of the
    benchmarks without a result: the crashed benchmark (absent from a run of the whole build)
    was MISSING, not failing (exit 0)."""
    base = whole_build(tmp_path, "base.json", NAMES)
    extra: dict[str, Any] = {FAILED_KEY: ["kernelwatch_bench_k: exit status 3"]}
    if no_result is not None:
        extra[NO_RESULT_KEY] = no_result
    contender = whole_build(tmp_path, "contender.json", NAMES[:5], **extra)
    done = run_module("compare", base, contender)
    assert done.returncode == 2, done.stdout + done.stderr
    assert NO_RESULT_KEY in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    # the same result as the baseline side: the same one line
    flipped = run_module("compare", contender, base)
    assert flipped.returncode == 2 and NO_RESULT_KEY in flipped.stderr, flipped.stderr


def test_a_side_of_rounds_where_a_later_round_measured_a_crash_is_judged(tmp_path: Path) -> None:
    """ab's folder of rounds, compared again: round 1 crashed k/2 (named in its context, the
    side's: its first file's), round 2 measured it. compare judges it as ab did (a crash in
    some round is an ERROR that fails), not refused as a result edited by hand."""
    base = whole_build(tmp_path, "base.json", NAMES)
    rounds = tmp_path / "B"
    rounds.mkdir()
    whole_build(
        rounds,
        "round-1.json",
        [n for n in NAMES if n != "k/2"],
        **{FAILED_KEY: ["kernelwatch_bench_k: exit status 3"], NO_RESULT_KEY: ["k/2"]},
    )
    whole_build(rounds, "round-2.json", NAMES)
    done = run_module("compare", base, rounds)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "crashed" in done.stdout


def test_a_crash_in_a_later_round_is_a_crash_of_the_side(tmp_path: Path) -> None:
    """The side's context was its first file's: a crash in round 2 of ab's rounds (ab's own
    verdict: an ERROR) was not seen by compare of the same folder, which judged k/2 SAME from
    round 1 and exited 0."""
    base = whole_build(tmp_path, "base.json", NAMES)
    rounds = tmp_path / "B"
    rounds.mkdir()
    whole_build(rounds, "round-1.json", NAMES)
    whole_build(
        rounds,
        "round-2.json",
        [n for n in NAMES if n != "k/2"],
        **{FAILED_KEY: ["kernelwatch_bench_k: exit status 3"], NO_RESULT_KEY: ["k/2"]},
    )
    done = run_module("compare", base, rounds)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "crashed" in done.stdout and "exit status 3" in done.stdout + done.stderr


def test_a_readable_crash_list_is_still_an_error_row(tmp_path: Path) -> None:
    """What the checks above must keep: the crash `run` records is an ERROR that fails."""
    base = whole_build(tmp_path, "base.json", NAMES)
    contender = whole_build(
        tmp_path,
        "contender.json",
        NAMES[:5],
        **{FAILED_KEY: ["kernelwatch_bench_k: exit status 3"], NO_RESULT_KEY: ["k/5"]},
    )
    done = run_module("compare", base, contender)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "crashed" in done.stdout
