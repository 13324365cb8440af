"""A pooled baseline's list of runs (levels.RUNS_KEY) read against the processes of its rows.

Each run lists the process numbers of its rows, and noise.row_units maps each process to its
run from that list. A list that does not match the rows (a row's process numbered in no run)
was read as if the pool were ONE run: the spreads between its cards and hosts were not
measured, and the verdict's limits changed without a word. It is refused in one line (exit 2)
where the file is read. A listed process that no row carries is read as it is (a pool cut down
to some benchmarks has them). The pool cut down to some of its runs
(noise.runs_of, runs_of_card: a run on the contender's own card) is read as a pool of those
runs alone, wherever they stand in the list."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from conftest import REPO, H100_CONTEXT, merged, run_module
from kernelwatch import levels
from kernelwatch import noise as noises
from kernelwatch.baseline.pool import pool
from kernelwatch.errors import InputError
from kernelwatch.levels import Level
from kernelwatch.loading import from_documents, load
from kernelwatch.results import PROCESS_KEY
from test_kinds_input import H200_BASELINE, H200_RUN, pool_of

RUNS = levels.RUNS_KEY
H100_BASELINE = REPO / "baselines" / "nvidia-h100-80gb-hbm3-sm90" / "result.json.gz"
needs_h200 = pytest.mark.skipif(
    not (H200_BASELINE.is_file() and H200_RUN.is_file()), reason="no H200 baseline or run"
)


def read(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as file:
        data: dict[str, Any] = json.load(file)
    return data


def one_line(done: Any) -> str:
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# --- a pooled file whose list does not match its rows --------------------------------------------


def drop_last(runs: list[dict[str, Any]]) -> str:
    """Run 3 no longer lists its last process: counts that disagree."""
    lost = runs[2]["processes"].pop()
    return f"process {lost} of its rows is in no run's list"


def renumber_last(runs: list[dict[str, Any]]) -> str:
    """Run 3's last process listed as 999, which no row carries: the counts still agree, and
    each process from there on was mapped to the run of the next one (a misreading no check
    saw)."""
    lost = runs[2]["processes"][-1]
    runs[2]["processes"][-1] = 999
    return f"process {lost} of its rows is in no run's list"


def move_one(runs: list[dict[str, Any]]) -> str:
    """A process moved from run 3's list to run 1's: the lists still cover every row, so the
    file is read as it says (what a list claims of a process it holds cannot be checked)."""
    runs[0]["processes"].append(runs[2]["processes"].pop())
    return ""


@needs_h200
@pytest.mark.parametrize("edit", [drop_last, renumber_last])
def test_a_pool_whose_runs_do_not_match_its_rows_is_refused(
    tmp_path: Path, edit: Callable[[list[dict[str, Any]]], str]
) -> None:
    whole = read(H200_BASELINE)
    why = edit(whole["context"][RUNS])
    damaged = tmp_path / "pool.json"  # (not compressed: gzip's writing took 5 s a test)
    damaged.write_text(json.dumps(whole))
    with pytest.raises(InputError) as caught:
        load(damaged)
    assert str(caught.value).startswith(f"{damaged}: {RUNS} does not match its rows: ")
    assert why in str(caught.value)
    if edit is drop_last:  # compare's one line, either side (each edit is refused where read)
        for sides in ((damaged, H200_RUN), (H200_RUN, damaged)):
            done = run_module("compare", *sides, "--format", "json")
            assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
            assert one_line(done) == f"kernelwatch: error: {caught.value}"


@needs_h200
def test_a_list_that_covers_every_row_is_read_as_it_says(tmp_path: Path) -> None:
    whole = read(H200_BASELINE)
    move_one(whole["context"][RUNS])
    moved = tmp_path / "pool.json"
    moved.write_text(json.dumps(whole))
    units = noises.row_units(load(moved))
    assert units is not None
    assert np.bincount(units[0]).tolist() == [7, 6, 5] + [6] * 21


@needs_h200
def test_a_pool_cut_down_to_some_benchmarks_maps_each_process_to_its_run(tmp_path: Path) -> None:
    """The H200 pool's host-bound benchmarks alone (baseline update --filter compares the
    previous baseline so): the second GPUs of its multi-GPU hosts measured none of them, so
    their listed processes carry no row. Each row is still its own run's, by its number."""
    whole = read(H200_BASELINE)
    number_of_run = {p: u for u, run in enumerate(whole["context"][RUNS]) for p in run["processes"]}
    whole["benchmarks"] = [r for r in whole["benchmarks"] if r.get("host_bound") == 1]
    carried = {r[PROCESS_KEY] for r in whole["benchmarks"]}
    assert carried < set(number_of_run), "some runs lack the host-bound benchmarks"
    cut = tmp_path / "pool.json"
    cut.write_text(json.dumps(whole))
    result = load(cut)
    run_of_id, _, _ = noises.row_units(result)
    starts = result.starts
    for k, name in enumerate(result.names):
        rows = [r for r in whole["benchmarks"] if r["run_name"] == name]
        ids = result.processes[starts[k] : starts[k] + result.counts[k]]
        assert sorted(run_of_id[ids].tolist()) == sorted(
            number_of_run[r[PROCESS_KEY]] for r in rows
        )


