"""The committed H200 baseline, re-measured at today's harness: nine cards of one-GPU hosts, and
what it does on a tenth card it does not hold (tests/data/gpu/h200-card-720306a7-baseline-b0f397d)
and for a pull request anchored on it (h200-card-8da66dc9-pr-unroll). The baseline of the runs
measured before it is kept for their tests in tests/data/gpu/h200-baseline-b9b23ab
(test_levels_gpu.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GPU_DATA, REPO

from kernelwatch import baseline as baselines
from kernelwatch import levels
from kernelwatch.compare import Report, Settings, Verdict, compare
from kernelwatch.config import load_config
from kernelwatch.gbench import read_json
from kernelwatch.loading import from_documents, load
from kernelwatch.results import ANCHOR_KEY, resolve_metric

BASELINES = REPO / "baselines"
BASELINE = BASELINES / "nvidia-h200-sm90"
FRESH = GPU_DATA / "h200-card-720306a7-baseline-b0f397d"
PULL_REQUEST = GPU_DATA / "h200-card-8da66dc9-pr-unroll" / "pr.json.gz"
SETTINGS = Settings(rules=load_config(BASELINES / "kernelwatch.toml").rules)
# The commits of the pooled runs: one tree of benchmarks and harness (only tools/, docs/ and
# tests/ changed between them), b0f397d the manifest's.
SAME_TIMED_CODE = {"a09ed2f", "d42710d", "6972a59", "92d1a4f", "b05544a", "b0f397d"}

pytestmark = pytest.mark.skipif(
    not (FRESH / "plain.json.gz").is_file(), reason="the H200 runs are not in this checkout"
)


def judged(name: str) -> Report:
    run = load(FRESH / name)
    found = baselines.against(BASELINES, run.context, name)
    return compare(
        from_documents(found.label, found.documents),
        run,
        resolve_metric("time"),
        SETTINGS,
        found.noise,
    )


def test_the_baseline_pools_nine_cards_of_one_harness() -> None:
    context = read_json(BASELINE / "result.json.gz")["context"]
    units = levels.units_of(context)
    assert len({u.card for u in units}) == 9 and len({u.host for u in units}) == 9
    commits = {r["commit"][:7] for r in context[levels.RUNS_KEY]}
    assert commits <= SAME_TIMED_CODE
    assert context["kernelwatch_git_commit"].startswith("b0f397d")


def test_a_card_it_does_not_hold_passes_unchanged_at_the_host_level() -> None:
    report = judged("plain.json.gz")
    assert report.exit_status == 0 and report.counts()[Verdict.SAME] == 356
    assert any(n.startswith("level: host") and "of 9 host(s)" in n for n in report.notes)
    # what a plain run can see there: 4.5 % median for the GPU kernels of 50 us or more (4.7-5.0 %
    # against the seven hosts of b9b23ab's baseline); an anchored run is what judges sharply
    long = [
        c.sensitivity
        for c in report.comparisons
        if c.sensitivity and not c.host_bound and c.baseline.median >= 50_000
    ]
    assert 0.03 < np.median(long) < 0.05


def test_unchanged_code_anchors_on_it_without_measuring_the_anchor() -> None:
    """Every binary built as b0f397d's: the anchor measures nothing (the b9b23ab baseline's
    anchor measured all nine binaries); a pull request's anchor measures the binary it changed."""
    anchored = read_json(FRESH / "anchored.json.gz")["context"][ANCHOR_KEY]
    assert anchored.startswith(
        "anchored on b0f397d53178 (nothing to measure; 356 benchmark(s) built identically"
    )
    changed = read_json(PULL_REQUEST)["context"][ANCHOR_KEY]
    assert changed.startswith("anchored on b0f397d53178 (measured by this run; 322 benchmark(s)")
