"""The measurement scripts (scripts/*.py) as a user who gets their input wrong gives them: a
missing file, a file that is not a result, one run where two are needed, and runs of another
level than the one a spread is printed for. Bad input is one line on stderr and a non-zero
exit, never a traceback; a spread is printed for the level its runs measure."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, TOOLS, merged

SCRIPTS = REPO / "scripts"
# More benchmarks than kinds.MIN_SHARED, so that two runs' kinds can be told apart.
NAMES = [f"family/bench_{i}" for i in range(24)]


def script(name: str, *args: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(TOOLS), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, str(SCRIPTS / name), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def one_line_error(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert says in done.stderr, done.stderr


def run_file(
    path: Path,
    card: str,
    host: str,
    scale: float = 1.0,
    processes: int = 2,
    names: list[str] = NAMES,
) -> Path:
    """A `kernelwatch run` result of `processes` processes on `card` of the host whose GPUs are
    `host`: each benchmark 100 us (and 1 us more per index) times `scale`, the processes 0.1 %
    apart."""
    spec = {
        name: [[(100.0 + i) * scale * (1 + 0.001 * p)] * 5 for p in range(processes)]
        for i, name in enumerate(names)
    }
    context = {"gpu_name": "NVIDIA H200", "gpu_uuid": card, "host_gpu_uuids": host}
    path.write_text(json.dumps(merged(spec, context=context)))
    return path


def levels_printed(out: str) -> dict[str, float]:
    """The relative part of each level derive_prior.py printed, as a fraction."""
    found = re.findall(r"^(process|card|kind|host|unseen kind)\b.*?relative ([\d.]+)%", out, re.M)
    return {level: float(value) / 100 for level, value in found}


# --- derive_prior.py ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["derive_prior.py", "lone_changes.py"])
def test_a_missing_file_is_one_line(tmp_path: Path, name: str) -> None:
    run = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    one_line_error(script(name, run, tmp_path / "missing.json"), "missing.json")


@pytest.mark.parametrize(
    ("name", "text"),
    [("derive_prior.py", '{"something": "else"}'), ("lone_changes.py", '{"benchmarks": []}')],
)
def test_a_file_that_is_not_a_result_is_one_line(tmp_path: Path, name: str, text: str) -> None:
    run = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    other = tmp_path / "other.json"
    other.write_text(text)
    one_line_error(script(name, run, other), "other.json")


def test_derive_prior_refuses_a_run_of_one_process(tmp_path: Path) -> None:
    """Its process level is the spread of each run's per-process medians: a run of one process
    measured none, and was silently left out of it (all of them: no process line at all)."""
    a = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    b = run_file(tmp_path / "b.json", "GPU-b", "GPU-b", processes=1)
    one_line_error(script("derive_prior.py", a, b), "b.json")


def test_derive_prior_prints_no_host_level_for_two_runs_of_one_card(tmp_path: Path) -> None:
    """The same file twice (or two runs of one card) crosses no card and no host: it printed a
    host (and kind) spread of 0 % as if measured between hosts."""
    a = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    done = script("derive_prior.py", a, a)
    assert done.returncode == 0, done.stderr
    printed = levels_printed(done.stdout)
    assert "process" in printed
    assert not {"card", "kind", "host", "unseen kind"} & set(printed), done.stdout


def test_derive_prior_calls_two_cards_of_one_host_the_card_level(tmp_path: Path) -> None:
    """Both GPUs of one host: the spread between them is the card level (docs/measurement.md's
    "0.447 % + 200 ns (card level)"), which the script printed as the host level."""
    a = run_file(tmp_path / "a.json", "GPU-a", "GPU-a,GPU-b")
    b = run_file(tmp_path / "b.json", "GPU-b", "GPU-a,GPU-b", scale=1.01)
    done = script("derive_prior.py", a, b)
    assert done.returncode == 0, done.stderr
    printed = levels_printed(done.stdout)
    assert "card" in printed and "host" not in printed, done.stdout
    assert abs(printed["card"] - 0.01 / 1.005 / 2**0.5) < 2e-4


def test_derive_prior_takes_the_host_level_between_hosts_not_between_cards(
    tmp_path: Path,
) -> None:
    """Two cards of one host 2 % apart and a third host at their mean: the hosts' means agree,
    so the host level is 0; the spread of the three runs (0.99 %) is the cards' and was printed
    as the host level."""
    a = run_file(tmp_path / "a.json", "GPU-a", "GPU-a,GPU-b", scale=0.99)
    b = run_file(tmp_path / "b.json", "GPU-b", "GPU-a,GPU-b", scale=1.01)
    c = run_file(tmp_path / "c.json", "GPU-c", "GPU-c")
    done = script("derive_prior.py", a, b, c)
    assert done.returncode == 0, done.stderr
    printed = levels_printed(done.stdout)
    assert printed["host"] < 1e-4, done.stdout
    assert abs(printed["card"] - 0.02 / 2**0.5) < 2e-4, done.stdout


def test_derive_prior_tells_no_kind_from_too_few_benchmarks(tmp_path: Path) -> None:
    """Under kinds.MIN_SHARED shared benchmarks no two runs can be told of one kind, so every
    run was a kind of its own and the gap between two hosts printed as the unseen-kind prior."""
    few = NAMES[:5]
    a = run_file(tmp_path / "a.json", "GPU-a", "GPU-a", names=few)
    b = run_file(tmp_path / "b.json", "GPU-b", "GPU-b", scale=1.001, names=few)
    done = script("derive_prior.py", a, b)
    assert done.returncode == 0, done.stderr
    assert "unseen kind" not in levels_printed(done.stdout), done.stdout


# --- leave_one_host_out.py, lone_changes.py -------------------------------------------------


def test_leave_one_host_out_refuses_a_file_that_is_not_a_result(tmp_path: Path) -> None:
    run = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    one_line_error(script("leave_one_host_out.py", run, other), "other.json")


@pytest.mark.parametrize("confidence", ["1", "0.2", "nan"])
def test_leave_one_host_out_refuses_a_confidence_that_bounds_nothing(
    tmp_path: Path, confidence: str
) -> None:
    run = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    done = script("leave_one_host_out.py", "--upper-bound-confidence", confidence, run, run)
    one_line_error(done, "--upper-bound-confidence")


def test_leave_one_host_out_refuses_class_pools_it_cannot_make(tmp_path: Path) -> None:
    """--class-hosts needs hosts of both classes and K below the smaller class's count."""
    runs = [run_file(tmp_path / f"{c}.json", f"GPU-{c}", f"GPU-{c}") for c in "ab"]
    one_line_error(
        script("leave_one_host_out.py", "--class-hosts", "1", *runs), "hosts of both classes"
    )
    for card, count in (("c", "2"), ("d", "1")):
        path = run_file(tmp_path / f"{card}.json", f"GPU-{card}", f"GPU-{card}")
        document = json.loads(path.read_text())
        document["context"]["host_gpu_count"] = count
        path.write_text(json.dumps(document))
    both = [tmp_path / "c.json", tmp_path / "d.json"]
    for k in ("0", "1"):  # one host of each class: none to judge
        one_line_error(script("leave_one_host_out.py", "--class-hosts", k, *both), "1 to 0")