def test_rows_without_a_process_number_in_a_pool_are_refused() -> None:
    document = pool(
        [(f"{c}.json", merged({"k/a": [[10.0, 10.1, 9.9]] * 2}, context=where(c))) for c in "ab"]
    )
    del document["benchmarks"][0][PROCESS_KEY]  # (the reader keeps a counter the first row has)
    said = f"pool: {RUNS} does not match its rows: 12 row(s) carry no process number"
    with pytest.raises(InputError, match=re.escape(said)):
        from_documents("pool", [document])


def test_a_pool_read_with_other_results_as_one_side_is_refused() -> None:
    """A folder of results holding a pool: its context is its first file's, and the pool's
    runs were read as one run (or not at all, its file not first)."""
    runs = [(f"{c}.json", merged({"k/a": [[10.0, 10.1, 9.9]] * 2}, context=where(c))) for c in "ab"]
    pooled = pool(runs)
    other = merged({"k/a": [[10.0, 10.1, 9.9]] * 2}, context=where("c"))
    for documents in ([pooled, other], [other, pooled]):
        with pytest.raises(InputError, match="pooled from several runs"):
            from_documents("side", documents)


# --- the pool cut down to some of its runs -------------------------------------------------------


def where(card: str) -> dict[str, Any]:
    return {**H100_CONTEXT, "gpu_uuid": f"GPU-{card}", "host_gpu_uuids": f"GPU-{card}"}


def run_on(card: str, shift: float, seed: int) -> dict[str, Any]:
    """Two processes of five repetitions of three benchmarks, every time moved by `shift`."""
    rng = np.random.default_rng(seed)
    spec = {
        f"fam/k/n:{i}": [(100.0 * (1 + i) * (1 + shift) * rng.lognormal(0, 0.002, 5)).tolist()] * 2
        for i in range(3)
    }
    spec = {n: [[t * rng.lognormal(0, 0.002) for t in p] for p in ps] for n, ps in spec.items()}
    return merged(spec, context=where(card))


def same_levels(one: Any, other: Any) -> None:
    """The two results' spreads per level, measured alike (NaN where not measured), benchmark
    by benchmark."""
    mine, theirs = (noises.measure(r).levels() for r in (one, other))
    assert sorted(mine.names) == sorted(theirs.names)
    theirs = theirs.take(mine.names)
    for level in ("process", "process_measured", "card", "host"):
        np.testing.assert_array_equal(getattr(mine, level), getattr(theirs, level), level)


