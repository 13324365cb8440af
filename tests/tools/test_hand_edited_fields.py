"""Two fields a hand edit can damage, read by several commands: a row's `host_bound` counter
(hostbound.flag, ResultSet.host_bound) and a pooled baseline's `kernelwatch_baseline_runs`
(levels.pooled_runs). Each is read as written or refused in one line (exit 2), never taken
quietly for "not host-bound" or "a result of one run"."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, document, merged, run_module
from test_kinds_input import H200_BASELINE, H200_RUN, OTHER_KIND, pool_of
from test_noise_input import pooled, where

from kernelwatch import hostbound, levels
from kernelwatch.binaries import planning_documents
from kernelwatch.errors import InputError
from kernelwatch.runner import RunSettings, precision

# Values no harness writes: Google Benchmark's counters are numbers, and the harness's is 1.
DAMAGED = ["1", 2, -1, math.nan, True, 0.5, [1], {"v": 1}]
COPY = "transfers/h2d/pageable"
TIMES = {"kernel/a": [10.0, 10.1, 9.9, 10.0, 10.05], COPY: [50.0, 50.5, 49.5, 50.2, 49.8]}


def with_host_bound(value: Any) -> dict[str, Any]:
    """A result whose copy's rows carry `value` as their host_bound counter."""
    result = document(TIMES, aggregates=False)
    for row in result["benchmarks"]:
        if row["run_name"] == COPY:
            row["host_bound"] = value
    return result


def one_line(done: Any) -> str:
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# --- host_bound ---------------------------------------------------------------------------------


def test_the_counter_reads_one_way() -> None:
    """1 (1.0 as Google Benchmark writes it) is host-bound; 0 or absent is not; anything else
    read as "not host-bound" before, and a JSON true as host-bound in some commands."""
    assert hostbound.flag(1, "f.json", "b") and hostbound.flag(1.0, "f.json", "b")
    assert not hostbound.flag(0, "f.json", "b") and not hostbound.flag(None, "f.json", "b")
    for value in DAMAGED:
        with pytest.raises(InputError, match=r"^f\.json: b: counter host_bound is "):
            hostbound.flag(value, "f.json", "b")


@pytest.mark.parametrize("value", DAMAGED, ids=repr)
def test_run_refuses_a_baseline_whose_counter_is_damaged(tmp_path: Path, value: Any) -> None:
    """What `run` schedules from (the baselines' counters): a copy whose counter read "1" was
    measured beside other GPUs' work as a GPU-bound benchmark, with no word."""
    path = tmp_path / "base.json"
    path.write_text(json.dumps(with_host_bound(value)))
    with pytest.raises(InputError) as caught:
        planning_documents(path, None)
    assert str(caught.value).startswith(f"{path}: {COPY}: counter host_bound is ")
    # a baseline folder's, named by its result
    folder = tmp_path / "baselines" / "nvidia-h100"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(path.read_text())
    with pytest.raises(InputError, match=f"^{folder / 'result.json'}: {COPY}: "):
        planning_documents(None, tmp_path / "baselines")


