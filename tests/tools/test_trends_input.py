"""Change detection and the trends on awkward histories: runs slowed on purpose
(--kernelwatch_inject, a selftest's runs) are no point of a series, in `history changes`,
`history show` and the report's trends alike."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import H100_CONTEXT
from kernelwatch import changes, history
from kernelwatch.report import trends
from kernelwatch.results import resolve_metric

pytest.importorskip("scipy", reason="scipy is not installed (the history extra)")

NAME = "BM_A"
INJECTED = {"kernelwatch_inject": ".:0.1"}  # what the harness records of --kernelwatch_inject


def commit_of(k: int) -> str:
    return f"{k:02d}" + "c0ffee" * 6 + "ab"


@pytest.fixture
def build(tmp_path: Path, write_json: Callable[..., Path], run_cli: Any) -> Callable[..., Path]:
    """build([median of run 0, ...], contexts={k: extra context}) -> a database, one run a day
    (0.5 % apart; 10 repetitions 0.05 % apart)."""

    def make(
        medians: Sequence[float],
        contexts: Mapping[int, Mapping[str, str]] | None = None,
        db: str | None = None,
    ) -> Path:
        db = db or f"history-{len(list(tmp_path.iterdir()))}"
        contexts = contexts or {}
        folder = tmp_path / db
        folder.mkdir()
        path = folder / "history.sqlite"
        rng = np.random.default_rng(0)
        for k, median in enumerate(medians):
            center = median * math.exp(rng.normal(0.0, 0.005))
            times = [center * math.exp(rng.normal(0.0, 0.0005)) for _ in range(10)]
            context = dict(
                H100_CONTEXT,
                date=f"2026-03-{k + 1:02d}T03:17:00+00:00",
                kernelwatch_git_commit=commit_of(k),
                **contexts.get(k, {}),
            )
            result = write_json(
                f"{db}/run-{k}.json", {NAME: times}, context=context, time_unit="ns"
            )
            done = run_cli("history", "ingest", result, "--db", path)
            assert done.status == 0, done.err
        return path

    return make


def test_runs_slowed_on_purpose_make_no_change_point(build, run_cli) -> None:
    """Two runs made with --kernelwatch_inject (10 % slower) in a flat series were a REGRESSION
    at the first and an IMPROVEMENT after them: the slowdown was the injection's, not a
    commit's. A real step after them is still found, at its own run and commit."""
    db = build([100.0] * 6 + [110.0] * 2 + [100.0] * 3, {6: INJECTED, 7: INJECTED})
    with history.database(db) as connection:
        assert changes.find_changes(connection) == []
    done = run_cli("history", "changes", "--db", db)
    assert done.status == 0, done.out + done.err
    assert "note: 2 run(s) slowed down on purpose" in done.out, done.out

    stepped = build([100.0] * 6 + [115.0] * 4, {4: INJECTED, 5: INJECTED}, "stepped")
    with history.database(stepped) as connection:
        found = changes.find_changes(connection)
    assert [(c.index, c.commit, c.regression) for c in found] == [(4, commit_of(6), True)]


def test_show_says_which_run_was_slowed(build, run_cli) -> None:
    """`history show --format json` said `slowed_on_purpose: null` for a run made with
    --kernelwatch_inject (docs/history.md: a run object says what slowed it)."""
    db = build([100.0] * 3, {1: INJECTED})
    done = run_cli("history", "show", NAME, "--db", db, "--format", "json")
    assert done.status == 0, done.err
    said = [run["slowed_on_purpose"] for run in json.loads(done.out)["runs"]]
    assert said[0] is None and said[2] is None
    assert said[1] is not None and "kernelwatch_inject" in said[1]
    table = run_cli("history", "show", NAME, "--db", db).out
    [note] = [line for line in table.splitlines() if "kernelwatch_inject" in line]
    assert note.startswith("note: 2026-03-02") and "trends leave it out" in note, table


def test_report_trends_leave_slowed_runs_out(build) -> None:
    """The report's trend plot drew the slowed runs as points of the series that `history
    changes` analyses without them."""
    db = build([100.0] * 6 + [110.0] * 2, {6: INJECTED, 7: INJECTED})
    with history.database(db) as connection:
        section = trends.build(
            connection,
            gpu="nvidia-h100-80gb-hbm3-sm90",
            metric=resolve_metric("time"),
            run_names=[NAME],
            regressed=[NAME],
            references=[],
            this_run=None,
            medians={NAME: 100.0},
            find_changes=changes.find_changes,
        )
    assert [(plot.benchmark, plot.runs) for plot in section.plots] == [(NAME, 6)]
    assert section.changes == ()


def test_a_run_whose_counter_is_zero_prints_no_warning(tmp_path, write_json, run_cli) -> None:
    """One run whose bytes_per_second was 0 (a night that did not count it) had `history
    changes` print numpy's "RuntimeWarning: divide by zero encountered in log" and its source
    line on stderr (the run-to-run spread took log 0), and made that spread infinite."""
    db = tmp_path / "history.sqlite"
    for k in range(8):
        rates = [0.0 if k == 2 else 1e9 * (1 + 0.001 * i) for i in range(10)]
        context = dict(
            H100_CONTEXT,
            date=f"2026-03-{k + 1:02d}T03:17:00+00:00",
            kernelwatch_git_commit=commit_of(k),
        )
        result = write_json(
            f"run-{k}.json",
            {NAME: [100.0] * 10},
            context=context,
            counters={NAME: {"bytes_per_second": rates}},
            time_unit="ns",
        )
        assert run_cli("history", "ingest", result, "--db", db).status == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with history.database(db) as connection:
            assert changes.find_changes(connection, metric="bytes_per_second") == []


def test_a_hand_edited_anchor_phrase_is_cut_in_list_and_show(build, run_cli) -> None:
    """A 5,000-character kernelwatch_anchor (a hand-edited context) was printed whole by `history
    list` and `history show`: one line of 5,000 characters per run. The JSON keeps it whole."""
    phrase = "anchored on " + "x" * 5000
    db = build([100.0] * 2, {1: {"kernelwatch_anchor": phrase}})
    for args in (("list",), ("show", NAME)):
        done = run_cli("history", *args, "--db", db)
        assert done.status == 0, done.err
        assert max(len(line) for line in done.out.splitlines()) < 2600, args
        assert "(5,012 characters)" in done.out, args
    shown = run_cli("history", "show", NAME, "--db", db, "--format", "json")
    assert phrase in shown.out
