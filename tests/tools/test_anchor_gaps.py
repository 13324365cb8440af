"""Anchored runs where the anchor cannot judge a benchmark, or is measured again: a benchmark
the anchor failed, one removed since the baseline, and the runner finding after `again`
(anchor.py; docs/running.md, "Anchoring"). The checkout and its fake builds: test_anchor.py."""

from __future__ import annotations

import json

from test_anchor import (  # noqa: F401
    ALPHA,
    BETA,
    SLOWED,
    Checkout,
    checkout,
    report_of,
    verdicts,
)

FAILED = "out of memory on this card"
OTHER = "alpha/copy/1/manual_time"
GONE = "alpha/copy/3/manual_time"


def agrees(done) -> dict:
    """The JSON report, whose exit status is the run's."""
    report = report_of(done)
    assert report["summary"]["exit_status"] == done.status, done.err
    return report


def row(report: dict, name: str) -> dict:
    [found] = [b for b in report["benchmarks"] if b["name"] == name]
    return found


def test_a_benchmark_the_anchor_fails_is_judged_against_the_committed_baseline(
    checkout: Checkout,
) -> None:
    """The baseline's commit fails one benchmark on this card, the current build measures it:
    it was an ERROR `baseline: ...` failing nothing, so no regression of it could be caught.
    It is judged against the committed baseline, as without anchoring, with a note."""
    checkout.commit("alpha/copy/2 10% slower", slow={SLOWED: 1.10})
    checkout.extra = {"errors": {SLOWED: FAILED}}  # the anchor's build, made by the run
    checkout.on("other")
    out = checkout.root.parent / "run.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 1, done.err
    report = agrees(done)
    slowed = row(report, SLOWED)
    assert (slowed["verdict"], slowed["confirmed"], slowed["failed"]) == ("REGRESSION", True, True)
    assert slowed["level"] != "process"  # another card's numbers: the committed baseline's
    assert {v for n, v in verdicts(report).items() if n != SLOWED} == {"SAME"}
    note = (
        "1 benchmark(s) failed in the anchor but ran here: judged against the committed "
        f"baseline instead, as without anchoring ({SLOWED}: {FAILED})"
    )
    assert note in report["notes"]
    assert any(
        n.startswith("against the committed baseline: 1 regression(s) re-run")
        for n in report["notes"]
    )
    anchored = json.loads(out.read_text())["context"]["kernelwatch_anchor"]
    assert anchored.startswith(f"anchored on {checkout.a[:12]} (measured by this run; ")
    assert anchored.endswith(
        "; 1 benchmark(s) the anchor failed judged against the committed baseline"
    )


def test_unchanged_code_the_anchor_fails_passes_with_the_note(checkout: Checkout) -> None:
    checkout.extra = {"errors": {SLOWED: FAILED}}
    checkout.on("other")
    done = checkout.run("--out", checkout.root.parent / "run.json", "--format", "json")
    assert done.status == 0, done.err
    report = agrees(done)
    assert set(verdicts(report).values()) == {"SAME"}
    assert any(n.startswith("1 benchmark(s) failed in the anchor") for n in report["notes"])


def test_regressions_against_the_anchor_and_the_committed_baseline_share_their_re_runs(
    checkout: Checkout,
) -> None:
    """One REGRESSION against the anchor (3 %, within another card's limit), one against the
    committed baseline (the anchor failed it): each confirmed against what flagged it, both in
    one re-run."""
    checkout.commit("two slower", slow={SLOWED: 1.10, OTHER: 1.03})
    checkout.extra = {"errors": {SLOWED: FAILED}}
    checkout.on("other")
    done = checkout.run("--out", checkout.root.parent / "run.json", "--format", "json")
    assert done.status == 1, done.err
    report = agrees(done)
    for name in (SLOWED, OTHER):
        assert (row(report, name)["verdict"], row(report, name)["confirmed"]) == (
            "REGRESSION",
            True,
        ), name
    assert row(report, OTHER)["level"] == "process"
    [rerun] = checkout.root.parent.glob("run.confirm-*.json")
    assert {r["run_name"] for r in json.loads(rerun.read_text())["benchmarks"]} >= {SLOWED, OTHER}
    assert done.err.count("re-ran 2 flagged benchmark(s): wrote") == 1, done.err