def test_lone_changes_refuses_a_shift_that_is_not_a_number(tmp_path: Path) -> None:
    run = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    one_line_error(script("lone_changes.py", run, run, "5%"), "5%")


# --- precision_table.py ---------------------------------------------------------------------


def test_precision_table_refuses_an_argument_without_a_label(tmp_path: Path) -> None:
    run = run_file(tmp_path / "a.json", "GPU-a", "GPU-a")
    one_line_error(script("precision_table.py", run), "LABEL=RUN.json")


def test_precision_table_refuses_no_runs() -> None:
    """It printed an empty table and exited 0."""
    one_line_error(script("precision_table.py"), "LABEL=RUN.json")


def test_precision_table_refuses_a_missing_file_in_one_line(tmp_path: Path) -> None:
    one_line_error(script("precision_table.py", f"x={tmp_path / 'missing.json'}"), "missing.json")


# --- process_levels.py ----------------------------------------------------------------------


def test_process_levels_refuses_no_runs_a_missing_file_and_a_result_without_context(
    tmp_path: Path,
) -> None:
    one_line_error(script("process_levels.py"), "RUN.json")
    one_line_error(script("process_levels.py", tmp_path / "missing.json"), "missing.json")
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"benchmarks": []}))
    one_line_error(script("process_levels.py", bare), "no context")


