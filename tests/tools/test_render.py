"""Views of a report: terminal table, Markdown, JSON (its schema), JUnit."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import document, result_set
from kernelwatch import render, synthetic
from kernelwatch.compare import Settings, compare
from kernelwatch.explanation import Change, Explanation, KernelChange
from kernelwatch.loading import from_documents
from kernelwatch.results import Metric, resolve_metric
from kernelwatch.gbench import failed_row

TIME = resolve_metric("time")


def steady(median: float, seed: int = 0) -> list[float]:
    return (median * np.random.default_rng(seed).lognormal(0.0, 0.001, 10)).tolist()


@pytest.fixture(scope="module")
def report():
    error = failed_row("BM_err", 'boom <&> "quoted"')
    base = result_set(
        {
            "BM_slow|pipe": steady(1000.0),
            "BM_same": steady(2e6, 1),
            "BM_gone": steady(5.0, 2),
            "BM_err": steady(7.0, 3),
        }
    )
    cont = from_documents(
        "cont",
        [
            document(
                {
                    "BM_slow|pipe": steady(1200.0, 4),
                    "BM_same": steady(2e6, 5),
                    "BM_new": steady(9.0, 6),
                },
                rows=[error],
            )
        ],
    )
    return compare(base, cont, TIME, Settings())


def test_table(report) -> None:
    text = render.render_table(report, color=False)
    lines = text.splitlines()
    assert lines[0].startswith("kernelwatch compare: real_time (lower is better)")
    header = next(i for i, line in enumerate(lines) if line.startswith("Verdict"))
    order = [line.split()[0] for line in lines[header + 1 : header + 6]]
    assert order == ["REGRESSION", "ERROR", "MISSING", "NEW", "SAME"]  # worst first
    assert "BM_slow|pipe" in lines[header + 1] and "+20.0%" in lines[header + 1]
    assert "2.000 s" in text and "1.000 ms" in text
    assert any(
        line.startswith("Geomean change +9.5% over 2 benchmarks: 1 REGRESSION") for line in lines
    )
    assert "\033[" not in text


def test_a_row_with_nothing_measured_shows_no_kernel_line(report) -> None:
    """An IDENTICAL row (a binary built as the baseline's: not measured) with the same kernel
    says nothing more; a measured change on the same kernel says where it came from."""
    same_kernel = Explanation(kernel=KernelChange(Change.IDENTICAL))
    identical = report.with_identical({"BM_same": "built identically"})
    explained = dataclasses.replace(
        identical, explanations={"BM_same": same_kernel, "BM_slow|pipe": same_kernel}
    )
    lines = render.render_table(explained, color=False).splitlines()
    shown = [lines[i - 1].split()[1] for i, line in enumerate(lines) if "kernel identical" in line]
    assert shown == ["BM_slow|pipe"]


def test_table_colour_only_when_asked(report) -> None:
    coloured = render.render_table(report, color=True)
    assert "\033[1;31mREGRESSION" in coloured


def test_markdown(report) -> None:
    text = render.render_markdown(report)
    # the failing MISSING and ERROR rows are in the heading too: it never says less than fails
    assert text.startswith("### kernelwatch compare: 1 regression, 1 MISSING, 1 ERROR\n")
    assert "`BM_slow\\|pipe`" in text  # a pipe in a name must not split the table
    assert "<details><summary>1 unchanged (SAME)</summary>" in text
    notable = text.split("<details>")[0]
    assert "BM_same" not in notable and "**REGRESSION**" in notable


def test_markdown_heading_counts_what_fails() -> None:
    """A passing comparison's heading does not say "N regressions" for slowdowns that do not
    fail (SLOWER: unverified under 2x, host-bound against another host), and a failing one does
    not say only "no regression" when a MISSING benchmark fails it."""
    base = result_set({"BM_a": [1.0], "BM_b": [1.0], "BM_gone": steady(5.0)})
    cont = result_set({"BM_a": [1.9], "BM_b": [3.0]})
    heading = render.render_markdown(compare(base, cont, TIME, Settings())).splitlines()[0]
    assert heading == "### kernelwatch compare: 1 regression, 1 SLOWER (not failing), 1 MISSING"
    small = result_set({"BM_a": [1.9]})
    passing = compare(base, small, TIME, Settings(allow_missing=True))
    assert passing.exit_status == 0
    heading = render.render_markdown(passing).splitlines()[0]
    assert heading == "### kernelwatch compare: no regression, 1 SLOWER (not failing)"


BENCHMARK_KEYS = {
    "name",
    "level",
    "level_measured",
    "sensitivity",
    "host_bound",
    "from_summaries",
    "verdict",
    "reason",
    "failed",
    "crashed",
    "ratio",
    "change",
    "ci_low",
    "ci_high",
    "p_value",
    "q_value",
    "threshold",
    "noise_floor",
    "limit",
    "baseline",
    "contender",
}
SIDE_KEYS = {"n", "median", "robust_cv", "processes", "from_aggregates"}


def _strict(text: str) -> dict:
    def refuse(token: str) -> None:
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_json_schema(report) -> None:
    doc = _strict(render.render_json(report))
    assert doc["schema_version"] == render.SCHEMA_VERSION == 2
    assert set(doc) == {
        "schema_version",
        "tool",
        "metric",
        "settings",
        "baseline",
        "contender",
        "summary",
        "warnings",
        "notes",
        "benchmarks",
    }
    assert doc["tool"]["command"] == "compare"
    assert doc["metric"] == {"name": "real_time", "higher_is_better": False, "unit": "ns"}
    assert doc["summary"]["counts"]["REGRESSION"] == 1 and doc["summary"]["counts"]["SLOWER"] == 0
    assert doc["summary"]["suite"]["verdict"] == "SAME" and not doc["summary"]["suite"]["failed"]
    assert doc["summary"]["exit_status"] == 1 and doc["summary"]["failed"] is True
    for bench in doc["benchmarks"]:
        assert set(bench) == BENCHMARK_KEYS
        for side in ("baseline", "contender"):
            assert bench[side] is None or set(bench[side]) == SIDE_KEYS
    slow = doc["benchmarks"][0]
    assert slow["name"] == "BM_slow|pipe" and slow["verdict"] == "REGRESSION"
    assert slow["change"] == pytest.approx(0.2, rel=0.01)
    assert slow["baseline"]["median"] == pytest.approx(1e6, rel=0.01)  # ns
    missing = next(b for b in doc["benchmarks"] if b["verdict"] == "MISSING")
    assert missing["ratio"] is None and missing["baseline"] is None


def test_json_with_nothing_measured() -> None:
    a = result_set({"BM_a": steady(1.0)})
    b = result_set({"BM_b": steady(1.0)})
    doc = _strict(render.render_json(compare(a, b, TIME, Settings(allow_missing=True))))
    assert doc["summary"]["geomean_ratio"] is None


def test_every_view_leaves_the_rows_judged_against_another_baseline_out_of_the_geomean(
    report,
) -> None:
    """An anchored report's rows judged against the committed baseline (Report.fallback): the
    table, the Markdown and the JSON give one geomean, without them, and say how many it left
    out; with one row left, no suite."""
    apart = dataclasses.replace(report, fallback=frozenset({"BM_slow|pipe"}))
    [line] = [x for x in render.render_table(apart).splitlines() if x.startswith("Geomean")]
    assert line.endswith(
        " over 1 benchmark (1 judged against the committed baseline, not in it): 1 REGRESSION, "
        "1 SAME, 1 NEW, 1 MISSING, 1 ERROR"
    ), line
    assert f"**{line}**" in render.render_markdown(apart).splitlines()
    summary = _strict(render.render_json(apart))["summary"]
    assert (summary["geomean_count"], summary["geomean_left_out"]) == (1, 1)
    assert summary["geomean_ratio"] == pytest.approx(1.0, abs=0.001) and summary["suite"] is None
    assert _strict(render.render_json(report))["summary"]["geomean_left_out"] == 0


def test_junit(report) -> None:
    root = ET.fromstring(render.render_junit(report))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "5"
    assert (suite.get("failures"), suite.get("errors")) == ("2", "1")  # regression + missing; error
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["BM_slow|pipe"].find("failure").get("type") == "REGRESSION"
    assert cases["BM_gone"].find("failure").get("type") == "MISSING"
    assert 'boom <&> "quoted"' in cases["BM_err"].find("error").get("message")
    assert cases["BM_same"].find("failure") is None


@pytest.mark.parametrize(
    ("value", "metric", "text"),
    [
        (512.0, TIME, "512.0 ns"),
        (1.5e3, TIME, "1.500 us"),
        (2.5e7, TIME, "25.00 ms"),
        (3e9, TIME, "3.000 s"),
        (2.81e12, Metric("bytes_per_second", True), "2.81T"),
        (0.84, Metric("peak_fraction", True), "0.84"),
        (None, TIME, "-"),
    ],
)
def test_format_value(value, metric, text: str) -> None:
    assert render.format_value(value, metric) == text


HOSTILE = ["BM_esc\x1b[31m", "BM_bel\x07", "BM_`tick``s`", "BM_new\nline", "BM_[link](http://x)"]


@pytest.fixture(scope="module")
def hostile():
    base = result_set({name: steady(1000.0, k) for k, name in enumerate(HOSTILE)})
    cont = result_set({name: steady(1300.0, k + 9) for k, name in enumerate(HOSTILE)})
    return compare(base, cont, TIME, Settings())


def test_junit_stays_well_formed_with_control_characters(hostile) -> None:
    root = ET.fromstring(render.render_junit(hostile))
    names = [case.get("name") for case in root.iter("testcase")]
    assert "BM_esc\\x1b[31m" in names and "BM_bel\\x07" in names


def test_markdown_code_spans_hold_backticks(hostile) -> None:
    text = render.render_markdown(hostile)
    # a fence one backtick longer than the name's longest run: the name cannot end it early
    assert "| ``` BM_`tick``s` ``` |" in text
    assert "\x1b" not in text and "\x07" not in text
    for line in text.splitlines():
        if "BM_new" in line:
            assert "BM_new\\nline" in line  # one table row, not two


def test_table_shows_control_characters_escaped(hostile) -> None:
    text = render.render_table(hostile)
    assert "\x1b" not in text and "\x07" not in text
    assert "BM_esc\\x1b[31m" in text and "BM_new\\nline" in text
