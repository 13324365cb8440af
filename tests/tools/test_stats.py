"""Statistics: the U distribution, Mann–Whitney against scipy, BH, Hodges–Lehmann intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from kernelwatch import stats


def test_u_null_distribution() -> None:
    counts = stats.u_null_counts(4, 3)
    assert counts.sum() == math.comb(7, 3)
    assert np.array_equal(counts, counts[::-1])  # symmetric
    assert list(stats.u_null_counts(2, 2)) == [1, 1, 2, 1, 1]


@pytest.mark.parametrize(
    ("n", "m", "rank"),
    # Published two-sided 5% critical values of U (reject when U <= c): rank c, 0-based.
    [(10, 10, 23), (5, 5, 2), (8, 8, 13), (6, 9, 10), (20, 20, 127)],
)
def test_moses_rank_matches_critical_values(n: int, m: int, rank: int) -> None:
    assert stats.moses_rank(n, m, 0.95) == rank


def test_moses_rank_for_tiny_samples_is_the_full_range() -> None:
    assert stats.moses_rank(3, 3, 0.95) == 0
    assert stats.moses_rank(1, 1, 0.95) == 0


def test_moses_rank_normal_approximation_agrees_with_exact() -> None:
    exact = stats.moses_rank(50, 50, 0.95)
    assert stats.moses_rank(51, 51, 0.95) > exact  # the normal branch (51*51 > EXACT_PAIRS)
    assert abs(stats.moses_rank(51, 51, 0.95) - (exact + 51 * 51 / 2 - 1250)) < 30


def test_min_p_value() -> None:
    assert stats.min_p_value(3, 3) == pytest.approx(0.1)
    assert stats.min_p_value(10, 10) == pytest.approx(2 / 184756)


@pytest.mark.parametrize(("n", "m"), [(3, 3), (5, 7), (10, 10), (12, 4), (30, 30), (60, 40)])
def test_mann_whitney_matches_scipy_without_ties(n: int, m: int) -> None:
    rng = np.random.default_rng(n * 100 + m)
    x = rng.lognormal(0.0, 0.05, (200, n))
    y = rng.lognormal(rng.choice([0.0, 0.02, 0.1], (200, 1)), 0.05, (200, m))
    ours = stats.mann_whitney(np.log(x), np.log(y))
    method = "exact" if n * m <= stats.EXACT_PAIRS else "asymptotic"
    theirs = scipy.stats.mannwhitneyu(x, y, axis=1, method=method).pvalue
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_mann_whitney_matches_scipy_with_ties() -> None:
    # beyond TIED_EXACT_VALUES: the normal approximation with the tie correction
    rng = np.random.default_rng(7)
    x = rng.integers(0, 6, (300, 12)).astype(float) + 1
    y = rng.integers(0, 7, (300, 11)).astype(float) + 1
    ours = stats.mann_whitney(np.log(x), np.log(y))
    theirs = scipy.stats.mannwhitneyu(x, y, axis=1, method="asymptotic").pvalue
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)


@pytest.mark.parametrize(("n", "m"), [(2, 2), (3, 3), (3, 5), (6, 4), (8, 7)])
def test_mann_whitney_with_ties_in_small_samples_is_never_below_the_exact_p(n: int, m: int) -> None:
    if not hasattr(scipy.stats, "PermutationMethod"):
        pytest.skip("scipy.stats.PermutationMethod needs scipy 1.11")
    rng = np.random.default_rng(n * 10 + m)
    x = rng.integers(0, 4, (20, n)).astype(float) + 1
    y = rng.integers(0, 5, (20, m)).astype(float) + 1
    ours = stats.mann_whitney(np.log(x), np.log(y))
    exact = scipy.stats.PermutationMethod(n_resamples=np.inf)
    theirs = np.array([scipy.stats.mannwhitneyu(a, b, method=exact).pvalue for a, b in zip(x, y)])
    approximation = scipy.stats.mannwhitneyu(x, y, axis=1, method="asymptotic").pvalue
    tied = np.array([len(np.unique(np.concatenate([a, b]))) < n + m for a, b in zip(x, y)])
    expected = np.where(tied, np.maximum(theirs, approximation), theirs)
    np.testing.assert_allclose(ours, expected, rtol=1e-9)


def test_ties_never_beat_the_smallest_p_value_of_distinct_values() -> None:
    """Quantised times (a timer's resolution, `iterations`) must not make a change more
    significant than distinct values can: 3 and 3 values a side, all equal within a side, gave
    p = 0.047 from the normal approximation, where no 6 values can reach below 0.1."""
    for n in range(2, 11):
        x, y = np.full((1, n), 5.0), np.full((1, n), 6.0)
        assert stats.mann_whitney(x, y)[0] >= stats.min_p_value(n, n) * (1 - 1e-12)


def test_bh_adjust_matches_scipy_and_a_worked_example() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.20, 0.001])
    expected = np.array([0.025, 0.05, 0.05, 0.2, 0.005])
    np.testing.assert_allclose(stats.bh_adjust(p), expected)
    if hasattr(scipy.stats, "false_discovery_control"):
        rng = np.random.default_rng(3)
        many = rng.uniform(0, 1, 500) ** 3
        np.testing.assert_allclose(
            stats.bh_adjust(many), scipy.stats.false_discovery_control(many, method="bh")
        )
    assert stats.bh_adjust(np.array([])).size == 0


def test_robust_cv_estimates_sigma() -> None:
    rng = np.random.default_rng(1)
    values = rng.normal(100.0, 2.0, 20000)
    assert stats.robust_cv(values) == pytest.approx(0.02, rel=0.05)
    assert np.isnan(stats.robust_cv(np.array([1.0, 2.0])))


def test_pair_statistics_basics() -> None:
    x = np.array([10.0, 11.0, 12.0, 13.0])
    y = np.array([20.0, 22.0, 24.0, 26.0, 28.0])
    ps = stats.pair_statistics([x], [y], 0.95)
    assert ps.baseline_median[0] == 11.5 and ps.contender_median[0] == 24.0
    assert math.exp(ps.log_ratio[0]) == pytest.approx(24.0 / 11.5)
    assert ps.log_ci_low[0] <= ps.log_ratio[0] <= ps.log_ci_high[0]
    assert ps.p_value[0] == pytest.approx(scipy.stats.mannwhitneyu(x, y).pvalue)


def test_pair_statistics_scales_and_swaps_exactly() -> None:
    rng = np.random.default_rng(5)
    xs = [rng.lognormal(3, 0.1, n) for n in (3, 5, 10, 10, 7)]
    ys = [rng.lognormal(3.05, 0.1, n) for n in (4, 5, 10, 10, 9)]
    base = stats.pair_statistics(xs, ys, 0.95)
    swapped = stats.pair_statistics(ys, xs, 0.95)
    assert np.array_equal(swapped.log_ratio, -base.log_ratio)
    assert np.array_equal(swapped.log_ci_low, -base.log_ci_high)
    assert np.array_equal(swapped.p_value, base.p_value)
    scaled = stats.pair_statistics(xs, [y * 1.37 for y in ys], 0.95)
    np.testing.assert_allclose(scaled.log_ratio, base.log_ratio + math.log(1.37), atol=1e-12)
    np.testing.assert_allclose(scaled.log_ci_high, base.log_ci_high + math.log(1.37), atol=1e-12)


def test_hodges_lehmann_interval_covers_the_true_ratio() -> None:
    # 2,000 simulated comparisons with a true ratio of 1.03: about 95 % must cover it.
    rng = np.random.default_rng(11)
    x = [rng.lognormal(0.0, 0.02, 10) for _ in range(2000)]
    y = [rng.lognormal(math.log(1.03), 0.02, 10) for _ in range(2000)]
    ps = stats.pair_statistics(x, y, 0.95)
    covered = (ps.log_ci_low <= math.log(1.03)) & (math.log(1.03) <= ps.log_ci_high)
    assert 0.93 <= covered.mean() <= 0.98


def test_empty_and_unpaired_inputs() -> None:
    ps = stats.pair_statistics([], [], 0.95)
    assert ps.log_ratio.size == 0
    ps = stats.pair_statistics([np.array([1.0])], [np.array([2.0])], 0.95)
    assert math.exp(ps.log_ratio[0]) == pytest.approx(2.0)
    assert np.isnan(ps.baseline_cv[0])


def test_pairs_too_many_to_hold_give_the_same_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    # Found from the sorted values (stats._without_pairs) where the differences are too many to
    # hold: the same interval, U and p-value to the bit, ties and quantised times included.
    rng = np.random.default_rng(7)
    sizes = [(1, 1), (3, 4), (10, 10), (10, 10), (57, 31), (200, 150)]
    xs = [rng.lognormal(3.0, 0.05, n) for n, _ in sizes]
    ys = [rng.lognormal(3.0 + 0.02 * i, 0.05, m) for i, (_, m) in enumerate(sizes)]
    xs += [np.round(x, 0) for x in xs]  # ties within and between the sides
    ys += [np.round(y, 0) for y in ys]
    held = stats.pair_statistics(xs, ys, 0.95)
    monkeypatch.setattr(stats, "PAIRS_AT_ONCE", 8)
    ranked = stats.pair_statistics(xs, ys, 0.95)
    for name in ("log_ci_low", "log_ci_high", "p_value", "smallest_p", "log_ratio"):
        assert np.array_equal(getattr(ranked, name), getattr(held, name)), name
    swapped = stats.pair_statistics(ys, xs, 0.95)
    assert np.array_equal(swapped.log_ci_low, -ranked.log_ci_high)


def test_a_pair_of_150000_samples_a_side_is_compared() -> None:
    # nvbench's --jsonbin files hold every sample (153,037 a state in its own test file): their
    # 2.25e10 pairwise differences, held at once, were an internal error ("Unable to allocate").
    rng = np.random.default_rng(8)
    x, y = rng.lognormal(0.0, 0.01, 150_000), rng.lognormal(1e-4, 0.01, 150_000)
    ps = stats.pair_statistics([x], [y], 0.95)
    assert ps.log_ci_low[0] < 1e-4 < ps.log_ci_high[0] < ps.log_ci_low[0] + 2e-4
    expected = scipy.stats.mannwhitneyu(np.log(x), np.log(y), method="asymptotic").pvalue
    assert ps.p_value[0] == pytest.approx(expected, rel=1e-9)


def test_the_smallest_p_value_of_thousands_of_samples_is_zero_not_an_overflow() -> None:
    # nvbench sample files bring thousands of samples a side (tests/data/nvbench)
    assert stats.min_p_value(5000, 5000) == 0.0
    assert stats.min_p_value(5, 5) == pytest.approx(2 / 252)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 10, 31, 999, 1000, 1001, 2000, 99_999, 10**6])
@pytest.mark.parametrize("probability", [0.6, 0.975, 0.995, 0.9995])
def test_t_quantile_matches_scipy(df: int, probability: float) -> None:
    """The suite's interval (Report.suite): the exact series up to T_SERIES_DF degrees of
    freedom, the expansion about the normal quantile beyond."""
    ours = stats.t_quantile(probability, df)
    assert ours == pytest.approx(scipy.stats.t.ppf(probability, df), rel=1e-10)


def test_t_quantile_refuses_what_is_not_a_quantile() -> None:
    for probability, df in ((0.5, 3), (1.0, 3), (0.9, 0)):
        with pytest.raises(ValueError):
            stats.t_quantile(probability, df)