def test_a_benchmark_removed_since_the_baseline_is_missing_in_the_anchored_report(
    checkout: Checkout,
) -> None:
    """In the committed baseline, in neither the anchor's run nor this one: a plain comparison
    shows it MISSING with a note; the anchored report had no row of it."""
    renamed = {**{n: t for n, t in ALPHA.items() if n != GONE}, "alpha/copy/9/manual_time": 9e4}
    checkout.commit("B renames alpha/copy/3", benchmarks=renamed)
    checkout.on("other")
    plain = checkout.run(
        "--anchor", "never", "--out", checkout.root.parent / "n.json", "--format", "json"
    )
    done = checkout.run("--out", checkout.root.parent / "a.json", "--format", "json")
    assert done.status == plain.status == 0, done.err
    report, unanchored = agrees(done), agrees(plain)
    assert report["notes"][0].startswith(f"anchored on {checkout.a[:12]}")
    assert row(report, GONE) == row(unanchored, GONE)
    assert row(report, GONE)["reason"] == "not in this build: removed or renamed"
    assert report["summary"]["counts"]["MISSING"] == 1
    missing = [n for n in unanchored["notes"] if "MISSING" in n]
    assert missing and "a rename?" in missing[0]
    assert [n for n in report["notes"] if "MISSING" in n] == missing


def test_after_the_anchor_is_measured_again_the_finding_describes_it(
    checkout: Checkout,
) -> None:
    """The card drifted 10 % on one benchmark since its anchor was kept: the regression against
    the kept anchor measures the baseline's commit again, and the re-run is judged against
    that. The runner finding (and the context key) then describe what the run is judged
    against, the commit measured again, not the kept anchor (which said 0 slower)."""
    checkout.anchored_once()
    checkout.extra = {"slow": {SLOWED: 1.10}}  # the card's drift, in every build made now
    checkout.build_current()
    out = checkout.root.parent / "2.json"
    done = checkout.run("--out", out, "--format", "json")
    assert done.status == 0, done.err
    report = agrees(done)
    assert (row(report, SLOWED)["verdict"], row(report, SLOWED)["confirmed"]) == ("SLOWER", False)
    assert "(reused, 0.0 h old; " in report["notes"][0]
    said = report["notes"][1]
    assert said.startswith("runner finding: this runner times the baseline's own commit ")
    assert "; 1 slower and 0 faster beyond their limits)" in said, said
    assert f"({SLOWED} +10." in said and said.endswith(
        "; of the anchor with 1 benchmark(s) measured again now"
    )
    assert f"kernelwatch: {said}" in done.err
    again = checkout.root.parent / "2.anchor-again.json"
    anchored = json.loads(out.read_text())["context"]["kernelwatch_anchor"]
    assert "(reused, 0.0 h old; " in anchored
    assert anchored.endswith(
        f"; the baseline's commit measured again on this card for 1 benchmark(s) ({again})"
    )


def test_the_geomean_is_of_the_benchmarks_judged_against_the_anchor(checkout: Checkout) -> None:
    """A runner 10 % slower than the baseline's cards, whose anchor failed one benchmark: that
    one is judged against the committed baseline (+10 %: the runner's, as without anchoring),
    the six others against the anchor (+0 %). The report's geomean averaged the two references,
    +1.4 % over 7 benchmarks, a change no code made; it is of the six, and says it leaves one
    out. The runner finding (the committed baseline against the anchor) is of every benchmark
    both measured, as it says."""
    runner = {"slow": {name: 1.10 for name in {**ALPHA, **BETA}}}
    checkout.extra = runner
    checkout.build_current()
    checkout.extra = {**runner, "errors": {SLOWED: FAILED}}  # the anchor's build
    checkout.on("other")
    markdown = checkout.root.parent / "run.md"
    done = checkout.run(
        "--out", checkout.root.parent / "run.json", "--format", "json", "--markdown", markdown
    )
    assert done.status == 1, done.err  # SLOWED: +10 % against another card's numbers
    report = agrees(done)
    slowed = row(report, SLOWED)
    assert slowed["verdict"] == "REGRESSION" and slowed["level"] != "process"
    summary = report["summary"]
    assert summary["geomean_count"] == 6 and summary["geomean_left_out"] == 1, summary
    assert abs(summary["geomean_ratio"] - 1.0) < 0.005, summary
    assert summary["suite"]["count"] == 6
    line = (
        "over 6 benchmarks (1 judged against the committed baseline, not in it): "
        "1 REGRESSION, 6 SAME"
    )
    assert line in markdown.read_text(encoding="utf-8")
    finding = report["notes"][1]
    assert "10.0% slower than the baseline's cards did (geometric mean of 6 benchmarks;" in finding
