"""`kernelwatch selftest`: saved runs that are damaged, hand-edited or mixed, levels at the
limits of their text, and pairs that compare nothing (an audit). Helpers and the fake suite
are test_selftest.py's."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import fakebench
import pytest
from kernelwatch import selftest
from test_selftest import OTHER, QUIET, analyse_json, build, run_selftest, saved_run

__all__ = ["build"]  # (the fixture, imported for the tests below)

LONG = 5000


def edited(path: Path, **context: Any) -> Path:
    """A saved run with context keys set to other values (None: removed), as by hand."""
    document = json.loads(path.read_text())
    for key, value in context.items():
        if value is None:
            document["context"].pop(key, None)
        else:
            document["context"][key] = value
    path.write_text(json.dumps(document))
    return path


def one_line(done: Any) -> str:
    assert "Traceback" not in done.err and "internal error" not in done.err, done.err
    [line] = done.err.splitlines()
    assert line.startswith("kernelwatch: error: "), line
    return line


def last_line(done: Any) -> str:
    """The refusal of a command that says its progress on stderr first."""
    assert "Traceback" not in done.err and "internal error" not in done.err, done.err
    line = done.err.splitlines()[-1]
    assert line.startswith("kernelwatch: error: "), line
    return line


def slowed_trial(folder: Path, level: float = 0.05) -> Path:
    """Trial 1: a control and a run `level` slower in every benchmark; the slowed run."""
    saved_run(folder, "control", 1, QUIET, seed=1)
    slower = {n: m * (1 + level) for n, m in QUIET.items()}
    return saved_run(folder, "inject", 1, slower, level=level, seed=2)


# --- long values are cut ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "context",
    [
        {selftest.ROLE_KEY: "x" * LONG},
        {selftest.LEVEL_KEY: "0" * LONG},
        {selftest.INDEX_KEY: "-" + "9" * 4000},
        {"gpu_name": "G" * LONG},
    ],
    ids=["role", "level", "index", "gpu"],
)
def test_a_long_hand_edited_value_is_cut_in_its_line(
    tmp_path: Path, run_cli, context: dict[str, str]
) -> None:
    folder = tmp_path / "st"
    folder.mkdir()
    edited(slowed_trial(folder), **context)
    line = one_line(run_cli("selftest", "--from", folder))
    assert len(line) < 600 and " characters)" in line


def test_two_long_commits_are_cut_in_the_line(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "st"
    folder.mkdir()
    for k, commit in ((1, "a"), (2, "b")):
        edited(saved_run(folder, "aa", k, QUIET, seed=k), kernelwatch_git_commit=commit * LONG)
    line = one_line(run_cli("selftest", "--from", folder))
    assert len(line) < 700 and "commit" in line and f"({LONG:,} characters)" in line


def test_a_long_injection_regex_of_a_kept_run_is_cut(build: Path, tmp_path: Path, run_cli) -> None:
    out = tmp_path / "st"
    assert run_selftest(run_cli, build, "--out", out).status == 0
    edited(out / "control-1.json", **{selftest.INJECT_KEY: "^" + "x" * LONG})
    line = last_line(run_selftest(run_cli, build, "--out", out, "--resume"))
    assert len(line) < 500 and "made with --inject" in line


# --- hand-edited values of the wrong type -------------------------------------------------------


@pytest.mark.parametrize(
    "value", [["^nothing$"], 5, "", True], ids=["list", "number", "empty", "bool"]
)
def test_an_injection_regex_that_is_no_text_is_refused(tmp_path: Path, run_cli, value: Any) -> None:
    """A list ["^fam0/"] was read as the regex "['^fam0/']", a character class that matches
    nearly every name, and "" as every benchmark: the benchmarks counted as injected were not
    the ones the run slowed."""
    folder = tmp_path / "st"
    folder.mkdir()
    edited(slowed_trial(folder), **{selftest.INJECT_KEY: value})
    line = one_line(run_cli("selftest", "--from", folder))
    assert selftest.INJECT_KEY in line


@pytest.mark.parametrize(
    ("key", "value"),
    [(selftest.LEVEL_KEY, True), (selftest.INDEX_KEY, 1.5), (selftest.INDEX_KEY, True)],
    ids=["level-bool", "index-fraction", "index-bool"],
)
def test_a_level_or_index_of_the_wrong_type_is_damaged(
    tmp_path: Path, run_cli, key: str, value: Any
) -> None:
    """true read as level 1.0 (a 100 % slowdown) and 1.5 as trial 1."""
    folder = tmp_path / "st"
    folder.mkdir()
    edited(slowed_trial(folder), **{key: value})
    assert "damaged" in one_line(run_cli("selftest", "--from", folder))


def test_an_infinite_process_count_is_no_internal_error(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "st"
    folder.mkdir()
    saved_run(folder, "aa", 1, QUIET, seed=1)
    saved_run(folder, "aa", 2, QUIET, seed=2)
    path = edited(folder / "aa-1.json", kernelwatch_processes="INFINITY")
    path.write_text(path.read_text().replace('"INFINITY"', "Infinity"))  # (JSON as Python reads it)
    status, report, _ = analyse_json(run_cli, folder)
    assert status == 0
    assert [t["processes"] for t in report["wall_time"]] == [1, 2]


# --- inputs that are no file ---------------------------------------------------------------------


def test_a_fifo_among_the_saved_runs_is_refused_not_waited_on(tmp_path: Path, run_cli) -> None:
    """A read of a FIFO waits for a writer for ever: --from hung."""
    folder = tmp_path / "st"
    folder.mkdir()
    slowed_trial(folder)
    os.mkfifo(folder / "zz.json")
    line = one_line(run_cli("selftest", "--from", folder))
    assert "zz.json: a FIFO" in line


def test_a_fifo_in_place_of_a_kept_run_is_refused_not_waited_on(
    build: Path, tmp_path: Path, run_cli
) -> None:
    out = tmp_path / "st"
    assert run_selftest(run_cli, build, "--out", out).status == 0
    (out / "aa-2.json").unlink()
    os.mkfifo(out / "aa-2.json")
    line = last_line(run_selftest(run_cli, build, "--out", out, "--resume"))
    assert "aa-2.json: a FIFO" in line


# --- what is counted -----------------------------------------------------------------------------


def test_an_a_a_pair_that_compares_nothing_is_no_pass(tmp_path: Path, run_cli) -> None:
    """Two A/A runs of no common benchmark: 0 comparisons, and "all targets hold", exit 0."""
    folder = tmp_path / "st"
    folder.mkdir()
    saved_run(folder, "aa", 1, QUIET, seed=1)
    saved_run(folder, "aa", 2, OTHER, seed=2)
    done = run_cli("selftest", "--from", folder)
    assert done.status == 2 and "nothing was compared" in one_line(done)


def test_compares_warnings_on_a_pair_are_said(tmp_path: Path, run_cli) -> None:
    """Runs of two drivers were analysed as A/A without a word (compare warns of it)."""
    folder = tmp_path / "st"
    folder.mkdir()
    edited(saved_run(folder, "aa", 1, QUIET, seed=1), gpu_driver_version="999.0")
    saved_run(folder, "aa", 2, QUIET, seed=2)
    status, report, _ = analyse_json(run_cli, folder)
    assert any("different driver: baseline 999.0, contender" in n for n in report["notes"])
    done = run_cli("compare", folder / "aa-1.json", folder / "aa-2.json")
    assert "different driver: baseline 999.0, contender" in done.err


def test_saved_runs_of_two_filters_are_refused(tmp_path: Path, run_cli) -> None:
    """A/A runs of one --filter and trials of another, analysed together: each figure of
    another set of benchmarks, and not a word."""
    folder = tmp_path / "st"
    folder.mkdir()
    for k in (1, 2):
        edited(saved_run(folder, "aa", k, QUIET, seed=k), kernelwatch_filter="^fam0/")
    edited(slowed_trial(folder), kernelwatch_filter="")  # (no --filter, as selftest saves it)
    edited(folder / "control-1.json", kernelwatch_filter="")
    line = one_line(run_cli("selftest", "--from", folder))
    assert "--filter" in line and "'^fam0/'" in line


# --- levels as the harness and the file names have them ------------------------------------------


def test_levels_alike_to_their_six_digits_are_one_level(
    build: Path, tmp_path: Path, run_cli
) -> None:
    """Both were given to the harness and saved as inject-0.0123457-1.json: the second run
    replaced the first, and the report counted it twice (2 trials)."""
    out = tmp_path / "st"
    done = run_selftest(run_cli, build, "--out", out, "--slowdowns", "0.01234567,1.234568%")
    assert done.status == 2 and "given twice" in one_line(done)
    assert not out.exists()


def test_a_level_of_more_digits_resumes(build: Path, tmp_path: Path, run_cli) -> None:
    """The run was saved as level 0.0123457, the level given was 0.0123456789: --resume took
    the saved run for another one."""
    out = tmp_path / "st"
    argv = ("--out", out, "--slowdowns", "0.0123456789")
    assert run_selftest(run_cli, build, *argv).status == 0
    done = run_selftest(run_cli, build, *argv, "--resume")
    assert done.status == 0, done.err
    assert "kept" in done.err and (out / "inject-0.0123457-1.json").is_file()


def test_a_level_that_rounds_to_ten_is_refused_before_a_run(
    build: Path, tmp_path: Path, run_cli
) -> None:
    out = tmp_path / "st"
    done = run_selftest(run_cli, build, "--out", out, "--slowdowns", "999.99999999%")
    assert done.status == 2 and "--slowdowns" in one_line(done)
    assert not out.exists()


# --- the folder of one selftest ------------------------------------------------------------------


def test_an_out_holding_another_selftests_runs_is_refused(
    build: Path, tmp_path: Path, run_cli
) -> None:
    """A/A runs, then trials into the same --out without --resume: no name in common, so
    both were kept; the live report counted the trials, --from both (of two --filters)."""
    out = tmp_path / "st"
    first = run_cli(
        "selftest", "--build-dir", build, "--aa-runs", "2", "--trials", "0", "--out", out
    )
    assert first.status == 0, first.err
    argv = ("--build-dir", build, "--aa-runs", "0", "--trials", "1", "--slowdowns", "5%")
    done = run_cli("selftest", *argv, "--out", out, "--filter", "fam0")
    assert done.status == 2 and "already holds selftest runs (aa-1.json" in last_line(done)
    assert sorted(p.name for p in out.iterdir()) == ["aa-1.json", "aa-2.json"]


def test_resume_with_runs_it_does_not_plan_is_refused(build: Path, tmp_path: Path, run_cli) -> None:
    """--aa-runs 3, then --resume with --aa-runs 2: the live report left aa-3.json out,
    --from of the same folder counted it."""
    out = tmp_path / "st"
    assert run_selftest(run_cli, build, "--out", out, "--aa-runs", "3").status == 0
    done = run_selftest(run_cli, build, "--out", out, "--resume")
    assert done.status == 2 and "aa-3.json" in last_line(done)


def test_resume_at_another_commit_stops_after_one_run(build: Path, tmp_path: Path, run_cli) -> None:
    """The kept runs were made at another commit: --resume made every run left and only then
    refused the mix. Now its first run is compared with the kept ones and not written."""
    out = tmp_path / "st"
    assert run_selftest(run_cli, build, "--out", out).status == 0
    gone = ["inject-0.05-1.json", "inject-0.02-1.json"]
    for name in gone:
        (out / name).unlink()
    for kept in out.glob("*.json"):
        edited(kept, kernelwatch_git_commit="fedcba9876543210fedcba9876543210fedcba98")
    binary = build / "bench" / "kernelwatch_bench_fam0"
    before = fakebench.runs(binary)
    done = run_selftest(run_cli, build, "--out", out, "--resume")
    line = last_line(done)
    assert done.status == 2 and "is not written" in line and "commit" in line, line
    assert "fedcba9876543210" in line and "use that commit or name another --out" in line
    assert fakebench.runs(binary) == before + 2  # one run, two processes
    assert not any((out / name).exists() for name in gone)


@pytest.mark.parametrize("seconds", ["nan", "-inf", "-3"])
def test_a_wall_time_that_is_no_duration_is_not_shown(
    tmp_path: Path, run_cli, seconds: str
) -> None:
    """ "nan" was shown as nan s in the text and as null in the JSON."""
    folder = tmp_path / "st"
    folder.mkdir()
    edited(saved_run(folder, "aa", 1, QUIET, seed=1), kernelwatch_run_seconds=seconds)
    saved_run(folder, "aa", 2, QUIET, seed=2)
    done = run_cli("selftest", "--from", folder)
    assert done.status == 0, done.err
    [row] = [line for line in done.out.splitlines() if line.strip().startswith("aa-1.json")]
    assert row.split()[1:] == ["-", "5", "2", "-", "s"]
