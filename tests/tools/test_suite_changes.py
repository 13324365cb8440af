"""A pull request that changes the suite itself, as its developer sees it: a real H200 run
(tests/data/gpu), edited as the changed suite's run would come out, judged against the pooled
H200 baseline of its time (b9b23ab's seven cards, tests/data/gpu/h200-baseline-b9b23ab) by the
verdict path of `kernelwatch run` and by `compare`, through the Markdown report and the PR
comment (docs/ci.md, "When a pull request changes the suite")."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import GPU_DATA, REPO, Run

from kernelwatch import completeness, results, runner, verdict
from kernelwatch.compare import Report, Verdict
from kernelwatch.gbench import read_json
from kernelwatch.loading import from_documents
from kernelwatch.render import render_markdown
from kernelwatch.results import resolve_metric

BASELINES = GPU_DATA / "h200-baseline-b9b23ab"  # a baselines folder: the H200 one alone
BASELINE = BASELINES / "nvidia-h200-sm90"
SUITE_TOML = REPO / "baselines" / "kernelwatch.toml"  # the suite's thresholds, as committed
# A second run on a card the baseline pools (compared with that card's run: process level),
# and a run on a card it does not hold (compared with the runs on cards of its kind).
OWN_CARD = GPU_DATA / "h200-suite-card-a5b8dffa-second-run.json.gz"
OTHER_CARD = GPU_DATA / "h200-suite-card-54f59374.json.gz"
CONFIG = ["--config", SUITE_TOML]

COALESCING = "coalescing/offset/double/offset:17/manual_time"
TRANSPOSE = "transpose/copy_rows/rows:2048/cols:2048/block_rows:8/manual_time"

pytestmark = pytest.mark.skipif(
    not (OWN_CARD.is_file() and OTHER_CARD.is_file() and (BASELINE / "result.json.gz").is_file()),
    reason="the real H200 runs and baseline are not in this checkout",
)


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = read_json(path)
    return document


def rows(document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    found = [r for r in document["benchmarks"] if r["run_name"] == name]
    assert found, name
    return found


def slowed(document: dict[str, Any], name: str, factor: float) -> None:
    """`name` `factor` times slower, its rates with it."""
    for row in rows(document, name):
        row["real_time"] *= factor
        for counter in ("bytes_per_second", "elements_per_second", "ceiling_fraction"):
            if counter in row:
                row[counter] /= factor


def judging() -> verdict.Judging:
    config = verdict.suite_config(SUITE_TOML)
    return verdict.Judging(resolve_metric("time"), verdict.settings(config))


def judged(document: dict[str, Any], label: str = "pr.json") -> Report:
    """What `kernelwatch run` decides for this result (commands/run.py, _finish)."""
    names = {r["run_name"] for r in document["benchmarks"]}
    found = verdict.find_baseline(BASELINES, document["context"], label, names)
    contender = from_documents(label, [document])
    return verdict.judge_result(verdict.baseline_side(found), contender, judging(), found)


def whole(document: dict[str, Any]) -> dict[str, Any]:
    """The run as `run` of the whole suite writes it now: it says that every benchmark its
    binaries register ran (the committed runs predate the key)."""
    document["context"][completeness.WHOLE_BUILD_KEY] = "true"
    return document


def of(report: Report, verdict_: Verdict) -> dict[str, Any]:
    return {c.name: c for c in report.comparisons if c.verdict is verdict_}


def compared(run_cli: Callable[..., Run], tmp_path: Path, document: dict[str, Any]) -> Run:
    contender = tmp_path / "pr.json"
    contender.write_text(json.dumps(document))
    return run_cli(
        "compare",
        BASELINE,
        contender,
        *CONFIG,
        "--markdown",
        tmp_path / "pr.md",
        "--format",
        "json",
    )


def test_a_new_benchmark_is_shown_not_judged_and_says_what_to_do(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    document = load(OWN_CARD)
    added = COALESCING.replace("offset:17", "offset:99")
    for row in copy.deepcopy(rows(document, COALESCING)):
        document["benchmarks"].append({**row, "name": added, "run_name": added})
    report = judged(document)
    assert not report.failed and list(of(report, Verdict.NEW)) == [added]
    assert of(report, Verdict.NEW)[added].reason == "not in the baseline"
    assert any(
        n.startswith("1 NEW benchmark(s) not in the baseline: not judged") for n in report.notes
    )

    done = compared(run_cli, tmp_path, document)
    assert done.status == 0, done.err
    markdown = (tmp_path / "pr.md").read_text()
    # probe/empty_kernel, +6.5 % in this second run of unchanged code: past its limit, and its
    # tied repetitions cannot reach significance alone among 356 (docs/compare.md, "Power")
    assert markdown.startswith("### kernelwatch compare: no regression, 1 SLOWER (not failing)\n")
    assert f"| **NEW** | `{added}` |" in markdown
    assert "1 NEW benchmark(s) not in the baseline: not judged until the baseline holds them" in (
        markdown
    )
    body = run_cli("comment", tmp_path / "pr.md", "--gpu", "nvidia-h200-sm90")
    assert body.status == 0 and "1 NEW benchmark(s) not in the baseline" in body.out


def test_a_renamed_argument_is_missing_and_new_and_names_the_rename(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    document = whole(load(OWN_CARD))
    for row in document["benchmarks"]:
        if row["run_name"].startswith("reduction/"):
            row["name"] = row["run_name"] = row["run_name"].replace("/n:", "/size:")
    report = judged(document)
    missing, new = of(report, Verdict.MISSING), of(report, Verdict.NEW)
    assert len(missing) == len(new) == 34 and not any(c.failed for c in missing.values())
    assert {c.reason for c in missing.values()} == {"not in this build: removed or renamed"}
    assert not of(report, Verdict.REGRESSION) and report.exit_status == 0
    (note,) = [n for n in report.notes if n.startswith("34 MISSING")]
    assert "not in this build (removed or renamed): not failing" in note and "a rename?" in note
    assert "--drop-missing" in note

    done = compared(run_cli, tmp_path, document)
    assert done.status == 0 and done.err == ""
    markdown = (tmp_path / "pr.md").read_text()
    # probe/empty_kernel, +6.5 % in this second run of unchanged code: past its limit, and its
    # tied repetitions cannot reach significance alone among 356 (docs/compare.md, "Power")
    assert markdown.startswith("### kernelwatch compare: no regression, 1 SLOWER (not failing)\n")
    assert "| **MISSING** | `reduction/" in markdown and "a rename?" in markdown
    body = run_cli("comment", tmp_path / "pr.md", "--gpu", "nvidia-h200-sm90")
    assert (
        body.status == 0
        and "### kernelwatch compare: no regression, 1 SLOWER (not failing)\n" in body.out
    )
    assert "| **MISSING** | `reduction/" in body.out


def test_a_result_that_does_not_say_it_ran_the_whole_build_fails_its_missing() -> None:
    """A result that says neither that it ran its whole build nor which part it ran (a merged
    result, an older run): a benchmark it lacks may have crashed or been left out, not removed."""
    document = load(OWN_CARD)
    for row in document["benchmarks"]:
        if row["run_name"].startswith("reduction/"):
            row["name"] = row["run_name"] = row["run_name"].replace("/n:", "/size:")
    report = judged(document)
    missing = of(report, Verdict.MISSING)
    assert len(missing) == 34 and all(c.failed for c in missing.values())
    assert report.exit_status == 1
    (note,) = [n for n in report.notes if n.startswith("34 MISSING")]
    assert "drop them from the baseline" in note and "a rename?" in note


def test_a_removed_benchmark_passes_without_the_rename_hint(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    document = whole(load(OWN_CARD))
    document["benchmarks"] = [r for r in document["benchmarks"] if r["run_name"] != COALESCING]
    report = judged(document)
    assert list(of(report, Verdict.MISSING)) == [COALESCING] and report.exit_status == 0
    (note,) = [n for n in report.notes if "MISSING" in n]
    assert note.startswith("1 MISSING benchmark(s) not in this build") and "rename?" not in note

    done = compared(run_cli, tmp_path, document)  # compare of the saved result: the same
    assert done.status == 0, done.err
    assert {(b["name"], b["verdict"], b["failed"]) for b in json.loads(done.out)["benchmarks"]} == {
        (c.name, c.verdict.value, c.failed) for c in report.comparisons
    }


def crashed(document: dict[str, Any], names: list[str], line: str) -> dict[str, Any]:
    """The partial result `run` writes when the process of `names` crashed (completeness.keep_partial)."""
    document["benchmarks"] = [r for r in document["benchmarks"] if r["run_name"] not in names]
    document["context"][results.FAILED_KEY] = [line]
    document["context"][results.NO_RESULT_KEY] = names
    return document


CRASH = "build/bench/kernelwatch_bench_coalescing: crashed (SIGSEGV): no message"


# --- a part of the suite: judged alike by every command -------------------------------------------

# The two ways a run covers a part, as its context records them (baseline.ran_a_part).
PARTS = {
    "filter": ("kernelwatch_filter", "^coalescing/", lambda n: n.startswith("coalescing/")),
    "host-bound left to GPU 0": (
        results.HOST_BOUND_ON_KEY,
        "GPU 0 (NVIDIA H200, GPU-7f7c6807-4d0a-46a4-e695-5f23de83bc70)",
        lambda n: not n.startswith("transfers/"),
    ),
}


def part_of(document: dict[str, Any], part: str) -> dict[str, Any]:
    """The result `run --filter` (or GPU 1 of `run --gpus all`) writes: its rows alone, and
    what it left out in its context."""
    key, value, kept = PARTS[part]
    document["benchmarks"] = [r for r in document["benchmarks"] if kept(r["run_name"])]
    document["context"][key] = value
    return document


@pytest.mark.parametrize("part", PARTS)
def test_compare_judges_a_part_of_the_suite_as_run_judged_it(
    run_cli: Callable[..., Run], tmp_path: Path, part: str
) -> None:
    """`run` judges a part against the part of the baseline it ran (verdict.find_baseline); a
    `compare` of its saved result failed every other benchmark of the baseline as MISSING
    (GPU 1 of a two-GPU H200 host: `run` exit 0, 312 SAME; `compare` exit 1, 44 MISSING)."""
    document = part_of(load(OTHER_CARD), part)
    by_run = judged(copy.deepcopy(document))
    done = compared(run_cli, tmp_path, document)
    assert (done.status, by_run.exit_status) == (0, 0), done.err
    report = json.loads(done.out)
    assert {b["name"]: b["verdict"] for b in report["benchmarks"]} == {
        c.name: c.verdict.value for c in by_run.comparisons
    }
    held = {r["run_name"] for r in load(BASELINE / "result.json.gz")["benchmarks"]}
    left = len(held - {r["run_name"] for r in document["benchmarks"]})
    assert left > 0 and any(
        n.startswith(f"{left} benchmark(s) of the baseline outside the part")
        for n in report["notes"]
    )


def test_a_crash_inside_a_part_of_the_suite_still_fails_as_the_crash(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """What the part left out is not compared; what its crashed process took is."""
    document = part_of(load(OTHER_CARD), "filter")
    lost = sorted({r["run_name"] for r in document["benchmarks"]})[:3]
    done = compared(run_cli, tmp_path, crashed(document, lost, CRASH))
    assert done.status == 1, done.err
    rows = {b["name"]: b for b in json.loads(done.out)["benchmarks"]}
    assert all((rows[n]["verdict"], rows[n]["crashed"]) == ("ERROR", True) for n in lost)
    assert not any(b["verdict"] == "MISSING" for b in rows.values())


def test_a_crashed_benchmark_of_a_saved_partial_result_fails_as_the_crash(
    run_cli: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run` exits 3 and compares nothing; `compare` and `report` of what it kept show the
    benchmarks without a result as the crash (not as removed, nor as MISSING)."""
    names = {r["run_name"] for r in load(OWN_CARD)["benchmarks"]}
    coalescing = sorted(n for n in names if n.startswith("coalescing/"))
    document = crashed(whole(load(OWN_CARD)), coalescing, CRASH)
    done = compared(run_cli, tmp_path, document)
    assert done.status == 1, done.err
    rows = {b["name"]: b for b in json.loads(done.out)["benchmarks"]}
    for name in coalescing:
        assert (rows[name]["verdict"], rows[name]["failed"], rows[name]["crashed"]) == (
            "ERROR",
            True,
            True,
        )
        assert rows[name]["reason"] == f"crashed: {tmp_path / 'pr.json'}: {CRASH}"
    assert not any(b["verdict"] == "MISSING" for b in rows.values())
    markdown = (tmp_path / "pr.md").read_text()
    assert markdown.splitlines()[0].endswith(f" regression, {len(coalescing)} crashed")

    pytest.importorskip("matplotlib")
    from kernelwatch import history
    from kernelwatch.report import Options, build_page

    monkeypatch.setattr(history, "default_path", lambda: tmp_path / "no-history.sqlite")
    page = build_page(
        Options(
            result=tmp_path / "pr.json",  # written by compared()
            judging=judging(),
            baselines=BASELINES,
        )
    )
    assert page.comparison is not None
    shown = {c.name: c for c in page.comparison.comparisons}
    assert all(shown[n].crashed and shown[n].failed for n in coalescing)


