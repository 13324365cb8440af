"""A verdict means the same from every command: `compare` of a saved result, `report` of it and
`run`'s own verdict (verdict.find_baseline, judge_result) give every benchmark the same verdict,
reason and limit, on the committed H200 baseline and real runs of its cards."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import GPU_DATA, REPO, Run
from kernelwatch import verdict
from kernelwatch.compare import Report
from kernelwatch.loading import from_documents
from kernelwatch.results import resolve_metric

BASELINES = REPO / "baselines"
BASELINE = BASELINES / "nvidia-h200-sm90"
# A card the pooled baseline holds a run of (baselines/README.md): compared by that run.
HELD_CARD = GPU_DATA / "h200-card-5a0b92fa-marked-plain" / "plain.json.gz"


def load(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt") as f:
        document: dict[str, Any] = json.load(f)
    return document


def filtered(document: dict[str, Any], family: str, factor: float = 1.0) -> dict[str, Any]:
    """`run --filter '^FAMILY'` as it writes it, every time `factor` times as long."""
    part = copy.deepcopy(document)
    part["context"]["kernelwatch_filter"] = f"^{family}"
    part["context"].pop("kernelwatch_whole_build", None)
    part["benchmarks"] = [r for r in part["benchmarks"] if r["run_name"].startswith(family)]
    for row in part["benchmarks"]:
        row["real_time"] *= factor
    return part


def judged_as_run(document: dict[str, Any], label: str) -> Report:
    """What `kernelwatch run` decides for this result (commands/run.py, _finish)."""
    config = verdict.suite_config(None, BASELINES)
    judging = verdict.Judging(resolve_metric("time"), verdict.settings(config))
    names = {r["run_name"] for r in document["benchmarks"]}
    found = verdict.find_baseline(BASELINES, document["context"], label, names)
    base = verdict.baseline_side(found)
    return verdict.judge_result(base, from_documents(label, [document]), judging, found)


def rows(report: Report) -> dict[str, tuple[str, str]]:
    return {c.name: (c.verdict.value, c.reason) for c in report.comparisons}


def test_a_filtered_run_on_a_held_card_is_judged_by_that_cards_run_in_every_command(
    run_cli: Callable[..., Run], tmp_path: Path
) -> None:
    """`run --filter` (and `report`) judged against the baseline cut down to the part, whose
    processes that held none of it were dropped: the pool's runs could no longer be told apart,
    so a card the baseline holds was held to the spread between 13 hosts (limit 1.5 %) where
    `compare` of the same saved file held it to its own run (1.0 %). Every occupancy benchmark
    1.5 % slower: `compare` exit 1 with 9 REGRESSION, `run` exit 0, all SAME."""
    document = filtered(load(HELD_CARD), "occupancy/", 1.015)
    contender = tmp_path / "part.json"
    contender.write_text(json.dumps(document))
    done = run_cli("compare", BASELINE, contender, "--format", "json")
    by_compare = json.loads(done.out)
    by_run = judged_as_run(document, str(contender))
    assert {b["name"]: (b["verdict"], b["reason"]) for b in by_compare["benchmarks"]} == rows(
        by_run
    )
    assert done.status == by_run.exit_status == 1
    assert "the baseline holds a run on this card: compared with that run (process level)" in (
        by_run.notes
    )
    assert list(by_run.notes) == by_compare["notes"]


def test_report_of_a_filtered_run_shows_compares_verdicts(tmp_path: Path) -> None:
    """The page's table is the comparison `compare` prints, row for row, notes and all."""
    pytest.importorskip("matplotlib")
    from kernelwatch.report import Options, build_page

    document = filtered(load(HELD_CARD), "local_memory/", 0.988)
    contender = tmp_path / "part.json"
    contender.write_text(json.dumps(document))
    config = verdict.suite_config(None, BASELINES)
    judging = verdict.Judging(resolve_metric("time"), verdict.settings(config))
    page = build_page(
        Options(result=contender, judging=judging, baselines=BASELINES, db=None),
        find_changes=None,
    )
    assert page.comparison is not None
    by_run = judged_as_run(document, str(contender))
    assert rows(page.comparison) == rows(by_run)
    # -1.2 %, past its own run's 1.0 %: an IMPROVEMENT that the hosts' 1.5 % called SAME
    name = "local_memory/register_capped/n:16777216/rounds:8/manual_time"
    assert rows(page.comparison)[name][0] == "IMPROVEMENT"
    assert page.comparison.notes == by_run.notes


