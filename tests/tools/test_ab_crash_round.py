"""A round of `ab` in which a side's only benchmark binary crashed writes a crash-only round file
(no rows; its context names the crash): `compare` of ab's folders fails on that crash as it
fails on any partial result's, and the other commands given such a file refuse it in one line
or count it as a crash, never drop it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fakebench
import pytest
from conftest import H100_CONTEXT
from kernelwatch import ab
from kernelwatch.errors import InputError
from kernelwatch.loading import load
from kernelwatch.results import FAILED_KEY, NO_RESULT_KEY
from test_ab import BENCHMARKS, SLOWED, Repo, one_error, report_of, repo, run_ab  # noqa: F401

FAILURE = "kernelwatch_bench_fake: killed by SIGSEGV"


def b_only_binary(repo: Repo, monkeypatch, **behaviour: Any) -> None:
    """B's only binary (the fake) behaves as `behaviour` says; A's measures as usual."""

    def build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        if side.name == "B":
            fakebench.configure(side.build_dir / "bench" / "kernelwatch_bench_fake", **behaviour)

    monkeypatch.setattr(ab, "cmake_build", build)


def crash_only(names: list[str] | None = None, **context: Any) -> dict[str, Any]:
    """A round file as ab writes it where no process of the round finished."""
    crash = {FAILED_KEY: [FAILURE], NO_RESULT_KEY: list(BENCHMARKS) if names is None else names}
    return {
        "context": {"kernelwatch_run_purpose": "ab B round 2 of 3", **crash, **context},
        "benchmarks": [],
    }


def crashed_rows(rows: dict[str, dict], names: Any = BENCHMARKS) -> list[dict]:
    return [rows[name] for name in names]


# --- ab and compare of its folders ------------------------------------------------------------


def test_a_round_whose_only_binary_crashed_is_kept_and_compare_fails_on_it(
    repo: Repo, run_cli, monkeypatch, tmp_path: Path
) -> None:
    """B's only binary crashes in round 2 of 3: ab writes B/round-2.json with no rows and the
    crash in its context, and `compare A/ B/` of the folders fails on the crash (exit 1, as for
    any partial result; --allow-errors does not pass it), every benchmark of the binary an ERROR
    naming the crash, where before the round was simply not there (all SAME but kernel 3)."""
    b_only_binary(repo, monkeypatch, slow={SLOWED: 1.2}, signal="SIGSEGV", signal_runs=[1])
    done = run_ab(run_cli, repo, repo.a, repo.b, "--confirm", 0, "--json", tmp_path / "ab.json")
    assert done.status == 3, done.out + done.err
    for row in crashed_rows(report_of(tmp_path / "ab.json")):
        assert row["verdict"] == "ERROR" and row["failed"] and row["crashed"], row
        assert row["reason"].startswith("crashed: B round 2 of 3: "), row
    out = repo.root.parent / "out"
    assert sorted(p.name for p in (out / "B").iterdir()) == [f"round-{k}.json" for k in (1, 2, 3)]
    written = json.loads((out / "B" / "round-2.json").read_text())
    assert written["benchmarks"] == []
    context = written["context"]
    assert context[NO_RESULT_KEY] == list(BENCHMARKS)
    assert len(context[FAILED_KEY]) == 1 and "SIGSEGV" in context[FAILED_KEY][0]
    assert context["kernelwatch_run_purpose"] == "ab B round 2 of 3"
    assert context["kernelwatch_ab_sha"] == repo.b

    judged = run_cli(
        "compare", out / "A", out / "B", "--json", tmp_path / "c.json", "--allow-errors"
    )
    assert judged.status == 1, judged.out + judged.err
    assert "Traceback" not in judged.err
    for row in crashed_rows(report_of(tmp_path / "c.json")):
        assert row["verdict"] == "ERROR" and row["failed"] and row["crashed"], row
        assert row["reason"].startswith(f"crashed: {out / 'B'}: "), row
        assert "SIGSEGV" in row["reason"] and "the runs that finished: " in row["reason"], row
    warnings = json.loads((tmp_path / "c.json").read_text())["warnings"]
    said = f"{out / 'B'}: a partial result, {len(BENCHMARKS)} benchmark(s) without a result: "
    assert any(w.startswith(said) for w in warnings), warnings
    # The side is still one card and host: the crash-only round names neither.
    assert not any("record" in w and "GPU" in w for w in warnings), warnings
    markdown = run_cli("compare", out / "A", out / "B", "--format", "markdown")
    assert markdown.status == 1
    assert markdown.out.startswith(
        f"### kernelwatch compare: no regression, {len(BENCHMARKS)} crashed"
    )


def test_every_round_of_bs_only_binary_crashed(repo: Repo, run_cli, monkeypatch, tmp_path) -> None:
    """Nothing of B finished: ab still says which rounds crashed (exit 3), B's folder holds a
    crash-only file per round, and compare of the folders fails on every benchmark's crash."""
    b_only_binary(repo, monkeypatch, exit=3)
    done = run_ab(run_cli, repo, repo.a, repo.b, rounds=2)
    assert done.status == 3, done.out + done.err
    out = repo.root.parent / "out"
    for k in (1, 2):
        written = json.loads((out / "B" / f"round-{k}.json").read_text())
        assert written["benchmarks"] == [] and written["context"][NO_RESULT_KEY] == list(BENCHMARKS)
        assert "lost its CUDA context" in written["context"][FAILED_KEY][0]
    judged = run_cli("compare", out / "A", out / "B", "--json", tmp_path / "c.json")
    assert judged.status == 1, judged.out + judged.err
    for row in crashed_rows(report_of(tmp_path / "c.json")):
        assert row["verdict"] == "ERROR" and row["failed"] and row["crashed"], row
        assert row["reason"].startswith(f"crashed: {out / 'B'}: "), row
        assert "lost its CUDA context" in row["reason"], row
        assert "(and 1 more failed process(es)" in row["reason"], row  # round 2's too


