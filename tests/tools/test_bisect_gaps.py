"""`kernelwatch bisect`'s gaps: a commit too close to call (UNSURE) on what is hunted, and BAD
regressing two benchmarks that two commits made slower (the histories of test_bisect)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import fakebench
import pytest
from kernelwatch import ab, bisect, runner
from kernelwatch.compare import Settings, Verdict
from kernelwatch.results import resolve_metric
from kernelwatch.verdict import Judging
from test_ab import BENCHMARKS, SLOWED
from test_bisect import History, history, run_bisect, temporary  # noqa: F401 (fixtures)

OTHER = "fake/kernel/1/manual_time"


def test_each_regression_of_bad_gets_its_own_first_bad_commit(
    tmp_path, monkeypatch, temporary, run_cli
) -> None:
    """Commit 3 slows OTHER, commit 5 SLOWED: BAD regresses both. bisect named commit 3 and
    said nothing of SLOWED, which commit 3 does not make slower."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    both = {OTHER: 1.25, SLOWED: 1.25}
    behaviour = {3: {"slow": {OTHER: 1.25}}, 4: {"slow": {OTHER: 1.25}}, 5: {"slow": both}}
    repo = History(tmp_path / "repo", slow_from=99, behaviour={**behaviour, 6: {"slow": both}})
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6])
    assert done.status == 0, done.out + done.err
    lines = done.out.splitlines()
    out = tmp_path / "out"
    assert lines == [
        f"first bad commit: {repo.shas[3]} commit 3",
        f"its comparison with {repo.shas[1]} ({repo.shas[1][:12]}): "
        f"{out / repo.shas[3][:12] / 'compare.txt'}",
        f"it regresses 1 of the 2 benchmark(s) BAD regresses: {OTHER}",
        f"first bad commit: {repo.shas[5]} commit 5",
        f"its comparison with {repo.shas[1]} ({repo.shas[1][:12]}): "
        f"{out / repo.shas[5][:12] / 'compare.txt'}",
        f"it regresses 1 of the 2 benchmark(s) BAD regresses: {SLOWED}",
    ]
    assert "does not regress 1 of BAD's regressions" in done.err
    # The second hunt judges the commits the first measured from their findings (no GPU
    # time), and measures the others for SLOWED only.
    assert "; measured before)" in done.err
    assert (out / "bisect.log").is_file() and (out / "bisect-2.log").is_file()
    for folder in out.iterdir():
        first_round = folder / "B" / "round-1.json"
        if first_round.is_file():
            names = {r["run_name"] for r in json.loads(first_round.read_text())["benchmarks"]}
            assert names in (set(BENCHMARKS), {SLOWED})


def plan(**changes) -> bisect.Plan:
    return dataclasses.replace(
        bisect.Plan(
            filter="^fake/",
            bench=(),
            rounds=2,
            settings=runner.RunSettings(repetitions=4),
            judging=Judging(resolve_metric("real_time"), Settings()),
            cmake_args=(),
            targets=(),
            command_line="kernelwatch bisect",
            confirm=2,
            hunted=(SLOWED,),
        ),
        **changes,
    )


def unsure_in(monkeypatch, calls: int) -> list[int]:
    """The comparison of a commit says UNSURE for SLOWED in its first `calls` judgements (a
    change too close to call), then what it measured."""
    real = ab.judge_rounds
    made: list[int] = []

    def judge_rounds(measured: ab.Rounds, judging: Judging):
        report = real(measured, judging)
        made.append(len(list(measured.folders[1].glob("round-*.json"))))  # B's rounds
        if len(made) > calls:
            return report
        rows = tuple(
            c._replace(verdict=Verdict.UNSURE, failed=False) if c.name == SLOWED else c
            for c in report.comparisons
        )
        return dataclasses.replace(report, comparisons=rows)

    monkeypatch.setattr(ab, "judge_rounds", judge_rounds)
    return made


def oracle_of(repo: History, out: Path, **changes) -> bisect.Oracle:
    good = ab.prepare_side(repo.root, "A", repo.shas[1])
    judge_by = bisect.oracle(plan(**changes), repo.root, good, out)
    judge_by.build(good, ab.build_log(good))
    return judge_by


def test_an_unsure_commit_is_measured_again(history, monkeypatch, tmp_path) -> None:
    """Commit 3 makes SLOWED slower, but its first rounds leave it UNSURE: it counted as good,
    and git named commit 4 first bad with full confidence. Now --confirm more rounds of each
    side measure SLOWED alone, and every round judged again finds it bad."""
    made = unsure_in(monkeypatch, calls=1)
    judged = bisect.judge(oracle_of(history, tmp_path / "out"), history.shas[3])
    assert judged.verdict == "bad", judged
    assert made == [2, 4]  # 2 rounds, then 2 more
    folder = tmp_path / "out" / history.shas[3][:12]
    assert sorted(p.name for p in (folder / "B").iterdir()) == [
        f"round-{k}.json" for k in range(1, 5)
    ]
    rows = json.loads((folder / "B" / "round-4.json").read_text())["benchmarks"]
    assert {r["run_name"] for r in rows} == {SLOWED}
    assert (
        "1 benchmark(s) UNSURE measured in 2 more round(s)" in (folder / "compare.txt").read_text()
    )