def test_a_rerun_that_repeats_the_run_confirms_what_it_flagged() -> None:
    """`run --confirm` judged its re-run against the baseline cut down to the flagged
    benchmarks, which could no longer tell the pool's runs apart: on a card the baseline holds,
    the run was judged by the card's own run (limit 1.0 %), the re-run by the spread between
    13 hosts (block:32: 2.8 %). Every occupancy benchmark 1.5 % slower, re-run with the very same values:
    18 REGRESSION, 0 confirmed (SLOWER, exit 0)."""
    document = copy.deepcopy(load(HELD_CARD))
    for row in document["benchmarks"]:
        if row["run_name"].startswith("occupancy/"):
            row["real_time"] *= 1.015
    config = verdict.suite_config(None, BASELINES)
    judging = verdict.Judging(resolve_metric("time"), verdict.settings(config))
    names = {r["run_name"] for r in document["benchmarks"]}
    found = verdict.find_baseline(BASELINES, document["context"], "run.json", names)
    run = from_documents("run.json", [document])
    report = verdict.judge_result(verdict.baseline_side(found), run, judging, found)
    flagged = {c.name for c in report.comparisons if c.verdict.value == "REGRESSION"}
    assert len(flagged) == 18 and all(n.startswith("occupancy/") for n in flagged)

    def rerun(k: int, chosen: Any) -> Any:
        again = copy.deepcopy(document)
        again["benchmarks"] = [r for r in again["benchmarks"] if r["run_name"] in set(chosen)]
        return from_documents(f"confirm-{k}.json", [again])

    confirmed = verdict.confirm(report, found, judging, rerun, 1)
    assert {c.name for c in confirmed.comparisons if c.confirmed} == flagged
    assert confirmed.exit_status == 1


@pytest.mark.parametrize(
    ("gate", "rows_of"),
    [
        # 3 repetitions a side, 50 % slower: a test that cannot reach alpha, so an unverified
        # REGRESSION, which fails (and reads REGRESSION, not SLOWER) under 2x only with --strict
        ("--strict", {"BM_slow": ([1000.0, 1010.0, 1020.0], [1500.0, 1510.0, 1520.0])}),
        # the contender lacks BM_gone: MISSING fails unless allowed
        (
            "--allow-missing",
            {"BM_kept": ([1000.0] * 5, [1000.0] * 5), "BM_gone": ([1000.0] * 5, None)},
        ),
        (
            "--allow-errors",
            {"BM_kept": ([1000.0] * 5, [1000.0] * 5), "BM_bad": ([1000.0] * 5, "x")},
        ),
    ],
)
def test_report_takes_compares_gates_and_shows_its_verdicts(
    run_cli: Callable[..., Run], tmp_path: Path, gate: str, rows_of: dict[str, Any]
) -> None:
    """`compare --strict` failed an unverified slowdown that the report of the same inputs
    showed as SLOWER on a passing page: the report took none of compare's gates, so no page
    could show compare's verdicts where a gate was given."""
    from conftest import synthetic
    from kernelwatch.gbench import failed_row

    context = {"gpu_name": "NVIDIA H100 80GB HBM3", "gpu_compute_capability": "9.0"}
    for side, path in ((0, tmp_path / "base.json"), (1, tmp_path / "run.json")):
        rows: list[dict[str, Any]] = []
        for name, sides in rows_of.items():
            times = sides[side]
            if times == "x":
                rows.append(failed_row(name, "wrong result"))
            elif times is not None:
                rows += synthetic.benchmark_rows(name, times, time_unit="us")
        synthetic.write(path, synthetic.document(rows, context))
    seen = []
    for given in ([], [gate]):
        inputs = (tmp_path / "base.json", tmp_path / "run.json", *given)
        compared = json.loads(run_cli("compare", *inputs, "--format", "json").out)["summary"]
        out = tmp_path / "r.html"
        base = ("--baseline", tmp_path / "base.json")
        reported = run_cli("report", tmp_path / "run.json", *base, *given, "-o", out)
        assert reported.status == 0, reported.err
        said = ", ".join(f"{n} {v}" for v, n in compared["counts"].items() if n)
        assert f"; against {tmp_path / 'base.json'}: {said};" in reported.out
        kind = "bad" if compared["failed"] else "good"
        assert f'<div class="box {kind}">' in out.read_text(encoding="utf-8")
        seen.append((compared["counts"], compared["failed"]))
    assert seen[0] != seen[1]  # (the gate decides here)