def test_every_round_of_both_sides_crashed(repo: Repo, run_cli) -> None:
    """Neither side measured anything: ab's one line (exit 3) as before, each round kept as a
    crash-only file, and compare of the folders fails on the contender's crash (measured on
    neither side, and B's crash said)."""
    repo.extra = {"exit": 3}
    done = run_ab(run_cli, repo, repo.a, repo.b, rounds=2)
    assert done.status == 3 and "lost its CUDA context" in one_error(done.err)
    out = repo.root.parent / "out"
    for side in ("A", "B"):
        assert sorted(p.name for p in (out / side).iterdir()) == ["round-1.json", "round-2.json"]
    judged = run_cli("compare", out / "A", out / "B", "--format", "json")
    assert judged.status == 1, judged.out + judged.err
    rows = {row["name"]: row for row in json.loads(judged.out)["benchmarks"]}
    for row in crashed_rows(rows):
        assert row["verdict"] == "ERROR" and row["failed"] and row["crashed"], row
        assert row["reason"].startswith(f"crashed: {out / 'B'}: "), row


def test_a_crash_only_baseline_round_fails_nothing(
    repo: Repo, run_cli, monkeypatch, tmp_path
) -> None:
    """A's only binary crashes every round: compare of the folders shows each benchmark as the
    baseline's crash, not compared and not failing, as ab does."""

    def build(side: ab.Side, log: Path, **options: Any) -> None:
        repo.build(side, log)
        if side.name == "A":
            fakebench.configure(side.build_dir / "bench" / "kernelwatch_bench_fake", exit=3)

    monkeypatch.setattr(ab, "cmake_build", build)
    done = run_ab(run_cli, repo, repo.a, repo.b, "--json", tmp_path / "ab.json", rounds=2)
    assert done.status == 3, done.out + done.err
    out = repo.root.parent / "out"
    judged = run_cli("compare", out / "A", out / "B", "--json", tmp_path / "c.json")
    assert judged.status == 0, judged.out + judged.err
    for name in ("ab.json", "c.json"):
        for row in crashed_rows(report_of(tmp_path / name)):
            assert row["verdict"] == "ERROR" and not row["failed"] and row["crashed"], row
            assert (
                row["reason"].startswith("baseline crashed: ") and "not compared" in row["reason"]
            )


# --- the loader: exactly a crash-only file, nothing looser --------------------------------------


def test_a_crash_only_file_loads_with_its_crash(write_json) -> None:
    side = load(write_json("B/round-2.json", crash_only()))
    assert len(side) == 0
    assert side.context[NO_RESULT_KEY] == list(BENCHMARKS)


def test_a_crash_only_round_does_not_stand_for_its_folder(write_json, tmp_path: Path) -> None:
    """The side's context is that of a round that measured (its card), with every round's crash;
    the crash-only round is not another card of another model."""
    write_json("B/round-1.json", crash_only())
    write_json("B/round-2.json", {name: [t, t] for name, t in BENCHMARKS.items()})
    side = load(tmp_path / "B")
    assert side.context["gpu_name"] == H100_CONTEXT["gpu_name"]
    assert side.context[NO_RESULT_KEY] == list(BENCHMARKS)
    assert side.context[FAILED_KEY] == [FAILURE]
    assert "gpu_uuid" not in side.context or side.context["gpu_uuid"] == H100_CONTEXT.get(
        "gpu_uuid"
    )