@needs_h200
def test_a_run_of_the_real_pool_cut_from_it_reads_as_that_run_alone(tmp_path: Path) -> None:
    """runs_of_card on the committed H200 baseline: the run on a card, read as one run (its
    processes and repetitions only), as a file of that run alone reads."""
    whole = load(H200_BASELINE)
    listed = whole.context[RUNS]
    for u in (0, 7, len(listed) - 1):
        own = noises.runs_of_card(whole, listed[u]["card"])
        assert own is not None and [r["card"] for r in own.context[RUNS]] == [listed[u]["card"]]
        assert noises.row_units(own) is None  # one run
        alone = load(pool_of((listed[u]["card"],), (), tmp_path / f"run{u}") / "result.json")
        counts = {n: c for n, c in zip(own.names, own.counts.tolist()) if c}
        assert counts == {n: c for n, c in zip(alone.names, alone.counts.tolist()) if c}
        same_levels(own, alone)
        b = np.flatnonzero(own.counts > 0)
        assert noises.units_holding(own, b, Level.PROCESS) is None
    assert noises.runs_of_card(whole, "GPU-not-in-it") is None


@pytest.mark.skipif(not H100_BASELINE.is_file(), reason="no H100 baseline")
def test_the_real_pools_read_as_their_runs() -> None:
    for path in (H200_BASELINE, H100_BASELINE):
        if not path.is_file():
            continue
        result = load(path)
        units = noises.row_units(result)
        assert units is not None
        listed = result.context[RUNS]
        assert np.bincount(units[0]).tolist() == [len(r["processes"]) for r in listed]
        assert units[1] == [r["card"] for r in listed]


@pytest.mark.parametrize("order", ["aab", "aba", "baa"])
def test_a_cards_runs_cut_from_a_pool_read_alike_wherever_they_stand(order: str) -> None:
    """Two runs on card a and one on card b: the runs on a cut from the pool were read as a
    pool of two runs when they stood first in its list, and as one run otherwise (their
    process numbers no longer matched the list). Read now as the two runs pooled alone."""
    runs = {"a": [run_on("a", 0.0, 1), run_on("a", 0.01, 2)], "b": [run_on("b", 0.02, 3)]}
    taken = {"a": 0, "b": 0}
    documents = []
    for card in order:
        documents.append((f"{card}{taken[card]}.json", runs[card][taken[card]]))
        taken[card] += 1
    whole = from_documents("pool", [pool(json.loads(json.dumps(documents)))])
    own = noises.runs_of_card(whole, "GPU-a")
    assert own is not None
    units = noises.row_units(own)
    assert units is not None and np.bincount(units[0]).tolist() == [2, 2]
    alone = from_documents(
        "a", [pool(json.loads(json.dumps([(n, d) for n, d in documents if n[0] == "a"])))]
    )
    same_levels(own, alone)


# --- baseline update writes a list its rows match -------------------------------------------------


def test_a_filtered_update_lists_only_the_runs_its_rows_came_from(tmp_path: Path) -> None:
    """`baseline update --filter` of two runs, one of which measured none of the chosen
    benchmarks: the pool listed that run, which contributed no row, and the baseline counted it
    among its cards. It now lists the runs the rows came from."""
    first = tmp_path / "first.json"
    first.write_text(json.dumps(run_on("aaaaaaaa", 0.0, 1)))
    others = run_on("bbbbbbbb", 0.0, 2)
    others["benchmarks"] = [r for r in others["benchmarks"] if r["run_name"] != "fam/k/n:0"]
    second = tmp_path / "second.json"
    second.write_text(json.dumps(others))
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    done = run_module(
        "baseline",
        "update",
        first,
        second,
        "--filter",
        "n:0$",
        "--baselines",
        baselines,
        "--min-repetitions",
        "2",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (folder,) = baselines.iterdir()
    written = read(folder / "result.json")
    listed = [run["card"] for run in written["context"].get(RUNS, [])]
    assert listed in ([], ["GPU-aaaaaaaa"]), listed
    compared = run_module("compare", folder, first)
    assert compared.returncode == 0, compared.stderr[-3000:]