def test_process_levels_counts_a_slow_process_under_its_own_setting(tmp_path: Path) -> None:
    """One card, run interleaved and not: the interleaved run's third process sits 2 % above
    the others in one benchmark; the not-interleaved run's four processes agree."""
    for setting, slow in (("true", 1.02), ("false", 1.0)):
        spec = {
            "reduction/slow": [[100.0 * (slow if p == 2 else 1.0)] * 5 for p in range(4)],
            "reduction/steady": [[50.0] * 5 for _ in range(4)],
        }
        context = {"gpu_uuid": "GPU-a", "kernelwatch_random_interleaving": setting}
        (tmp_path / f"{setting}.json").write_text(json.dumps(merged(spec, context=context)))
    done = script("process_levels.py", tmp_path / "true.json", tmp_path / "false.json")
    assert done.returncode == 0, done.stderr
    rows = {tuple(cell.strip() for cell in line.split("|")[1:-1]) for line in done.stdout.splitlines()
            if line.startswith("| GPU-a")}  # fmt: skip
    assert ("GPU-a", "true", "reduction", "2", "4", "0.50 / 0.99 %", "1", "1") in rows
    assert ("GPU-a", "false", "reduction", "2", "4", "0.00 / 0.00 %", "0", "0") in rows
    assert "GPU-a true reduction/slow: 1, +2.0 %" in done.stdout
    assert "GPU-a reduction: median +0.00 %, largest +0.00 % (2 benchmarks)" in done.stdout


# --- anchor_replay.py -----------------------------------------------------------------------


def test_anchor_replay_refuses_a_folder_without_rounds(tmp_path: Path) -> None:
    """A mistyped AB_DIR held no rounds: it printed "too few rounds" and exited 0."""
    baseline = REPO / "baselines" / "nvidia-h200-sm90"
    one_line_error(script("anchor_replay.py", tmp_path / "nothing", baseline), "nothing")


def test_anchor_replay_refuses_a_count_that_is_not_a_number(tmp_path: Path) -> None:
    baseline = REPO / "baselines" / "nvidia-h200-sm90"
    one_line_error(script("anchor_replay.py", tmp_path, baseline, "two"), "two")


def test_anchor_replay_refuses_a_missing_baseline_in_one_line(tmp_path: Path) -> None:
    for side in ("A", "B"):
        (tmp_path / side).mkdir()
        run_file(tmp_path / side / "round-1.json", "GPU-a", "GPU-a", processes=1)
    one_line_error(script("anchor_replay.py", tmp_path, tmp_path / "missing"), "missing")


def test_kind_subsets_refuses_a_result_of_one_run(tmp_path: Path) -> None:
    """It measures kinds between a pooled baseline's runs: one run has none to measure."""
    one = run_file(tmp_path / "one.json", "GPU-a", "GPU-a")
    one_line_error(script("kind_subsets.py", one), "not a baseline pooled from several runs")
    one_line_error(script("kind_subsets.py", tmp_path / "absent.json"), "absent.json")
