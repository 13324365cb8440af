"""Verdicts: the decision rule, every verdict, the noise floor, and statistical properties."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import H100_CONTEXT, document, result_set
from hypothesis import given
from hypothesis import strategies as st
from kernelwatch import synthetic
from kernelwatch.compare import (
    DEFAULT_NOISE_MULTIPLIER,
    SLOWDOWNS,
    Settings,
    Verdict,
    compare,
    decide,
)
from kernelwatch.config import ThresholdRule
from kernelwatch import levels
from kernelwatch.errors import InputError
from kernelwatch.levels import Level
from kernelwatch.loading import from_documents
from kernelwatch.render import render_json, render_junit, render_markdown, render_table
from kernelwatch.results import gpu_model, resolve_metric
from kernelwatch.gbench import failed_row

TIME = resolve_metric("time")
BPS = resolve_metric("bytes_per_second")


def steady(median: float, n: int = 10, spread: float = 0.001, seed: int = 0) -> list[float]:
    """n repetitions around `median` with a small relative spread."""
    rng = np.random.default_rng(seed)
    return (median * rng.lognormal(0.0, spread, n)).tolist()


def verdicts(report) -> dict[str, Verdict]:
    return {c.name: c.verdict for c in report.comparisons}


# --- the decision rule -------------------------------------------------------------------

L = math.log


@pytest.mark.parametrize(
    ("log_ratio", "ci", "q", "expected"),
    [
        (L(1.10), (L(1.08), L(1.12)), 0.001, Verdict.REGRESSION),
        (L(0.90), (L(0.88), L(0.92)), 0.001, Verdict.IMPROVEMENT),
        (L(1.02), (L(1.01), L(1.03)), 0.001, Verdict.SAME),  # real, but below the threshold
        (L(1.00), (L(0.99), L(1.01)), 0.9, Verdict.SAME),
        (L(1.02), (L(0.94), L(1.07)), 0.3, Verdict.UNSURE),  # interval past both limits
        (L(1.08), (L(0.99), L(1.15)), 0.2, Verdict.UNSURE),  # past the limit, not significant
        (L(1.08), (L(1.01), L(1.15)), 0.06, Verdict.UNSURE),
    ],
)
def test_decide(log_ratio: float, ci: tuple[float, float], q: float, expected: Verdict) -> None:
    verdict, reason = decide(log_ratio=log_ratio, log_ci=ci, q=q, alpha=0.05, limit=0.05)
    assert verdict is expected, reason


def test_decide_turns_rates_around() -> None:
    args = dict(log_ci=(L(0.88), L(0.92)), q=0.001, alpha=0.05, limit=0.05)
    assert decide(log_ratio=L(0.9), higher_is_better=True, **args)[0] is Verdict.REGRESSION
    assert decide(log_ratio=L(0.9), higher_is_better=False, **args)[0] is Verdict.IMPROVEMENT


def test_decide_limits_are_symmetric_in_log_space() -> None:
    # A 5 % threshold: slower by more than 5 %, or faster by more than 1 - 1/1.05 = 4.76 %.
    args = dict(q=0.001, alpha=0.05, limit=0.05)
    assert decide(log_ratio=L(1 / 1.049), log_ci=(L(0.94), L(0.96)), **args)[0] is Verdict.SAME
    assert (
        decide(log_ratio=L(1 / 1.051), log_ci=(L(0.94), L(0.96)), **args)[0] is Verdict.IMPROVEMENT
    )
    _, reason = decide(log_ratio=L(1.06), log_ci=(L(1.05), L(1.07)), **args)
    assert reason == "+6.0%, beyond the +5.0% limit; q=0.001"


def test_decide_too_few_past_the_limit_is_an_unverified_verdict() -> None:
    few = "too few repetitions (2 and 2; need 3)"
    verdict, reason = decide(
        log_ratio=L(2.0), log_ci=(L(1.9), L(2.1)), q=0.0, alpha=0.05, limit=0.05, too_few=few
    )
    assert verdict is Verdict.REGRESSION
    assert reason == f"+100.0%, beyond the +5.0% limit; unverified: {few}"
    verdict, reason = decide(
        log_ratio=L(0.5), log_ci=(L(0.4), L(0.6)), q=0.0, alpha=0.05, limit=0.05, too_few=few
    )
    assert verdict is Verdict.IMPROVEMENT and reason.endswith(f"unverified: {few}")
    # within the limit, too few repetitions is still UNSURE
    verdict, reason = decide(
        log_ratio=L(1.02), log_ci=(L(1.0), L(1.04)), q=0.0, alpha=0.05, limit=0.05, too_few=few
    )
    assert verdict is Verdict.UNSURE and reason == few


# --- every verdict through compare() -----------------------------------------------------


def suite(**overrides: list[float]) -> dict[str, list[float]]:
    base = {f"BM_k/{i}": steady(100.0 + i, seed=i) for i in range(8)}
    base.update(overrides)
    return base


def test_regression_and_improvement_are_named() -> None:
    base = result_set(suite())
    cont = result_set(
        suite(**{"BM_k/3": steady(103.0 * 1.10, seed=30), "BM_k/5": steady(105.0 * 0.80, seed=50)})
    )
    report = compare(base, cont, TIME, Settings())
    found = verdicts(report)
    assert found["BM_k/3"] is Verdict.REGRESSION
    assert found["BM_k/5"] is Verdict.IMPROVEMENT
    assert all(v is Verdict.SAME for n, v in found.items() if n not in ("BM_k/3", "BM_k/5"))
    assert report.comparisons[0].name == "BM_k/3"  # worst first
    assert report.comparisons[-1].name == "BM_k/5"
    assert report.failed and report.exit_status == 1
    regression = report.comparisons[0]
    assert regression.ratio == pytest.approx(1.10, rel=0.01)
    assert regression.ci_low < regression.ratio < regression.ci_high
    # one process a side: no spread between processes measured, so the process-level prior
    relative, absolute = levels.prior_constants(Level.PROCESS, gpu_model(base.context))
    assert regression.q_value < 0.05 and regression.level_measured is False
    assert regression.limit == pytest.approx(
        2 * (relative + absolute / regression.baseline.median), rel=1e-3
    )


def test_a_run_against_itself_is_all_same() -> None:
    side = result_set(suite())
    report = compare(side, side, TIME, Settings())
    assert set(verdicts(report).values()) == {Verdict.SAME}
    assert report.exit_status == 0
    assert report.geomean_ratio() == (1.0, 8)


def _error_row(name: str, skipped: bool = False) -> dict:
    message = "needs sm_100" if skipped else "cudaErrorIllegalAddress"
    return failed_row(name, message, skipped=skipped)


def test_new_missing_error_skipped() -> None:
    base = from_documents(
        "base",
        [
            document(
                {
                    "BM_same": steady(10),
                    "BM_gone": steady(20),
                    "BM_breaks": steady(30),
                    "BM_fixed": steady(40),
                },
                rows=[_error_row("BM_was_broken"), _error_row("BM_skip_both", skipped=True)],
            )
        ],
    )
    cont = from_documents(
        "cont",
        [
            document(
                {
                    "BM_same": steady(10),
                    "BM_new": steady(50),
                    "BM_was_broken": steady(60),
                    "BM_gone_skipped": steady(70),
                },
                rows=[
                    _error_row("BM_breaks"),
                    _error_row("BM_skip_both", skipped=True),
                    _error_row("BM_fixed", skipped=True),
                ],
            )
        ],
    )
    report = compare(base, cont, TIME, Settings())
    found = {c.name: (c.verdict, c.failed, c.reason) for c in report.comparisons}
    assert found["BM_same"][:2] == (Verdict.SAME, False)
    assert found["BM_new"][:2] == (Verdict.NEW, False)
    assert found["BM_gone_skipped"][:2] == (Verdict.NEW, False)
    assert found["BM_gone"][:2] == (Verdict.MISSING, True)
    assert found["BM_fixed"] == (Verdict.MISSING, True, "skipped in the contender: needs sm_100")
    assert found["BM_breaks"] == (Verdict.ERROR, True, "contender: cudaErrorIllegalAddress")
    assert found["BM_was_broken"] == (Verdict.ERROR, False, "baseline: cudaErrorIllegalAddress")
    assert "BM_skip_both" not in found
    assert any("1 benchmark(s) skipped or absent on both sides" in n for n in report.notes)

    lenient = compare(base, cont, TIME, Settings(allow_missing=True, allow_errors=True))
    assert not lenient.failed and lenient.exit_status == 0


def test_too_few_repetitions_and_aggregates_only() -> None:
    base = result_set({"BM_two": [1.0, 1.0], "BM_one": [5.0], "BM_flat": [4.0]})
    cont = result_set({"BM_two": [1.9, 1.9], "BM_one": [15.0], "BM_flat": [4.001]})
    report = compare(base, cont, TIME, Settings())
    found = {c.name: (c.verdict, c.failed, c.reason) for c in report.comparisons}
    # past the limit without a test: unverified, a failing REGRESSION from 2x worse only, below
    # that SLOWER
    assert found["BM_two"] == (
        Verdict.SLOWER,
        False,
        # a 1 us "kernel", one process a side: the H100's process-level prior 0.81 % + 430 ns /
        # 1 us, x 2
        "+90.0%, beyond the +87.6% limit (noise floor); unverified: too few repetitions "
        "(2 and 2; need 3); not 2x worse throughout its interval: not failing (--strict fails it)",
    )
    assert found["BM_one"][:2] == (Verdict.REGRESSION, True)
    assert "not failing" not in found["BM_one"][2]
    assert found["BM_flat"] == (Verdict.UNSURE, False, "too few repetitions (1 and 1; need 3)")
    strict = compare(base, cont, TIME, Settings(strict=True))
    assert {c.name for c in strict.comparisons if c.failed} == {"BM_two", "BM_one"}
    assert not [c.reason for c in strict.comparisons if "not failing" in c.reason]

    aggregates = from_documents(
        "a",
        [synthetic.document(synthetic.benchmark_rows("BM_a", steady(10.0), aggregates_only=True))],
    )
    doubled = from_documents(
        "b",
        [synthetic.document(synthetic.benchmark_rows("BM_a", steady(20.0), aggregates_only=True))],
    )
    only = compare(aggregates, doubled, TIME, Settings()).comparisons[0]
    assert only.verdict in SLOWDOWNS and "unverified: aggregates only" in only.reason
    assert only.ratio == pytest.approx(2.0, rel=0.01)


def test_noisy_baseline_raises_the_limit() -> None:
    noisy = steady(100.0, n=20, spread=0.05, seed=1)
    base = result_set({"BM_noisy": noisy, "BM_quiet": steady(100.0, n=20, seed=2)})
    cont = result_set(
        {
            "BM_noisy": [v * 1.08 for v in steady(100.0, n=20, spread=0.05, seed=3)],
            "BM_quiet": [v * 1.08 for v in steady(100.0, n=20, seed=4)],
        }
    )
    report = {c.name: c for c in compare(base, cont, TIME, Settings()).comparisons}
    assert report["BM_quiet"].verdict is Verdict.REGRESSION
    # K x ~5 % CV
    assert report["BM_noisy"].noise_floor == pytest.approx(DEFAULT_NOISE_MULTIPLIER * 0.05, rel=0.4)
    assert report["BM_noisy"].limit > 0.05
    assert report["BM_noisy"].verdict is not Verdict.REGRESSION
    assert "noise floor" in report["BM_noisy"].reason


def test_noise_counter_raises_the_floor() -> None:
    # The harness's `noise` counter is the width of a 95 % interval of one repetition's median:
    # 0.10 wide is a standard deviation of 0.10 / 3.92 = 2.55 %, times the multiplier 3.
    times = steady(100.0)
    base = result_set({"BM_a": times}, counters={"BM_a": {"noise": [0.10] * 10}})
    cont = result_set({"BM_a": [t * 1.07 for t in times]})
    comparison = compare(base, cont, TIME, Settings(noise_multiplier=3.0)).comparisons[0]
    assert comparison.noise_floor == pytest.approx(3.0 * 0.10 / 3.92, rel=1e-3)
    assert comparison.verdict is Verdict.SAME  # +7 % is real, but within the floor
    assert "noise floor" in comparison.reason


def test_spread_between_processes_raises_the_floor() -> None:
    # Two baseline processes whose medians differ by 6 %: the floor must cover that.
    base = from_documents(
        "dir",
        [document({"BM_a": steady(100.0, seed=1)}), document({"BM_a": steady(106.0, seed=2)})],
    )
    cont = result_set({"BM_a": steady(109.0, seed=3)})
    comparison = compare(base, cont, TIME, Settings()).comparisons[0]
    assert comparison.baseline.processes == 2 and comparison.baseline.n == 20
    assert comparison.noise_floor > 0.06
    assert comparison.verdict is not Verdict.REGRESSION


def test_threshold_rules_apply_per_benchmark() -> None:
    base = result_set({"BM_Transfer/1": steady(100.0), "BM_Copy/1": steady(100.0, seed=1)})
    cont = result_set({"BM_Transfer/1": steady(108.0, seed=2), "BM_Copy/1": steady(108.0, seed=3)})
    rules = (ThresholdRule(__import__("re").compile("^BM_Transfer/"), 0.10),)
    found = {c.name: c for c in compare(base, cont, TIME, Settings(rules=rules)).comparisons}
    assert (
        found["BM_Transfer/1"].verdict is Verdict.SAME and found["BM_Transfer/1"].threshold == 0.10
    )
    assert found["BM_Copy/1"].verdict is Verdict.REGRESSION


def test_counter_metric_direction() -> None:
    times = steady(100.0)
    base = result_set(
        {"BM_a": times}, counters={"BM_a": {"bytes_per_second": [1e9 / t for t in times]}}
    )
    slower = [t * 1.1 for t in times]
    cont = result_set(
        {"BM_a": slower}, counters={"BM_a": {"bytes_per_second": [1e9 / t for t in slower]}}
    )
    comparison = compare(base, cont, BPS, Settings()).comparisons[0]
    assert comparison.verdict is Verdict.REGRESSION
    assert comparison.ratio == pytest.approx(1 / 1.1)


def test_metric_missing_on_one_side_or_everywhere() -> None:
    base = result_set(
        {"BM_a": steady(1.0), "BM_b": steady(2.0)},
        counters={
            "BM_a": {"bytes_per_second": [1.0] * 10},
            "BM_b": {"bytes_per_second": [1.0] * 10},
        },
    )
    cont = result_set(
        {"BM_a": steady(1.0), "BM_b": steady(2.0)},
        counters={"BM_a": {"bytes_per_second": [1.0] * 10}},
    )
    found = {c.name: c for c in compare(base, cont, BPS, Settings()).comparisons}
    assert found["BM_b"].verdict is Verdict.ERROR and found["BM_b"].failed
    assert found["BM_b"].reason == "no bytes_per_second in the contender"
    with pytest.raises(InputError, match="no benchmark has the metric 'items_per_second'"):
        compare(base, cont, resolve_metric("items_per_second"), Settings())


def test_gpu_mismatch_is_refused() -> None:
    base = result_set({"BM_a": steady(1.0)})
    other = result_set({"BM_a": steady(1.0)}, context=dict(H100_CONTEXT, gpu_name="NVIDIA H200"))
    with pytest.raises(InputError, match="different GPU models"):
        compare(base, other, TIME, Settings())
    report = compare(base, other, TIME, Settings(allow_gpu_mismatch=True))
    assert report.warnings and report.exit_status == 0


@pytest.mark.parametrize("key", ["gpu_name", "gpu_compute_capability", "gpu_driver_version"])
def test_a_long_context_value_is_cut_short_in_the_message(key: str) -> None:
    """The refusal (and a warning) names the GPU models or settings in one short line; a
    5,000-character context value was written whole into it."""
    base = result_set({"BM_a": steady(1.0)})
    other = result_set({"BM_a": steady(1.0)}, context=dict(H100_CONTEXT, **{key: "y" * 5000}))
    report = compare(base, other, TIME, Settings(allow_gpu_mismatch=True))
    said = [w for w in report.warnings if "yyy" in w]
    assert said and all("yyy..." in w and len(w) < 300 for w in said)
    if key != "gpu_driver_version":
        with pytest.raises(InputError, match="different GPU models") as raised:
            compare(base, other, TIME, Settings())
        assert "yyy..." in str(raised.value) and len(str(raised.value)) < 300


def test_power_note_when_a_lone_change_cannot_be_significant() -> None:
    spec = {f"BM_{i}": steady(10.0 + i, n=5, seed=i) for i in range(30)}
    report = compare(result_set(spec), result_set(spec), TIME, Settings())
    assert (
        "30 of 30 benchmark(s) cannot reach significance alone, most as 5 and 5 repetitions "
        "cannot reach q < 0.05 among 30 benchmarks alone (the smallest p-value is 0.0079; "
        "Benjamini-Hochberg needs p < 0.0017)"
    ) in "\n".join(report.notes)


def test_tied_repetitions_cannot_hide_a_gross_lone_regression() -> None:
    # 10 and 10 repetitions of 400 benchmarks: untied, a lone change reaches p = 1.1e-5, q =
    # 0.004; with one tie the test gives at most p = 1.8e-4, q = 0.07 (TIED_EXACT_VALUES). Such
    # a row is judged unverified, not left UNSURE: a 100x slowdown was UNSURE with exit 0.
    rng = np.random.default_rng(7)
    base = {f"BM_{i}": (100.0 * (1 + 0.001 * rng.standard_normal(10))).tolist() for i in range(400)}
    base["BM_0"][1] = base["BM_0"][0]
    slow = dict(base, BM_0=[100.0 * v for v in base["BM_0"]])
    report = compare(result_set(base), result_set(slow), TIME, Settings())
    row = next(c for c in report.comparisons if c.name == "BM_0")
    assert row.verdict is Verdict.REGRESSION and row.failed
    assert "10 and 10 repetitions with tied values cannot reach q < 0.05 among 400" in row.reason
    tied_twice = dict(base, BM_0=[1.5 * v for v in base["BM_0"]])
    row = next(
        c
        for c in compare(result_set(base), result_set(tied_twice), TIME, Settings()).comparisons
        if c.name == "BM_0"
    )
    assert row.verdict is Verdict.SLOWER and not row.failed, row.reason
    assert "unverified" in row.reason


def test_settings_are_validated() -> None:
    with pytest.raises(InputError, match="alpha"):
        Settings(alpha=1.5)
    with pytest.raises(InputError, match="min repetitions"):
        Settings(min_repetitions=0)


# --- properties ---------------------------------------------------------------------------


def _draw(rng: np.random.Generator, family: str, n: int, sigma: float) -> np.ndarray:
    """Positive timing-like samples from one of several shapes."""
    if family == "lognormal":
        return rng.lognormal(0.0, sigma, n)
    if family == "gamma":
        return rng.gamma(1.0 / sigma**2, sigma**2, n)
    # Mostly tight, with occasional slow outliers (preemption, clock dips).
    values = rng.lognormal(0.0, sigma, n)
    return np.where(rng.random(n) < 0.1, values * (1 + 10 * sigma), values)


families = st.sampled_from(["lognormal", "gamma", "outliers"])


@given(
    seed=st.integers(0, 2**32 - 1),
    family=families,
    n=st.integers(3, 20),
    sigma=st.floats(0.0005, 0.3),
    count=st.integers(10, 60),
)
def test_property_a_a_flags_no_more_regressions_than_alpha(seed, family, n, sigma, count) -> None:
    """Both sides drawn from one distribution: the share of benchmarks called REGRESSION
    stays within alpha (with the defaults it is practically zero)."""
    rng = np.random.default_rng(seed)
    scales = rng.uniform(1.0, 1000.0, count)
    base = result_set(
        {f"BM_{i}": (s * _draw(rng, family, n, sigma)).tolist() for i, s in enumerate(scales)}
    )
    cont = result_set(
        {f"BM_{i}": (s * _draw(rng, family, n, sigma)).tolist() for i, s in enumerate(scales)}
    )
    report = compare(base, cont, TIME, Settings())
    assert report.counts()[Verdict.REGRESSION] <= 0.05 * count


def test_a_a_rate_without_threshold_is_controlled_by_bh() -> None:
    """With no threshold and no noise floor, only the test decides: over many A/A suites the
    share of suites with any REGRESSION must stay near or below alpha (BH controls it)."""
    rng = np.random.default_rng(2024)
    settings = Settings(threshold=0.0, noise_multiplier=0.0)
    suites, flagged = 300, 0
    for _ in range(suites):
        spec_a = {f"BM_{i}": rng.lognormal(0.0, 0.02, 10).tolist() for i in range(10)}
        spec_b = {f"BM_{i}": rng.lognormal(0.0, 0.02, 10).tolist() for i in range(10)}
        report = compare(result_set(spec_a), result_set(spec_b), TIME, settings)
        flagged += report.counts()[Verdict.REGRESSION] > 0
    # BH at alpha = 0.05 under the global null: P(any rejection) <= 0.05, and only about half of
    # the rejections are slowdowns. Binomial slack of three standard deviations.
    assert flagged / suites <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / suites)


@given(
    seed=st.integers(0, 2**32 - 1),
    family=families,
    n=st.integers(3, 15),
    m=st.integers(3, 15),
    sigma=st.floats(0.001, 0.2),
    k=st.floats(0.2, 5.0),
)
def test_property_scaling_the_contender_by_k_moves_the_change_to_k(
    seed, family, n, m, sigma, k
) -> None:
    rng = np.random.default_rng(seed)
    x = _draw(rng, family, n, sigma)
    y = _draw(rng, family, m, sigma)
    base = result_set({"BM_a": x.tolist(), "BM_same": x.tolist()})
    one = compare(base, result_set({"BM_a": y.tolist(), "BM_same": x.tolist()}), TIME, Settings())
    scaled = compare(
        base, result_set({"BM_a": (y * k).tolist(), "BM_same": (x * k).tolist()}), TIME, Settings()
    )
    before = {c.name: c for c in one.comparisons}
    after = {c.name: c for c in scaled.comparisons}
    assert after["BM_same"].ratio == pytest.approx(k, rel=1e-9)
    assert after["BM_a"].ratio == pytest.approx(k * before["BM_a"].ratio, rel=1e-9)
    assert after["BM_a"].ci_low == pytest.approx(k * before["BM_a"].ci_low, rel=1e-9)
    assert after["BM_a"].ci_high == pytest.approx(k * before["BM_a"].ci_high, rel=1e-9)


# Swapped, a slowdown is an improvement; an improvement is a slowdown, failing or not (an
# unverified one fails by the size of its change, which swapping keeps).
SWAPPED = {
    Verdict.REGRESSION: {Verdict.IMPROVEMENT},
    Verdict.SLOWER: {Verdict.IMPROVEMENT},
    Verdict.IMPROVEMENT: SLOWDOWNS,
    Verdict.SAME: {Verdict.SAME},
    Verdict.UNSURE: {Verdict.UNSURE},
}


def _swap_check(spec_a: dict, spec_b: dict, settings: Settings) -> None:
    forward = compare(result_set(spec_a), result_set(spec_b), TIME, settings)
    backward = compare(result_set(spec_b), result_set(spec_a), TIME, settings)
    there = {c.name: c for c in forward.comparisons}
    back = {c.name: c for c in backward.comparisons}
    for name, c in there.items():
        assert back[name].verdict in SWAPPED[c.verdict], (name, c.reason, back[name].reason)
        assert back[name].ratio == pytest.approx(1 / c.ratio, rel=1e-12)


@given(
    seed=st.integers(0, 2**32 - 1),
    family=families,
    n=st.integers(3, 15),
    sigma=st.floats(0.0005, 0.004),
    k=st.floats(0.5, 2.0),
)
def test_property_swapping_sides_swaps_regression_and_improvement(
    seed, family, n, sigma, k
) -> None:
    """With a threshold above any noise floor these samples can have (the floor depends on which
    side is the baseline, so it must not bind for the rule to be symmetric)."""
    rng = np.random.default_rng(seed)
    # milliseconds: the prior's launch term (ns / time) stays far below the threshold
    spec_a = {f"BM_{i}": (1000 * _draw(rng, family, n, sigma)).tolist() for i in range(6)}
    spec_b = {
        name: (v * (k if i % 2 else 1.0) * _draw(rng, family, n, sigma)).tolist()
        for i, (name, v) in enumerate((nm, np.array(vals)) for nm, vals in spec_a.items())
    }
    _swap_check(spec_a, spec_b, Settings(threshold=0.05))


@given(
    seed=st.integers(0, 2**32 - 1),
    family=families,
    n=st.integers(3, 15),
    sigma=st.floats(0.001, 0.3),
    k=st.floats(0.5, 2.0),
)
def test_property_swap_with_noisy_data_and_a_fixed_limit(seed, family, n, sigma, k) -> None:
    """Any noise, with the limit fixed (noise multiplier 0): the rule itself is symmetric."""
    rng = np.random.default_rng(seed)
    spec_a = {f"BM_{i}": _draw(rng, family, n, sigma).tolist() for i in range(6)}
    spec_b = {f"BM_{i}": (k * _draw(rng, family, n, sigma)).tolist() for i in range(6)}
    _swap_check(spec_a, spec_b, Settings(noise_multiplier=0.0))


def test_a_baseline_from_another_card_is_held_to_its_levels_prior_not_a_blanket_limit() -> None:
    """Another card, and no host recorded: the comparison crosses hosts, a level this baseline
    never measured, so its prior applies (relative + absolute / time, levels.PRIOR) and the
    notes say so, at least the unseen-kind prior (one benchmark cannot tell the card's kind);
    on the baseline's own card the process level's 1 % limit catches 3 %."""
    unnamed = {k: v for k, v in H100_CONTEXT.items() if k != "host_gpu_uuids"}
    card = lambda uuid: {**unnamed, "gpu_uuid": uuid}  # noqa: E731

    def verdict(median_us: float, uuid: str):
        times = [median_us * (1 + 0.0001 * i) for i in range(10)]
        return compare(
            result_set({"BM_a": times}, context=card("GPU-1")),
            result_set({"BM_a": [t * 1.03 for t in times]}, context=card(uuid)),
            TIME,
            Settings(),
        )

    same = verdict(100.0, "GPU-1")
    assert same.comparisons[0].verdict is Verdict.REGRESSION
    assert same.comparisons[0].level == "process"
    other = verdict(100.0, "GPU-2")
    found = other.comparisons[0]
    relative, absolute = levels.prior_constants(Level.HOST, gpu_model(unnamed))
    unseen_relative, unseen_absolute = levels.UNSEEN_KIND_PRIOR
    assert found.level == "host" and found.level_measured is False
    assert found.noise_floor == pytest.approx(
        2 * max(relative + absolute / 100_000, unseen_relative + unseen_absolute / 100_000),
        rel=0.01,
    )
    assert found.verdict is (Verdict.REGRESSION if found.limit < 0.03 else Verdict.SAME)
    assert any("never measured" in note and "prior" in note for note in other.notes)
    short = verdict(5.0, "GPU-2").comparisons[0]
    assert short.noise_floor == pytest.approx(2 * (relative + absolute / 5000), rel=0.05)
    assert short.noise_floor > found.noise_floor


def test_a_compare_report_beside_the_result_is_not_a_result(run_cli, write_json, tmp_path) -> None:
    """`run --out d/suite.json --json d/verdict.json` leaves both in one folder; comparing, or
    exporting, that folder failed on the report: 'verdict.json: ...: real_time is missing'."""
    base = write_json("base.json", {"BM_a": [1.0, 1.0, 1.01, 0.99, 1.0]}, context=H100_CONTEXT)
    new = write_json("run/new.json", {"BM_a": [1.0, 1.0, 1.01, 0.99, 1.0]}, context=H100_CONTEXT)
    report = tmp_path / "run" / "verdict.json"
    assert run_cli("compare", base, new, "--json", report).status == 0
    folder = run_cli("compare", base, new.parent)
    assert folder.status == 0, folder.err
    assert "verdict.json: skipped, not a benchmark result" in folder.out
    assert run_cli("export", new.parent, "--format", "bmf").status == 0
    alone = run_cli("compare", base, report)
    assert alone.status == 2 and alone.err.count("\n") == 1
    assert "the JSON report of kernelwatch compare" in alone.err and "real_time" not in alone.err


def test_quantised_times_do_not_change_the_verdict() -> None:
    """A runner whose timer quantises 3 repetitions to one value a side must judge as one that
    does not: with the normal approximation, 500/500/500 us against 600/600/600 us was a failing
    REGRESSION (q=0.047) while 500/501/502 against 600/601/602 was UNSURE (q=0.1). Both are
    SLOWER: the test cannot reach alpha with 3 and 3, so +20 % is unverified, not failing."""
    quantised = compare(
        result_set({"BM_a": [500.0] * 3}), result_set({"BM_a": [600.0] * 3}), TIME, Settings()
    ).comparisons[0]
    distinct = compare(
        result_set({"BM_a": [500.0, 501.0, 502.0]}),
        result_set({"BM_a": [600.0, 601.0, 602.0]}),
        TIME,
        Settings(),
    ).comparisons[0]
    assert quantised.verdict is distinct.verdict is Verdict.SLOWER
    assert quantised.p_value == pytest.approx(0.1) and not quantised.failed


def test_no_sensitivity_where_no_p_value_can_reach_alpha() -> None:
    """3 and 3 repetitions (the default minimum) cannot give p < 0.1: the Catches column said
    +3.3 % for a comparison that can catch nothing at alpha 0.05."""
    times = [500.0, 501.0, 502.0, 503.0]
    for n, m, caught in ((3, 3, False), (3, 4, False), (4, 4, True)):
        c = compare(
            result_set({"BM_a": times[:n]}), result_set({"BM_a": times[:m]}), TIME, Settings()
        ).comparisons[0]
        assert (c.sensitivity is not None) is caught, (n, m, c.sensitivity)
    loose = compare(
        result_set({"BM_a": times[:3]}), result_set({"BM_a": times[:3]}), TIME, Settings(alpha=0.2)
    ).comparisons[0]
    assert loose.sensitivity is not None


# --- invariances a runner must not change (stats audit) -----------------------------------


def _spec(rng: np.random.Generator, count: int, n: int, sigma: float, ties: bool) -> dict:
    values = {f"BM_g{i}/x": 1000 * rng.lognormal(i * 0.3, sigma, n) for i in range(count)}
    return {k: (np.round(v) if ties else v).tolist() for k, v in values.items()}


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 12),
    sigma=st.floats(0.0, 0.1),
    ties=st.booleans(),
    k=st.sampled_from([2.0**-20, 0.5, 4.0, 2.0**30]),
)
def test_property_order_and_scale_do_not_change_anything(seed, n, sigma, ties, k) -> None:
    """Reordering benchmarks and repetitions, or scaling both sides by a power of two (no GPU
    context: the prior has no launch term), leaves every verdict and number as it was; the CI
    contains the ratio; no NaN reaches a report."""
    rng = np.random.default_rng(seed)
    a, b = _spec(rng, 5, n, sigma, ties), _spec(rng, 5, n, sigma, ties)
    b["BM_g2/x"] = [v * 1.3 for v in b["BM_g2/x"]]
    plain = compare(result_set(a, context={}), result_set(b, context={}), TIME, Settings())
    shuffled = {name: list(reversed(a[name])) for name in reversed(list(a))}
    scaled_b = {name: [v * k for v in values] for name, values in b.items()}
    scaled_a = {name: [v * k for v in values] for name, values in shuffled.items()}
    other = compare(
        result_set(scaled_a, context={}), result_set(scaled_b, context={}), TIME, Settings()
    )
    first = {c.name: c for c in plain.comparisons}
    for c in other.comparisons:
        was = first[c.name]
        assert (c.verdict, c.failed) == (was.verdict, was.failed), (c.reason, was.reason)
        assert c.ratio == pytest.approx(was.ratio, rel=1e-9)
        assert c.p_value == was.p_value and c.q_value == was.q_value
        assert c.limit == pytest.approx(was.limit, rel=1e-9)
        assert c.ci_low <= c.ratio * (1 + 1e-12) and c.ratio <= c.ci_high * (1 + 1e-12)
    assert "NaN" not in render_json(other) and "nan" not in render_table(other).lower()


def test_views_show_the_numbers_of_the_json_report() -> None:
    """Table, Markdown and JSON of one comparison state the same change, interval, q and
    sensitivity."""
    base = result_set({f"BM_{i}": steady(100.0 + i, seed=i) for i in range(6)})
    cont = result_set(
        {
            f"BM_{i}": [t * (1.1 if i == 2 else 1.0) for t in steady(100.0 + i, seed=i + 9)]
            for i in range(6)
        }
    )
    report = compare(base, cont, TIME, Settings())
    table, markdown = render_table(report), render_markdown(report)
    for row in json.loads(render_json(report))["benchmarks"]:
        change = f"{(row['ratio'] - 1) * 100:+.1f}%"
        ci = f"[{(row['ci_low'] - 1) * 100:+.1f}%, {(row['ci_high'] - 1) * 100:+.1f}%]"
        q = f"{row['q_value']:.2g}"
        line = next(x for x in table.splitlines() if f" {row['name']} " in x)
        assert change in line and ci in line and q in line, line
        md = next(x for x in markdown.splitlines() if f"`{row['name']}`" in x).replace("\\", "")
        catches = f"{row['sensitivity'] * 100:+.1f}%"
        assert change in md and ci in md and catches in md, md


def test_ten_thousand_benchmarks_a_a_is_all_same_and_one_slowdown_is_found() -> None:
    spec = {f"BM_{i}/n:{i}": steady(50.0 + i % 997, n=12, seed=i) for i in range(10_000)}
    same = compare(result_set(spec), result_set(spec), TIME, Settings())
    assert same.counts()[Verdict.SAME] == 10_000 and same.exit_status == 0
    slower = dict(spec, **{"BM_5/n:5": [t * 1.05 for t in spec["BM_5/n:5"]]})
    found = {
        c.name: c
        for c in compare(result_set(spec), result_set(slower), TIME, Settings()).comparisons
    }
    assert found["BM_5/n:5"].verdict is Verdict.REGRESSION, found["BM_5/n:5"].reason


# --- the verdict word says whether the row fails (issue #29) -------------------------------


def _summary(table: str) -> str:
    return next(line for line in table.splitlines() if line.startswith("Geomean change"))


def test_a_slowdown_that_does_not_fail_is_slower_not_regression() -> None:
    """A REGRESSION that does not fail (here: unverified, under 2x worse) read as "this failed"
    under a passing headline: it is SLOWER, and the summary counts the two apart."""
    base = result_set({"BM_two": [1.0, 1.0], "BM_one": [5.0]})
    cont = result_set({"BM_two": [1.9, 1.9], "BM_one": [15.0]})
    report = compare(base, cont, TIME, Settings())
    found = {c.name: (c.verdict, c.failed) for c in report.comparisons}
    assert found == {"BM_one": (Verdict.REGRESSION, True), "BM_two": (Verdict.SLOWER, False)}
    assert _summary(render_table(report)).endswith(": 1 REGRESSION, 1 SLOWER")
    summary = json.loads(render_json(report))["summary"]
    assert summary["counts"]["REGRESSION"] == 1 and summary["counts"]["SLOWER"] == 1
    passing = compare(base, result_set({"BM_two": [1.9, 1.9], "BM_one": [5.0]}), TIME, Settings())
    assert passing.exit_status == 0
    assert _summary(render_table(passing)).endswith(": 1 SLOWER, 1 UNSURE")
    assert "REGRESSION" not in render_table(passing)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), k=st.floats(0.3, 3.0))
def test_property_regression_fails_and_slower_does_not(seed, n, k) -> None:
    """Whatever the repetitions and the change: every REGRESSION row fails, no SLOWER row does,
    and a REGRESSION verdict and a failing slowdown are the same thing."""
    rng = np.random.default_rng(seed)
    base = {f"BM_{i}": (100 * rng.lognormal(0.0, 0.01, n)).tolist() for i in range(8)}
    cont = {
        name: (np.array(v) * (k if i % 2 else 1.0) * rng.lognormal(0.0, 0.01, n)).tolist()
        for i, (name, v) in enumerate(base.items())
    }
    report = compare(result_set(base), result_set(cont), TIME, Settings())
    for c in report.comparisons:
        if c.verdict in (Verdict.REGRESSION, Verdict.SLOWER):
            assert c.failed is (c.verdict is Verdict.REGRESSION), c.reason


# --- few repetitions cannot hide a slowdown (issue #29) -----------------------------------


def test_times_too_small_for_their_ratio_to_be_a_float_are_refused_in_one_line(
    run_cli, write_json
) -> None:
    good = write_json("good.json", {"BM_A": [100.0, 101.0, 102.0, 103.0, 104.0]})
    tiny = write_json("tiny.json", {"BM_A": [5e-324] * 5})  # positive and finite, as read
    for pair in ((good, tiny), (tiny, good)):  # (the log of 0, then the exp of 749)
        r = run_cli("compare", *pair)
        assert r.status == 2 and "BM_A: real_time is 4.94e-321 ns (must be a positive" in r.err
        assert len(r.err.strip().splitlines()) == 1, r.err


def test_three_repetitions_do_not_hide_a_100x_slowdown(run_cli, write_json) -> None:
    """3 and 3 repetitions: the smallest possible p-value is 0.1, so the test can never call it;
    a 100x slowdown was UNSURE with exit 0 (with 2 repetitions the same pair failed)."""
    base = write_json("base.json", {"BM_a": [10.0, 10.1, 10.2]})
    slow = write_json("slow.json", {"BM_a": [1000.0, 1010.0, 1020.0]})
    run = run_cli("compare", base, slow)
    assert run.status == 1, run.out
    line = next(x for x in run.out.splitlines() if x.startswith("REGRESSION"))
    assert "unverified: 3 and 3 repetitions cannot reach q < 0.05" in line
    mild = write_json("mild.json", {"BM_a": [13.0, 13.1, 13.2]})  # +30 %: shown, not failing
    run = run_cli("compare", base, mild)
    assert run.status == 0 and run.out.splitlines()[5].startswith("SLOWER"), run.out
    run = run_cli("compare", base, mild, "--strict")
    assert run.status == 1


def test_a_lone_change_that_the_correction_cannot_let_through_is_unverified() -> None:
    """5 and 5 repetitions reach p = 0.0079, but not among 30 benchmarks after
    Benjamini-Hochberg (it needs p < 0.05 / 30): a lone 3x slowdown fails as unverified, a lone
    +30 % one is SLOWER; the same +30 % among 3 benchmarks is tested and fails."""
    spec = {f"BM_{i}": steady(10.0 + i, n=5, seed=i) for i in range(30)}
    slower = dict(spec, BM_3=[t * 3 for t in spec["BM_3"]], BM_7=[t * 1.3 for t in spec["BM_7"]])
    report = compare(result_set(spec), result_set(slower), TIME, Settings())
    rows = {c.name: c for c in report.comparisons}
    assert rows["BM_3"].verdict is Verdict.REGRESSION and rows["BM_3"].failed
    assert "unverified: 5 and 5 repetitions cannot reach q < 0.05 among 30" in rows["BM_3"].reason
    assert rows["BM_7"].verdict is Verdict.SLOWER and not rows["BM_7"].failed
    few = {name: spec[name] for name in ("BM_0", "BM_1", "BM_7")}
    tested = compare(
        result_set(few), result_set({n: slower[n] for n in few}), TIME, Settings()
    ).comparisons[0]
    assert tested.verdict is Verdict.REGRESSION and "unverified" not in tested.reason


def test_a_suite_that_moved_beyond_its_limits_is_not_no_regression() -> None:
    """1,000 benchmarks with 3 repetitions, every one +50 %: no row can be tested and none is
    2x worse, yet the geometric mean's interval lies far past the limit: the suite fails."""
    spec = {f"BM_{i}": steady(10.0 + i % 97, n=3, seed=i) for i in range(1000)}
    slower = {
        name: [t * 1.5 for t in steady(10.0 + i % 97, n=3, seed=i + 5000)]
        for i, name in enumerate(spec)
    }
    report = compare(result_set(spec), result_set(slower), TIME, Settings())
    assert not any(c.failed for c in report.comparisons)
    assert report.failed and report.exit_status == 1
    suite = report.suite
    assert suite is not None and suite.regression
    assert suite.ci_low > suite.limit_ratio and suite.ratio == pytest.approx(1.5, rel=0.01)
    assert "; regression of the suite: the 95% interval of the geomean of 1000 benchmarks" in (
        _summary(render_table(report))
    )
    heading = render_markdown(report).splitlines()[0]
    assert heading.startswith("### kernelwatch compare: regression of the suite (geomean +50.0%")
    document = json.loads(render_json(report))["summary"]
    assert document["failed"] and document["exit_status"] == 1
    assert document["suite"]["verdict"] == "REGRESSION"
    junit = ET.fromstring(render_junit(report)).find("testsuite")
    assert junit.get("failures") == "1" and junit.get("tests") == "1001"
    geomean = next(c for c in junit.iter("testcase") if c.get("name") == "geomean")
    assert "regression of the suite" in geomean.find("failure").get("message")
    # the same suite unchanged, or moved within its limits, is not a suite regression
    same = compare(result_set(spec), result_set(spec), TIME, Settings())
    assert same.exit_status == 0 and not same.suite.regression