def test_a_commit_still_unsure_is_skipped(history, monkeypatch, tmp_path) -> None:
    made = unsure_in(monkeypatch, calls=99)
    out = tmp_path / "out"
    judged = bisect.judge(oracle_of(history, out), history.shas[3])
    assert (judged.verdict, judged.exit_code, judged.unsure) == ("skip", bisect.SKIP, (SLOWED,))
    assert judged.detail == f"unsure: 1 too close to call after 4 round(s): {SLOWED}"
    assert made == [2, 4]
    # git lists it among the candidates as what it is, not as "could not be measured".
    said = bisect.candidate_said(out, history.shas[3], True, (SLOWED,))
    assert said == f"unsure: too close to call after 4 round(s): {SLOWED}"
    # Judged again (a later hunt): from its findings, nothing measured.
    again = bisect.judge(oracle_of(history, out), history.shas[3])
    assert again.verdict == "skip" and again.detail.endswith("; measured before")
    assert made == [2, 4]


def test_without_confirming_rounds_an_unsure_commit_is_skipped(
    history, monkeypatch, tmp_path
) -> None:
    made = unsure_in(monkeypatch, calls=99)
    judged = bisect.judge(oracle_of(history, tmp_path / "out", confirm=0), history.shas[3])
    assert judged.verdict == "skip" and judged.unsure == (SLOWED,)
    assert made == [2]


def test_unsure_on_a_benchmark_not_hunted_is_no_reason_to_skip(
    history, monkeypatch, tmp_path
) -> None:
    made = unsure_in(monkeypatch, calls=99)
    judged = bisect.judge(oracle_of(history, tmp_path / "out", hunted=(OTHER,)), history.shas[2])
    assert judged.verdict == "good" and made == [2]


@pytest.mark.parametrize(
    ("slow", "strict", "expected"),
    [
        ({SLOWED: 1.25}, False, "good"),  # unverified and under 2x: SLOWER, not failing
        ({SLOWED: 1.25}, True, "bad"),  # --strict fails it: REGRESSION
        ({name: 1.25 for name in BENCHMARKS}, False, "bad"),  # five SLOWER: the suite fails
    ],
)
def test_a_commit_is_bad_exactly_where_ab_fails_it(
    tmp_path, monkeypatch, temporary, run_cli, slow, strict, expected
) -> None:
    """3 repetitions a side cannot reach alpha (the smallest p is 0.1): +25 % past a 5 % limit
    is an unverified REGRESSION, failing only with --strict. ab exits as `compare A/ B/` of its
    folders does; bisect's step (Judgement.exit_code) must exit alike. Five benchmarks each 25 %
    slower fail ab as a suite while no row fails: bisect called that commit good."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    repo = History(tmp_path / "repo", slow_from=99, behaviour={3: {"slow": slow}})
    # One process a side measures no spread: without the process prior's floor (7x for these
    # 100 ns fakes) the limit is the 5 % threshold.
    decide = ["--threshold", "5%", "--noise-multiplier", "0", *(["--strict"] if strict else [])]
    settings = Settings(threshold=0.05, noise_multiplier=0, strict=strict)
    judge_by = oracle_of(
        repo,
        tmp_path / "out",
        rounds=1,
        settings=runner.RunSettings(repetitions=3),
        judging=Judging(resolve_metric("real_time"), settings),
        hunted=(),  # as when BAD's regression is only the suite's
    )
    judged = bisect.judge(judge_by, repo.shas[3])
    folder = tmp_path / "out" / repo.shas[3][:12]
    ab_exit = run_cli("compare", folder / "A", folder / "B", "--metric", "real_time", *decide)
    assert (judged.verdict, judged.exit_code) == (expected, ab_exit.status), judged


def test_a_regression_of_the_suite_alone_is_bisected(
    tmp_path, monkeypatch, temporary, run_cli
) -> None:
    """Commit 3 makes all five benchmarks 25 % slower, none verified (3 repetitions a side):
    `ab` fails BAD as a suite. bisect said BAD showed no regression: nothing to bisect."""
    fakebench.no_nvidia_smi(monkeypatch)
    monkeypatch.chdir(tmp_path)
    slow = {"slow": {name: 1.25 for name in BENCHMARKS}}
    repo = History(tmp_path / "repo", slow_from=99, behaviour={k: slow for k in range(3, 7)})
    # 1 round a side (the last --rounds given counts): the limit is the threshold, as above
    decide = ["--threshold", "5%", "--noise-multiplier", "0", "--repetitions", 3, "--rounds", 1]
    done = run_bisect(run_cli, repo, repo.shas[1], repo.shas[6], *decide)
    assert done.status == 0, done.out + done.err
    assert done.out.splitlines()[0] == f"first bad commit: {repo.shas[3]} commit 3"
    assert "BAD regresses (regression of the suite: " in done.err, done.err