def test_run_still_reads_a_counter_of_one(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    path.write_text(json.dumps(with_host_bound(1.0)))
    assert hostbound.from_baseline(planning_documents(path, None)) == {COPY}


def test_top_ups_refuse_a_damaged_counter() -> None:
    """precision.imprecise left a copy whose counter read 2 among the benchmarks topped up."""
    output = with_host_bound(2)
    output["context"]["executable"] = "build/bench/kernelwatch_bench_transfers"
    with pytest.raises(InputError, match=f"^build/bench/kernelwatch_bench_transfers: {COPY}: "):
        precision.imprecise([output], RunSettings(precision=0.0025))


@pytest.mark.parametrize("value", [2, -1, math.nan, 0.5], ids=repr)
def test_compare_refuses_a_damaged_counter_on_either_side(tmp_path: Path, value: Any) -> None:
    """compare judged such a copy by the sharp limits of a GPU-bound benchmark (exit 0 here, a
    verdict that hung on a hand edit); now the one line of `run`."""
    base, damaged = tmp_path / "base.json", tmp_path / "damaged.json"
    base.write_text(json.dumps(with_host_bound(1)))
    damaged.write_text(json.dumps(with_host_bound(value)))
    for sides in ((base, damaged), (damaged, base)):
        done = run_module("compare", *sides)
        assert done.returncode == 2, done.stdout[-2000:] + done.stderr
        assert f"{damaged}: {COPY}: counter host_bound is " in one_line(done)


@pytest.mark.parametrize("value", ["1", True, [1], {"v": 1}], ids=repr)
def test_compare_refuses_a_counter_that_is_no_number(tmp_path: Path, value: Any) -> None:
    """A JSON true became 1.0 and a "1" in every row no counter at all (a column of text), so
    compare judged the copy host-bound or not where `run` refuses the file; now `run`'s line,
    by the fast reading and the row-by-row one (an error row sends a file to the latter)."""
    base, damaged = tmp_path / "base.json", tmp_path / "damaged.json"
    base.write_text(json.dumps(with_host_bound(1)))
    for slow in (False, True):
        written = with_host_bound(value)
        if slow:
            written["benchmarks"].append(
                {
                    "name": "kernel/b",
                    "run_name": "kernel/b",
                    "run_type": "iteration",
                    "error_occurred": True,
                    "error_message": "crashed",
                }
            )
        damaged.write_text(json.dumps(written))
        for sides in ((base, damaged), (damaged, base)):
            done = run_module("compare", *sides)
            assert done.returncode == 2, done.stdout[-2000:] + done.stderr
            assert f"{damaged}: {COPY}: counter host_bound is " in one_line(done)


# Each writes OUT from the file: a dashboard's JSON, a history, a page.
READERS = {
    "export": ("export", "{file}", "--format", "bmf", "-o", "{out}"),
    "history ingest": ("history", "ingest", "{file}", "--db", "{out}"),
    "report": ("report", "{file}", "--out", "{out}"),
}


@pytest.mark.parametrize("command", READERS)
@pytest.mark.parametrize("value", [2, -1, math.nan, 0.5], ids=repr)
def test_every_reader_refuses_a_damaged_counter(tmp_path: Path, value: Any, command: str) -> None:
    """export wrote such a file for a dashboard, history ingest stored it and report drew it,
    with no word, where compare and run refuse it: it is refused as the file is read."""
    damaged, out = tmp_path / "damaged.json", tmp_path / "out"

    def run(path: Path) -> Any:
        return run_module(*(a.format(file=path, out=out) for a in READERS[command]))

    damaged.write_text(json.dumps(with_host_bound(value)))
    done = run(damaged)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr
    assert f"{damaged}: {COPY}: counter host_bound is " in one_line(done)
    assert not out.exists()
    damaged.write_text(json.dumps(with_host_bound(1)))
    done = run(damaged)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr


def test_compare_still_reads_one_and_zero(tmp_path: Path) -> None:
    base, other = tmp_path / "base.json", tmp_path / "other.json"
    base.write_text(json.dumps(with_host_bound(1)))
    other.write_text(json.dumps(with_host_bound(0)))
    done = run_module("compare", base, other, "--json", tmp_path / "out.json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    assert {c["name"]: c["host_bound"] for c in report["benchmarks"]} == {
        "kernel/a": False,
        COPY: True,
    }


# --- kernelwatch_baseline_runs ------------------------------------------------------------------

RUNS = levels.RUNS_KEY
DAMAGED_RUNS: list[tuple[Any, str]] = [
    ({"card": "GPU-a"}, "not a list of runs"),
    ([], "not a list of runs"),
    (None, "not a list of runs"),
    (["GPU-a", "GPU-b"], 'run 1 is "GPU-a", not an object'),
    ([{"card": "GPU-a", "host": "h", "config": None}], "run 1 has no 'processes'"),
    ([{"host": "h", "config": None, "processes": [1]}], "run 1 has no 'card'"),
    ([{"card": 7, "host": "h", "config": None, "processes": [1]}], "run 1's 'card' is 7"),
    ([{"card": "a", "host": "h", "config": None, "commit": 5, "processes": [1]}], "'commit'"),
    ([{"card": "a", "host": "h", "config": None, "processes": "1"}], "'processes' is \"1\""),
    ([{"card": "a", "host": "h", "config": None, "processes": [1.0]}], "'processes' is [1.0]"),
    ([{"card": "a", "host": "h", "config": None, "processes": [True]}], "'processes' is [true]"),
    ([{"card": "a", "host": "h", "config": None, "processes": [0]}], "'processes' is [0]"),
    ([{"card": "a", "host": "h", "config": None, "processes": []}], "'processes' is []"),
    (
        [
            {"card": "a", "host": "h", "config": None, "processes": [1]},
            {"card": "b", "host": "h", "config": None, "processes": [1]},
        ],
        "process 1 is listed twice (run 2)",
    ),
]


@pytest.mark.parametrize("runs, why", DAMAGED_RUNS)
def test_a_damaged_list_of_runs_is_refused(runs: Any, why: str) -> None:
    """units_of took any of these for a result of one run: a pool judged as its first card."""
    with pytest.raises(InputError) as caught:
        levels.units_of({"gpu_uuid": "GPU-a", RUNS: runs}, "base.json")
    assert str(caught.value).startswith(f"base.json: {RUNS}: ")
    assert why in str(caught.value)


def test_every_committed_baseline_still_reads_and_one_without_the_list_too() -> None:
    found = sorted((REPO / "baselines").glob("*/result.json*"))
    assert found
    for path in found:
        with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as file:
            context = json.load(file)["context"]
        runs = levels.pooled_runs(context, str(path))
        assert runs and len(levels.units_of(context, str(path))) == len(runs)
        older = {k: v for k, v in context.items() if k != RUNS}
        assert levels.pooled_runs(older) is None and len(levels.units_of(older)) == 1


def pooled_result(tmp_path: Path, runs: Any) -> Path:
    """A baseline of two cards of two hosts (two processes), its list of runs replaced."""
    context = {**pooled(where("GPU-a"), where("GPU-b")), RUNS: runs}
    times = {"kernel/a": [[10.0, 10.1, 9.9], [10.2, 10.1, 10.0]]}
    path = tmp_path / "pooled.json"
    path.write_text(json.dumps(merged(times, context=context)))
    return path


@pytest.mark.parametrize("runs, why", DAMAGED_RUNS[:5] + DAMAGED_RUNS[8:10])
def test_compare_refuses_a_damaged_list_on_either_side(tmp_path: Path, runs: Any, why: str) -> None:
    damaged = pooled_result(tmp_path, runs)
    card = tmp_path / "card.json"
    card.write_text(json.dumps(merged({"kernel/a": [[10.0, 10.1, 9.9]]}, context=where("GPU-c"))))
    for sides in ((damaged, card), (card, damaged)):
        done = run_module("compare", *sides)
        assert done.returncode == 2, done.stdout[-2000:] + done.stderr
        line = one_line(done)
        assert line.startswith(f"kernelwatch: error: {damaged}: {RUNS}: ") and why in line


@pytest.mark.skipif(
    not (H200_BASELINE.is_file() and H200_RUN.is_file()), reason="no H200 baseline or run"
)
def test_a_damaged_list_no_longer_turns_kind_matching_off(tmp_path: Path) -> None:
    """Three runs on cards of one kind, their processes listed as text: the run of unchanged
    code on a card of the other kind was held to the spread between the three hosts (the
    kinds not matched, no word said: 52 benchmarks failed) instead of the unseen-kind prior."""
    folder = pool_of(OTHER_KIND, (), tmp_path / "pool")
    result = folder / "result.json"
    pool = json.loads(result.read_text())
    for run in pool["context"][RUNS]:
        run["processes"] = [str(p) for p in run["processes"]]
    result.write_text(json.dumps(pool))
    done = run_module("compare", folder, H200_RUN)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr
    assert f"{result}: {RUNS}: run 1's 'processes' is [" in one_line(done)
