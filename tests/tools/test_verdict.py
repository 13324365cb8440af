"""One verdict whichever command is asked (issue 29): `compare`, `run`, `report`, `ab` and
`history changes` judge through verdict.py, with the suite's kernelwatch.toml found the same
way and --config over it, so the same two files get the same verdict from each."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fakebench
import pytest
from conftest import GPU_DATA, H100_CONTEXT, REPO, Run, document

from kernelwatch import ab, changes, names, report, runner, verdict
from kernelwatch.commands import ab as ab_command
from kernelwatch.compare import Report
from kernelwatch.config import Config, threshold_for
from kernelwatch.gbench import read_json
from kernelwatch.loading import load_all
from kernelwatch.results import resolve_metric

BASELINES = REPO / "baselines"
BASELINE = BASELINES / "nvidia-h200-sm90"
# A card the baseline does not pool; its 6-10 us reductions moved 2.8 % against it, inside the
# suite's 10 % rule for them (baselines/kernelwatch.toml) but past the 1 % default.
CARD = GPU_DATA / "h200-suite-card-54f59374.json.gz"
REDUCTION = "reduction/sum/vectorized/double/n:1048576/manual_time"

needs_real_pair = pytest.mark.skipif(
    not (CARD.is_file() and (BASELINE / "result.json.gz").is_file()),
    reason="the real H200 run and baseline are not in this checkout",
)


def rows_of(run: Run) -> dict[str, dict[str, Any]]:
    assert "Traceback" not in run.err, run.err
    return {row["name"]: row for row in json.loads(run.out)["benchmarks"]}


@needs_real_pair
def test_compare_holds_a_benchmark_to_the_suites_threshold_as_run_and_report_do(
    run_cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reproduction: `compare` read no kernelwatch.toml and failed on REDUCTION (+2.8 %
    beyond a 2.7 % noise floor) where `run` and `report` said 356 SAME."""
    monkeypatch.chdir(REPO)  # the checkout: its baselines/kernelwatch.toml applies
    done = run_cli("compare", BASELINE, CARD, "--format", "json")
    assert done.status == 0, done.err
    row = rows_of(done)[REDUCTION]
    assert (row["verdict"], row["threshold"]) == ("SAME", 0.10)
    rules = json.loads(done.out)["settings"]["threshold_rules"]
    assert {"match": "^reduction/.*/n:1048576/", "threshold": 0.10} in rules


