"""Confirming regressions by re-running them (kernelwatch.verdict), and how reports show it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

import numpy as np
from conftest import H100_CONTEXT, merged, result_set
from kernelwatch import baseline as baselines
from kernelwatch import render
from kernelwatch.compare import Report, Settings, Verdict, compare
from kernelwatch.loading import from_documents
from kernelwatch.verdict import Judging, confirm, confirm_regressions
from kernelwatch.results import resolve_metric

TIME = resolve_metric("time")
NAMES = [f"BM_{i}" for i in range(6)]


def times(median: float, seed: int) -> list[float]:
    return (median * np.random.default_rng(seed).lognormal(0.0, 0.002, 10)).tolist()


def side(slow: dict[str, float], seed: int, names: Sequence[str] = NAMES, label: str = "s"):
    spec = {
        n: times((100.0 + 10 * NAMES.index(n)) * slow.get(n, 1.0), seed + i)
        for i, n in enumerate(names)
    }
    return result_set(spec, label)


BASE = side({}, 0, label="base")


def first_report(slow: dict[str, float]) -> Report:
    return compare(BASE, side(slow, 100), TIME, Settings())


class Reruns:
    """rerun(k, names): compares a re-run where `slow_at[k]` benchmarks are slow."""

    def __init__(self, slow_at: dict[int, dict[str, float]]) -> None:
        self.slow_at = slow_at
        self.calls: list[tuple[int, list[str]]] = []

    def __call__(self, k: int, names: Sequence[str]) -> Report:
        self.calls.append((k, list(names)))
        base = side({}, 0, names, "base")
        again = side(self.slow_at.get(k, {}), 200 + k, names, f"rerun{k}")
        return compare(base, again, TIME, Settings())


def test_confirmed_regression_still_fails() -> None:
    report = first_report({"BM_2": 1.2})
    rerun = Reruns({1: {"BM_2": 1.2}})
    confirmed = confirm_regressions(report, rerun, 1)
    assert rerun.calls == [(1, ["BM_2"])]
    row = confirmed.comparisons[0]
    assert row.verdict is Verdict.REGRESSION and row.confirmed is True and row.failed
    assert row.reason.startswith("confirmed by 1 re-run(s) (REGRESSION +20.0%)")
    assert confirmed.exit_status == 1
    assert "1 confirmed, 0 not confirmed" in confirmed.notes[-1]


def test_one_off_regression_is_shown_but_does_not_fail() -> None:
    report = first_report({"BM_2": 1.2, "BM_4": 1.3})
    assert report.exit_status == 1
    rerun = Reruns({1: {"BM_4": 1.3}})
    confirmed = confirm_regressions(report, rerun, 1)
    rows = {c.name: c for c in confirmed.comparisons}
    assert rows["BM_4"].confirmed is True and rows["BM_4"].failed
    assert rows["BM_2"].confirmed is False and not rows["BM_2"].failed
    assert rows["BM_2"].verdict is Verdict.SLOWER  # the word says it does not fail
    assert rows["BM_2"].reason.startswith("not confirmed: re-run gave SAME")
    assert [c.name for c in confirmed.comparisons[:2]] == ["BM_4", "BM_2"]  # confirmed first
    assert confirmed.exit_status == 1
    only_one_off = confirm_regressions(first_report({"BM_2": 1.2}), Reruns({}), 1)
    assert only_one_off.exit_status == 0


def test_every_rerun_must_regress() -> None:
    report = first_report({"BM_1": 1.2, "BM_3": 1.2})
    rerun = Reruns({1: {"BM_1": 1.2, "BM_3": 1.2}, 2: {"BM_3": 1.2}, 3: {"BM_3": 1.2}})
    confirmed = confirm_regressions(report, rerun, 3)
    assert rerun.calls == [(1, ["BM_1", "BM_3"]), (2, ["BM_1", "BM_3"]), (3, ["BM_3"])]
    rows = {c.name: c for c in confirmed.comparisons}
    assert rows["BM_3"].confirmed and rows["BM_1"].confirmed is False
    assert "re-run gave REGRESSION +20.0%, SAME" in rows["BM_1"].reason


def test_nothing_to_confirm_or_disabled() -> None:
    calm = first_report({})
    assert confirm_regressions(calm, Reruns({}), 3) is calm
    slow = first_report({"BM_2": 1.2})
    rerun = Reruns({})
    assert confirm_regressions(slow, rerun, 0) is slow and rerun.calls == []


def test_reports_say_what_was_confirmed() -> None:
    report = confirm_regressions(
        first_report({"BM_2": 1.2, "BM_4": 1.3}), Reruns({1: {"BM_4": 1.3}}), 1
    )
    table = render.render_table(report, command="run")
    assert table.startswith("kernelwatch run: real_time")
    assert "not confirmed: re-run gave SAME" in table and "confirmed by 1 re-run(s)" in table
    markdown = render.render_markdown(report, command="run")
    assert markdown.startswith(
        "### kernelwatch run: 1 regression (confirmed by a re-run), 1 SLOWER (not confirmed)"
    )
    doc = json.loads(render.render_json(report, command="run"))
    assert doc["tool"]["command"] == "run"
    confirmed = {b["name"]: b["confirmed"] for b in doc["benchmarks"]}
    assert confirmed["BM_4"] is True and confirmed["BM_2"] is False and confirmed["BM_0"] is None
    suite_element = ET.fromstring(render.render_junit(report, command="run")).find("testsuite")
    assert suite_element.get("name") == "kernelwatch.run.real_time"
    assert suite_element.get("failures") == "1"
    only_unconfirmed = confirm_regressions(first_report({"BM_2": 1.2}), Reruns({}), 1)
    assert render.render_markdown(only_unconfirmed, command="run").startswith(
        "### kernelwatch run: no regression, 1 SLOWER (not confirmed)"
    )


def test_a_rerun_that_crashes_leaves_the_first_verdict_failing() -> None:
    """Re-run 1 loses BM_2 to a crash and measures BM_4 again: BM_2 stays a failing REGRESSION,
    not confirmed either way; BM_4 is judged by what finished; a second re-run skips BM_2."""
    from kernelwatch.verdict import RerunCrashed

    report = first_report({"BM_2": 1.2, "BM_4": 1.2})
    calls: list[list[str]] = []

    def rerun(k: int, names: Sequence[str]) -> Report:
        calls.append(list(names))
        if k == 1:
            finished = Reruns({1: {"BM_4": 1.2}})(k, ["BM_4"])
            raise RerunCrashed({"BM_2": "bench: crashed (SIGSEGV): boom"}, 3, report=finished)
        return Reruns({k: {"BM_4": 1.2}})(k, names)

    confirmed = confirm_regressions(report, rerun, 2)
    assert calls == [["BM_2", "BM_4"], ["BM_4"]]
    rows = {c.name: c for c in confirmed.comparisons}
    crashed = rows["BM_2"]
    assert (crashed.verdict, crashed.failed, crashed.confirmed, crashed.crashed) == (
        Verdict.REGRESSION,
        True,
        None,
        True,
    )
    assert crashed.reason.startswith(
        "not confirmed either way: re-run 1 crashed: bench: crashed (SIGSEGV): boom; first run +"
    )
    assert rows["BM_4"].confirmed is True and rows["BM_4"].failed
    assert confirmed.notes[-1].endswith(
        "1 confirmed, 0 not confirmed, 1 whose re-run crashed (still failing, as the first run "
        "judged)"
    )


def test_a_rerun_of_a_few_benchmarks_is_held_as_the_whole_run_was() -> None:
    # H100 one-GPU hosts, a one-run baseline: the whole run (60 benchmarks) tells its card's
    # kind; a re-run of the one it flagged cannot (fewer than kinds.MIN_SHARED), and was held to
    # the unseen-kind prior: a real +3 % past a 1.8 % limit re-judged within 5.2 %, exit 0.
    medians = {f"fam{i}/size:{j}": 100.0 * (1 + i) + j for i in range(20) for j in range(3)}
    slow = "fam5/size:1"

    def run(context: dict[str, Any], names: Sequence[str], seed: int) -> Any:
        rng = np.random.default_rng(seed)
        spec = {
            n: [
                (
                    medians[n]
                    * (1.03 if n == slow else 1.0) ** (seed > 0)
                    * rng.lognormal(0, 5e-4, 5)
                ).tolist()
                for _ in (1, 2)
            ]
            for n in names
        }
        return merged(spec, None, context)

    on = {
        card: dict(H100_CONTEXT, host_gpu_count="1", gpu_uuid=card, host_gpu_uuids=card)
        for card in ("GPU-a", "GPU-b")
    }
    base = run(on["GPU-a"], list(medians), 0)
    found = baselines.Against("base", "given", [base], None, None)
    judging = Judging(TIME, Settings())
    first = compare(
        from_documents("base", [base]),
        from_documents("run", [run(on["GPU-b"], list(medians), 1)]),
        TIME,
        Settings(),
    )
    assert {c.name: c.verdict for c in first.comparisons}[slow] is Verdict.REGRESSION

    def rerun(k: int, names: Sequence[str]) -> Any:
        context = dict(on["GPU-b"], kernelwatch_filter=f"^{slow}$")
        return from_documents(f"rerun{k}", [run(context, names, 10 + k)])

    final = confirm(first, found, judging, rerun, 1)
    row = {c.name: c for c in final.comparisons}[slow]
    assert row.verdict is Verdict.REGRESSION and row.confirmed, row.reason
    assert final.exit_status == 1