def test_counters_are_not_the_gate() -> None:
    """Bytes per iteration doubled (bandwidth x2, time unchanged), a counter added, one removed:
    the time metric does not move, and nothing fails."""
    before = judged(load(OWN_CARD))
    document = load(OWN_CARD)
    for row in rows(document, COALESCING):
        row["bytes_per_second"] *= 2
    for row in document["benchmarks"]:
        if row["run_name"].startswith("coalescing/"):
            row["l2_hit_fraction"] = 0.5
        if row["run_name"].startswith("transpose/"):
            del row["bytes_per_second"]
    after = judged(document)
    assert not after.failed
    assert [(c.name, c.verdict) for c in after.comparisons] == [
        (c.name, c.verdict) for c in before.comparisons
    ]


def test_other_harness_settings_are_warned_and_fewer_repetitions_noted() -> None:
    document = load(OWN_CARD)
    document["context"]["kernelwatch_max_time"] = "0.5"
    document["context"]["kernelwatch_noise_target"] = "0.01"
    report = judged(document)
    assert not report.failed
    assert "different max time (s): baseline 0.25, this run 0.5" in report.warnings
    assert "different noise target: baseline 0.005, this run 0.01" in report.warnings

    fewer = load(OWN_CARD)  # one process of five repetitions instead of two
    fewer["benchmarks"] = [r for r in fewer["benchmarks"] if r["kernelwatch_process"] == 1]
    report = judged(fewer)
    assert not report.failed
    assert any(
        n.startswith("356 of 356 benchmark(s) cannot reach significance alone, most as 10 and 5 ")
        for n in report.notes
    ), report.notes


