"""Real output of Google Benchmark programs built here (tests/tools/programs/gbench_cases.cc,
g++ and libbenchmark): a name registered twice, complexity (BigO/RMS) rows, a label, and a
single repetition where one benchmark is 100x slower. Skipped without a compiler or
libbenchmark, except under CI=true, where they must run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO
from kernelwatch import changes, history
from kernelwatch.loading import load

SOURCE = REPO / "tests" / "tools" / "programs" / "gbench_cases.cc"
# The names as Google Benchmark writes them (fixed iteration counts keep the runs short).
TARGET, STEADY = "BM_target/iterations:2000", "BM_steady/iterations:20000"
TWICE, LABELLED = "BM_twice/iterations:20000", "BM_labelled/iterations:20000"
# How a binary without the harness names its GPU (the flag exists in Google Benchmark 1.7 and 1.8).
ON_H200 = (
    "--benchmark_context=gpu_name=NVIDIA H200",
    "--benchmark_context=gpu_compute_capability=9.0",
)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}, and CI=true: the CI image must have g++ and libbenchmark-dev")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("g++")
    if compiler is None:
        _unavailable("g++ is not installed")
    binary = tmp_path_factory.mktemp("gbench") / "gbench_cases"
    built = subprocess.run(
        [
            str(compiler),
            "-O2",
            "-std=c++17",
            str(SOURCE),
            "-o",
            str(binary),
            "-lbenchmark",
            "-lpthread",
        ],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        _unavailable(f"cannot build against libbenchmark: {built.stderr.strip()[-300:]}")
    return binary


def run(program: Path, out: Path, slow: bool = False, *flags: str, fail_once: bool = False) -> Path:
    env = dict(os.environ, KW_SLOW="1" if slow else "0", KW_FAIL_ONCE="1" if fail_once else "0")
    done = subprocess.run(
        [str(program), f"--benchmark_out={out}", "--benchmark_out_format=json", *flags],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def outputs(program: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("out")
    return {
        "base": run(program, folder / "base.json"),
        "slow": run(program, folder / "slow.json", True),
    }


def test_the_files_have_the_shapes_under_test(outputs: dict[str, Path]) -> None:
    rows = json.loads(outputs["base"].read_text())["benchmarks"]
    twice = [r for r in rows if r["run_name"] == TWICE]
    assert len({r["family_index"] for r in twice}) == 2
    assert {r.get("aggregate_name") for r in rows} >= {"BigO", "RMS"}
    assert any(r.get("label") == "fp32" for r in rows)


def test_a_name_registered_twice_is_two_benchmarks(outputs: dict[str, Path]) -> None:
    result = load(outputs["base"])
    assert TWICE in result and f"{TWICE}#2" in result
    assert "BM_complexity/256/iterations:5000" in result
    assert "BM_complexity/4096/iterations:5000" in result
    assert len(result) == 8  # BigO and RMS rows are not benchmarks
    assert result.labels == {LABELLED: "fp32"}


def test_one_repetition_100x_slower_does_not_pass(run_cli, outputs: dict[str, Path]) -> None:
    done = run_cli("compare", outputs["base"], outputs["slow"])
    assert done.status == 1, done.out
    lines = done.out.splitlines()
    line = next(text for text in lines if f" {TARGET} " in text)
    assert line.startswith("REGRESSION") and "unverified: too few repetitions (1 and 1" in line
    # One-sample changes fail only from 2x worse: the 100x slowdown does; the others' CPU times
    # move with the machine's load (BM_steady's once took 2.3x as long, in `kw test --gpu` on
    # an H200 machine) and are shown unverified below that.
    as_json = run_cli("compare", outputs["base"], outputs["slow"], "--format", "json").out
    rows = json.loads(as_json)["benchmarks"]
    assert TARGET in [b["name"] for b in rows if b["failed"]], done.out
    for b in rows:
        assert b["failed"] == (b["verdict"] == "REGRESSION" and b["ratio"] >= 2.0), b["name"]


def test_same_files_compare_clean_and_show_the_label(
    run_cli, outputs: dict[str, Path], tmp_path: Path
) -> None:
    done = run_cli("compare", outputs["base"], outputs["base"])
    assert done.status == 0, done.out
    assert f"{LABELLED} [fp32]" in done.out and f"{TWICE}#2" in done.out
    markdown = run_cli("compare", outputs["base"], outputs["base"], "--format", "markdown").out
    assert f"{LABELLED} [fp32]" in markdown
    as_json = run_cli("compare", outputs["base"], outputs["base"], "--format", "json").out
    found = {b["name"]: b for b in json.loads(as_json)["benchmarks"]}
    assert found[LABELLED]["label"] == "fp32" and "label" not in found[STEADY]
    run_cli("compare", outputs["base"], outputs["base"], "--junit", tmp_path / "j.xml")
    assert f'name="{LABELLED} [fp32]"' in (tmp_path / "j.xml").read_text()


def test_strict_fails_an_unverified_regression_below_2x(
    run_cli, outputs: dict[str, Path], tmp_path: Path
) -> None:
    # The real file with one benchmark's one repetition 30 % slower: past the limit, below 2x.
    document = json.loads(outputs["base"].read_text())
    for row in document["benchmarks"]:
        if row["run_name"] == STEADY:
            row["real_time"] *= 1.3
    slower = tmp_path / "slower.json"
    slower.write_text(json.dumps(document))
    done = run_cli("compare", outputs["base"], slower)
    assert done.status == 0, done.out
    line = next(text for text in done.out.splitlines() if f" {STEADY} " in text)
    assert line.startswith("SLOWER") and "+30.0%" in line and "unverified" in line
    strict = run_cli("compare", outputs["base"], slower, "--strict")
    assert strict.status == 1
    line = next(text for text in strict.out.splitlines() if f" {STEADY} " in text)
    assert line.startswith("REGRESSION")


def test_run_measures_a_plain_google_benchmark_binary(
    run_cli, program: Path, tmp_path: Path
) -> None:
    # A plain binary refuses --kernelwatch_* flags ("unrecognized command-line flag", exit 1):
    # run sees from its --help that it is not on the harness and passes none.
    out = tmp_path / "run.json"
    done = run_cli(
        "run",
        "--bench",
        program,
        "--no-compare",
        "--out",
        out,
        "--filter",
        STEADY,
        "--top-ups",
        "0",
    )  # (a CPU benchmark's spread on a busy machine would top it up)
    assert done.status == 0, done.out
    context = json.loads(out.read_text())["context"]
    commands = context["kernelwatch_benchmark_commands"]
    assert commands and not any("--kernelwatch_" in command for command in commands)
    assert "kernelwatch_max_time" not in context  # (a setting it was never given)
    assert len(load(out).benchmark(STEADY).values["real_time"]) == 10


@pytest.mark.parametrize("format", ["console", "csv"])
def test_console_or_csv_output_is_named_and_the_fix_given(
    run_cli, program: Path, tmp_path: Path, format: str
) -> None:
    # Both start with the date line, which json reads as the number 2026 followed by "extra
    # data": it was called invalid JSON that "ends early (truncated?)".
    out = run(program, tmp_path / "out.json", False, f"--benchmark_out_format={format}")
    for argv in (["compare", out, out], ["history", "ingest", out, "--db", tmp_path / "h.db"]):
        done = run_cli(*argv)
        assert done.status == 2 and done.err.count("\n") == 1, done.err
        assert "not JSON" in done.err and "truncated" not in done.err, done.err
        assert "console or CSV output" in done.err and "--benchmark_out_format=json" in done.err
    assert not (tmp_path / "h.db").exists()


def test_a_filter_that_matches_nothing_leaves_an_empty_file_and_says_why(
    run_cli, program: Path, tmp_path: Path
) -> None:
    out = run(program, tmp_path / "none.json", False, "--benchmark_filter=^no_such_benchmark$")
    assert out.read_bytes() == b""  # exit 0 and an empty file: Google Benchmark 1.7 and 1.8
    done = run_cli("compare", out, out)
    assert done.status == 2 and "empty file" in done.err and "--benchmark_filter" in done.err


def test_two_results_in_one_file_are_named(
    run_cli, outputs: dict[str, Path], tmp_path: Path
) -> None:
    both = tmp_path / "both.json"  # `>>` onto an old result
    both.write_bytes(outputs["base"].read_bytes() + outputs["slow"].read_bytes())
    done = run_cli("compare", both, outputs["base"])
    assert done.status == 2 and "two results in one file" in done.err, done.err
    assert "truncated" not in done.err


def test_comment_refuses_a_result_given_as_the_report(
    run_cli, outputs: dict[str, Path], tmp_path: Path
) -> None:
    # Every other command takes the result first; `comment RESULT.json --gpu G` posted the
    # whole JSON file (up to 64 KB) as the pull-request comment.
    body = tmp_path / "body.md"
    done = run_cli("comment", outputs["base"], "--gpu", "nvidia-h200-sm90", "-o", body)
    assert done.status == 2 and "not the Markdown report" in done.err, done.out + done.err
    assert not body.exists()
    markdown = tmp_path / "report.md"
    assert run_cli("compare", outputs["base"], outputs["base"], "--markdown", markdown).status == 0
    done = run_cli("comment", markdown, "--gpu", "nvidia-h200-sm90", "-o", body)
    assert done.status == 0 and "### kernelwatch compare" in body.read_text()


def test_a_folder_says_when_an_aggregates_only_file_is_left_out(
    run_cli, program: Path, tmp_path: Path
) -> None:
    # Repetitions beat aggregates in a folder; the aggregates-only file's medians were dropped
    # without a word.
    folder = tmp_path / "runs"
    folder.mkdir()
    filter_ = f"--benchmark_filter=^{STEADY}$"
    run(program, folder / "a.json", False, filter_, "--benchmark_repetitions=3")
    run(
        program,
        folder / "b.json",
        False,
        filter_,
        "--benchmark_repetitions=3",
        "--benchmark_report_aggregates_only=true",
    )
    result = load(folder)
    assert len(result.benchmark(STEADY).values["real_time"]) == 3
    assert any("b.json: aggregates only for 1 benchmark(s)" in n for n in result.notes)
    done = run_cli("compare", folder, folder)
    assert "left out (a median does not pool with repetitions)" in done.out, done.out


def test_a_result_without_a_gpu_is_told_how_to_record_it(
    run_cli, program: Path, outputs: dict[str, Path], tmp_path: Path
) -> None:
    # Baselines and history series are per GPU model. A plain history's `history changes`
    # said "no change in the whole history" without having analysed a run.
    db = tmp_path / "h.db"
    for k in range(2):
        assert (
            run_cli("history", "ingest", outputs["base" if k else "slow"], "--db", db).status == 0
        )
    done = run_cli("history", "changes", "--db", db)
    assert done.status == 2 and done.err.count("\n") == 1, done.out + done.err
    assert "no run of the history records its GPU" in done.err
    assert "--benchmark_context=gpu_name=NAME" in done.err
    named = run(program, tmp_path / "named.json", False, *ON_H200)
    assert load(named).context["gpu_name"] == "NVIDIA H200"  # the flag does what the hint says
    assert run_cli("history", "ingest", named, "--db", db).status == 0
    done = run_cli("history", "changes", "--db", db)
    assert done.status == 0, done.out + done.err
    assert "note: 2 run(s) record no GPU" in done.out and "not analysed" in done.out
    (tmp_path / "baselines").mkdir()
    done = run_cli("baseline", "update", outputs["base"], "--baselines", tmp_path / "baselines")
    assert done.status == 2 and "--benchmark_context=gpu_compute_capability=X.Y" in done.err


def test_a_run_where_a_repetition_failed_is_no_point_of_the_series(
    run_cli, program: Path, tmp_path: Path
) -> None:
    # compare calls it ERROR; history show and changes used its other repetitions unmarked.
    db, flags = tmp_path / "h.db", (f"--benchmark_filter=^{STEADY}$", "--benchmark_repetitions=3")
    good = run(program, tmp_path / "good.json", False, *flags, *ON_H200)
    failed = run(program, tmp_path / "failed.json", False, *flags, *ON_H200, fail_once=True)
    assert load(failed).errors == {STEADY: "failed on purpose"}
    done = run_cli("compare", good, failed)
    assert done.status == 1 and f"ERROR    {STEADY}" in done.out, done.out
    for out in (good, failed):
        assert run_cli("history", "ingest", out, "--db", db).status == 0
    done = run_cli("history", "show", STEADY, "--db", db)
    assert done.status == 0, done.err
    assert "a repetition failed (failed on purpose); N counts the others" in done.out
    with history.database(db) as connection:
        (series,) = changes.load_series(connection, "real_time")
    assert [run.id for run in series.runs] == [1] and len(series.values) == 3