@pytest.mark.parametrize(
    "context",
    [
        {},  # no crash list: the error it always was
        {FAILED_KEY: [FAILURE]},
        {NO_RESULT_KEY: list(BENCHMARKS)},
        {FAILED_KEY: [], NO_RESULT_KEY: list(BENCHMARKS)},
        {FAILED_KEY: [FAILURE], NO_RESULT_KEY: []},
        {FAILED_KEY: FAILURE, NO_RESULT_KEY: list(BENCHMARKS)},
        {FAILED_KEY: [FAILURE], NO_RESULT_KEY: "fake/kernel/0/manual_time"},
        {FAILED_KEY: [FAILURE], NO_RESULT_KEY: [1, 2]},
        {FAILED_KEY: [""], NO_RESULT_KEY: list(BENCHMARKS)},
        {FAILED_KEY: [FAILURE], NO_RESULT_KEY: [""]},
    ],
)
def test_an_empty_file_without_a_whole_crash_list_is_refused(write_json, run_cli, context) -> None:
    empty = write_json("empty.json", {"context": context, "benchmarks": []})
    with pytest.raises(InputError, match=f"^{empty}: holds no benchmark results"):
        load(empty)
    done = run_cli("compare", write_json("good.json", {"BM_a": [1.0, 1.1]}), empty)
    assert done.status == 2 and one_error(done.err).startswith(
        f"kernelwatch: error: {empty}: holds no benchmark results"
    )
    if not context:  # exactly the line it was
        assert done.err == f"kernelwatch: error: {empty}: holds no benchmark results\n"


def test_compare_with_a_crash_only_file_fails_on_its_crash(write_json, run_cli) -> None:
    base = write_json("base.json", {name: [t, t, t] for name, t in BENCHMARKS.items()})
    crashed = write_json("crashed.json", crash_only())
    done = run_cli("compare", base, crashed, "--format", "json", "--allow-errors")
    assert done.status == 1, done.err
    rows = {row["name"]: row for row in json.loads(done.out)["benchmarks"]}
    for row in crashed_rows(rows):
        assert row["verdict"] == "ERROR" and row["failed"] and row["crashed"], row
        assert row["reason"] == f"crashed: {crashed}: {FAILURE}", row


# --- the other commands given a crash-only file ----------------------------------------------


def test_merge_refuses_a_crash_only_file(write_json, run_cli, tmp_path: Path) -> None:
    crashed = write_json("crashed.json", crash_only())
    done = run_cli("merge", crashed, "-o", tmp_path / "merged.json")
    assert done.status == 2 and str(crashed) in one_error(done.err)
    assert not (tmp_path / "merged.json").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "ingest", "--db", "{tmp}/history.sqlite"],
        ["report", "-o", "{tmp}/page.html", "--baselines", "{tmp}/baselines"],
        ["baseline", "update", "--baselines", "{tmp}/baselines"],
        ["export", "--format", "bmf", "-o", "{tmp}/export.json"],
    ],
    ids=["history ingest", "report", "baseline update", "export"],
)
def test_commands_that_keep_a_run_refuse_a_crash_only_file(
    write_json, run_cli, tmp_path: Path, argv: list[str]
) -> None:
    """Nothing finished, so there is nothing to store, show or make a baseline of: one line
    that names the crash (exit 2), nothing written."""
    crashed = write_json("crashed.json", crash_only())
    (tmp_path / "baselines").mkdir()
    done = run_cli(*[a.format(tmp=tmp_path) for a in argv], crashed)
    assert done.status == 2, done.out + done.err
    line = one_error(done.err)
    assert line == (
        f"kernelwatch: error: {crashed}: holds no benchmark results: every benchmark process of "
        f"its run failed ({FAILED_KEY}: {FAILURE}); measure it again"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baselines", "crashed.json"]
    assert not any((tmp_path / "baselines").iterdir())


def test_export_of_a_partial_result_says_what_crashed(write_json, run_cli) -> None:
    """A run's result after a crash exported its other benchmarks without a word: a dashboard
    fed them took the crashed ones for removed."""
    kept = dict(list(BENCHMARKS.items())[:1])
    lost = list(BENCHMARKS)[1:]
    partial = write_json(
        "partial.json",
        {name: [t, t, t] for name, t in kept.items()},
        context={**H100_CONTEXT, FAILED_KEY: [FAILURE], NO_RESULT_KEY: lost},
    )
    done = run_cli("export", partial, "--format", "bmf")
    assert done.status == 0, done.err
    assert (
        f"kernelwatch: note: {len(lost)} benchmark(s) of its run have no result, their process "
        f"having failed ({NO_RESULT_KEY}): not exported\n"
    ) in done.err