@pytest.mark.parametrize("card", [OWN_CARD, OTHER_CARD], ids=["own-card", "other-card"])
def test_a_benchmark_declared_host_bound_by_the_change_says_so(card: Path) -> None:
    document = load(card)
    for row in rows(document, COALESCING):
        row["host_bound"] = 1.0
    slowed(document, COALESCING, 1.2)
    own = card == OWN_CARD
    c = of(judged(document), Verdict.REGRESSION if own else Verdict.SLOWER)[COALESCING]
    assert "host-bound (in the contender only)" in c.reason
    # against the baseline's other hosts a host-bound change does not fail; on its own card's
    # host it fails like any other (docs/compare.md)
    assert c.failed is own


def test_a_benchmark_no_longer_declared_host_bound_keeps_the_baselines_declaration() -> None:
    document = load(OTHER_CARD)
    pinned = "transfers/h2d/pinned/bytes:67108864/manual_time"
    for row in document["benchmarks"]:
        row.pop("host_bound", None)
    slowed(document, pinned, 1.2)
    c = of(judged(document), Verdict.SLOWER)[pinned]
    assert not c.failed and "host-bound (in the baseline only), baseline not from" in c.reason


@pytest.mark.parametrize("card", [OWN_CARD, OTHER_CARD], ids=["own-card", "other-card"])
def test_three_percent_slower_fails_and_ten_percent_faster_shows(
    card: Path, run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """Against the pooled baseline: on a card it holds (that card's run) and on another card
    (the runs on cards of its kind)."""
    document = load(card)
    slowed(document, COALESCING, 1.03)
    slowed(document, TRANSPOSE, 1 / 1.10)
    report = judged(document)
    regression = of(report, Verdict.REGRESSION)[COALESCING]
    assert regression.failed and 1.025 < (regression.ratio or 0) < 1.05
    assert TRANSPOSE in of(report, Verdict.IMPROVEMENT) and report.exit_status == 1
    markdown = render_markdown(report, command="run")
    assert f"| **REGRESSION** | `{COALESCING}` |" in markdown
    assert f"| **IMPROVEMENT** | `{TRANSPOSE}` |" in markdown


def test_a_partial_update_of_the_pooled_baseline_is_refused(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """Adding a benchmark with `baseline update --filter` from one run would give the 356 it
    keeps that run's card: the unchanged run on that card then got 86 REGRESSIONs."""
    root = tmp_path / "baselines"
    shutil.copytree(BASELINES, root)
    before = {p.name: p.read_bytes() for p in (root / "nvidia-h200-sm90").iterdir()}
    document = load(OWN_CARD)
    added = "coalescing/newkernel/double/manual_time"
    for row in copy.deepcopy(rows(document, COALESCING)):
        document["benchmarks"].append({**row, "name": added, "run_name": added})
    run = tmp_path / "pr.json"
    run.write_text(json.dumps(document))
    done = run_cli(
        "baseline", "update", run, "--filter", "^coalescing/newkernel/", "--baselines", root
    )
    assert done.status == 2 and done.err.count("\n") == 1
    assert "1 run(s) on 1 card(s) of 1 host(s), the baseline 7 run(s) on 7 card(s)" in done.err
    assert "update it whole" in done.err
    assert {p.name: p.read_bytes() for p in (root / "nvidia-h200-sm90").iterdir()} == before


def test_a_reviewer_compares_the_baseline_a_pull_request_brings_with_the_old(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """The recipe of docs/ci.md: the base branch's result.json against the pull request's, with
    --allow-missing (a baseline that drops benchmarks)."""
    old = tmp_path / "old.json.gz"
    shutil.copy(BASELINE / "result.json.gz", old)
    root = tmp_path / "baselines"
    shutil.copytree(BASELINES, root)
    document = load(OWN_CARD)
    slowed(document, COALESCING, 1.03)
    run = tmp_path / "pr.json"
    run.write_text(json.dumps(document))
    done = run_cli("baseline", "update", run, "--drop-missing", "--baselines", root)
    assert done.status == 0, done.err
    assert "7 run(s) on 7 card(s)" in done.err  # the pool replaced by one run: warned
    review = run_cli(
        "compare",
        old,
        root / "nvidia-h200-sm90" / "result.json.gz",
        *CONFIG,
        "--allow-missing",
        "--format",
        "json",
    )
    assert review.status in (0, 1), review.err
    moved = {b["name"]: b for b in json.loads(review.out)["benchmarks"]}
    assert moved[COALESCING]["ratio"] > 1.02