@needs_real_pair
def test_config_replaces_the_suites_for_compare(
    run_cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    plain = tmp_path / "plain.toml"
    plain.write_text('[compare]\nthreshold = "1%"\n')
    done = run_cli("compare", BASELINE, CARD, "--format", "json", "--config", plain)
    assert done.status == 0, done.err
    assert rows_of(done)[REDUCTION]["threshold"] == 0.01
    assert json.loads(done.out)["settings"]["threshold_rules"] == []


def test_compare_warns_of_other_run_settings_as_run_report_and_ab_do(
    run_cli: Callable[..., Run], write_json: Callable[..., Path]
) -> None:
    """The reproduction: a contender run with random interleaving off and another max time got
    no warning from `compare`, two from verdict.judge (`run`, `report`, `ab`)."""
    spec = {f"BM_Copy/{n}/manual_time": [100.0 + n + 0.01 * k for k in range(5)] for n in range(3)}
    settings = {"kernelwatch_random_interleaving": "true", "kernelwatch_max_time": "0.25"}
    other = {"kernelwatch_random_interleaving": "false", "kernelwatch_max_time": "1"}
    a = write_json("a.json", spec, context={**H100_CONTEXT, **settings})
    b = write_json("b.json", spec, context={**H100_CONTEXT, **other})
    done = run_cli("compare", a, b, "--format", "json")
    assert done.status == 0, done.err
    expected = [
        "different random interleaving: baseline true, this run false",
        "different max time (s): baseline 0.25, this run 1",
    ]
    assert [w for w in json.loads(done.out)["warnings"] if w.startswith("different ")] == expected
    assert [f"kernelwatch: warning: {w}" for w in expected] == [
        line for line in done.err.splitlines() if "different " in line
    ]
    base, contender = load_all([a, b])
    judging = verdict.Judging(resolve_metric("time"), verdict.settings(Config()))
    assert list(verdict.judge(base, contender, judging).warnings) == expected


# --- the "Must show" of issue 29 ----------------------------------------------------------


def families(path: Path) -> dict[str, dict[str, float]]:
    """The benchmarks of a result by family, for fake binaries that list them."""
    found: dict[str, dict[str, float]] = {}
    for row in read_json(path)["benchmarks"]:
        found.setdefault(names.family(row["run_name"]), {})[row["run_name"]] = 1000.0
    return found


def verdicts_of(report: Report) -> dict[str, str]:
    return {c.name: c.verdict.value for c in report.comparisons}


@needs_real_pair
def test_every_command_gives_the_same_pair_the_same_verdicts(
    run_cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The committed H200 baseline and a card's suite, judged by `compare`, `run` (its
    measuring replaced by the saved result), `report`, `ab`'s judging of its rounds and
    `history changes`: one verdict per benchmark, whichever command was asked."""
    monkeypatch.chdir(REPO)  # as a developer runs them: in the checkout, its config applies

    compared = run_cli("compare", BASELINE, CARD, "--format", "json")
    by_compare = {name: row["verdict"] for name, row in rows_of(compared).items()}
    assert len(by_compare) == 356 and compared.status == 0

    # run: its binaries list the card's benchmarks; what they measure is the saved result.
    fakebench.no_nvidia_smi(monkeypatch)
    build = tmp_path / "build"
    fakebench.suite(build, families(CARD))
    saved = read_json(CARD)

    class Measured:
        """runner.Measuring whose rounds measure nothing and whose result is the saved one."""

        def __init__(self, jobs: Any, settings: Any, **how: Any) -> None:
            # As run_suite merges: the caller's context keys win (runner/interleaving.py).
            self.context = {**saved["context"], **(how.get("context") or {})}
            self.rounds = settings.processes
            self.jobs = list(jobs)

        def __enter__(self) -> "Measured":
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def round(self, k: int) -> None:
            pass

        def first_context(self) -> dict:
            return self.context

        def finish(self) -> runner.SuiteRun:
            return runner.SuiteRun({**saved, "context": self.context}, tuple(self.jobs))

    monkeypatch.setattr(runner, "Measuring", Measured)
    report_json = tmp_path / "run-report.json"
    ran = run_cli(
        "run",
        "--build-dir",
        build,
        "--baselines",
        BASELINES,
        "--out",
        tmp_path / "run.json",
        "--confirm",
        0,  # the verdicts themselves: a confirming re-run would measure again
        "--anchor",
        "never",  # against the committed baseline, as compare judges (auto built 61b6fec: 134 s)
        "--json",
        report_json,
        "--format",
        "json",
    )
    assert ran.status == compared.status, ran.err
    by_run = {
        row["name"]: row["verdict"] for row in json.loads(report_json.read_text())["benchmarks"]
    }

    # report: the page's comparison, as the command built it.
    pages: list[Any] = []

    def keep_page(options: Any, out: Path) -> Any:
        pages.append(report_command_write(options, out))
        return pages[-1]

    # (the command imports write_report where it runs: patched where it comes from)
    report_command_write = report.write_report
    monkeypatch.setattr(report, "write_report", keep_page)
    db = tmp_path / "history.sqlite"  # the card's run alone: no other history is read
    ingested = run_cli("history", "ingest", CARD, "--db", db)
    assert ingested.status == 0, ingested.err
    reported = run_cli("report", CARD, "-o", tmp_path / "report.html", "--db", db)
    assert reported.status == 0, reported.err
    by_report = verdicts_of(pages[0].comparison)

    # ab: the settings its command resolves, and the function that judges its rounds, fed the
    # baseline as A's round and the card as B's.
    asked: list[Any] = []
    monkeypatch.setattr(ab_command, "run", lambda command: asked.append(command) or 0)
    assert run_cli("ab", "A", "B").status == 0
    folders = [tmp_path / "ab" / "A", tmp_path / "ab" / "B"]
    for folder, source in zip(folders, [BASELINE / "result.json.gz", CARD]):
        folder.mkdir(parents=True)
        shutil.copy(source, folder / "round-1.json")
    sides = [ab.Side(s, s, s * 40, tmp_path, tmp_path) for s in ("A", "B")]
    rounds = ab.Rounds(sides, folders, {"A": [], "B": []}, {})
    by_ab = verdicts_of(ab.judge_rounds(rounds, asked[0].judging))

    assert by_run == by_compare
    assert by_report == by_compare
    assert by_ab == by_compare

    # history changes: a pooled baseline is not a run, and a change needs runs on each side of
    # it (changes.MIN_RUNS), so it cannot judge this pair; what it shares with the others is
    # the suite's settings, which it must resolve as they do.
    refused = run_cli("history", "ingest", BASELINE / "result.json.gz", "--db", db)
    assert refused.status == 2 and "a baseline pooled from" in refused.err
    seen: dict[str, Any] = {}
    find = changes.find_changes

    def finding(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return find(*args, **kwargs)

    monkeypatch.setattr(changes, "find_changes", finding)  # as `history changes` calls it
    found = run_cli("history", "changes", "--db", db)
    assert found.status == 0 and "no change" in found.out, found.out + found.err
    judged = json.loads(compared.out)
    assert [(r.pattern.pattern, r.threshold) for r in seen["rules"]] == [
        (rule["match"], rule["threshold"]) for rule in judged["settings"]["threshold_rules"]
    ]
    for row in judged["benchmarks"]:
        if threshold_for(row["name"], seen["rules"], -1.0) != -1.0:  # a rule's, not a default
            assert threshold_for(row["name"], seen["rules"], -1.0) == row["threshold"]
