"""Deciding a verdict per benchmark from two result sets. Verdicts are data; render/ shows them.

The decision for a benchmark measured on both sides (see docs/compare.md):

* limit = max(threshold, noise floor); threshold from --threshold or the first matching config
  rule, noise floor = noise_multiplier x the benchmark's noise at the level the comparison
  crosses (levels.py: process, card, kind or host, from the two contexts; a host configured
  unlike every baseline host: at least the host prior): the baseline's stored
  noise (baselines/<slug>/noise.json) or else computed as noise/ does; where that level was
  never measured, the prior for it (levels.prior); and at least the spread of the
  contender's own per-process medians.
* UNSURE if either side has fewer than min_repetitions values; but a ratio past the limit is
  then an unverified REGRESSION / IMPROVEMENT, and an unverified REGRESSION fails when it is
  at least UNVERIFIED_FAIL_RATIO worse (or at all, with `strict`). So is a ratio past the limit
  that the test did not call significant where it could not have: the smallest exact p-value
  for its repetitions, times the benchmarks tested (Benjamini-Hochberg), is not below alpha.
* REGRESSION / IMPROVEMENT if the Benjamini–Hochberg-adjusted Mann–Whitney p-value is below
  alpha and the ratio of medians is worse / better than the limit (symmetric in log space).
* UNSURE if the confidence interval of the ratio reaches past the limit on both sides, or if the
  ratio is past the limit without significance; SAME otherwise.
* A host-bound benchmark (its rows carry the counter `host_bound` = 1: its time includes host
  work) compared with a baseline measured on another host does not fail.
* The word says whether a row fails: REGRESSION fails; a slowdown that does not (unverified
  under 2x, host-bound against another host, not confirmed by a re-run) is SLOWER.
* The suite: where the confidence interval of the geometric mean of the ratios lies wholly past
  the geometric mean of the limits, the comparison fails as a regression of the suite
  (Report.suite_change), even when no row can fail on its own.
* Each benchmark's sensitivity: the smallest slowdown this comparison catches with 90 %
  probability, from its limit and the spread of the difference of the two medians.

    outcome.py     Verdict, Settings, Comparison, Report: what a comparison decides, as data;
                   the rule above (decide_many / decide), the limit's wording, what fails
    reference.py   what each side holds (presence verdicts, the benchmarks measured on both);
                   what a contender is judged against and at which level; its spread there
    judge.py       compare(): the verdict of every benchmark, with the report's notes; those
                   judged from summaries (nvbench without samples)
"""

from kernelwatch.compare.judge import compare
from kernelwatch.compare.outcome import (
    DEFAULT_ALPHA,
    DEFAULT_NOISE_MULTIPLIER,
    DEFAULT_THRESHOLD,
    SEVERITY,
    SLOWDOWNS,
    UNVERIFIED_FAIL_RATIO,
    Comparison,
    Report,
    Settings,
    SideSummary,
    SuiteChange,
    Verdict,
    decide,
    decide_many,
    worded_for,
)

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_NOISE_MULTIPLIER",
    "DEFAULT_THRESHOLD",
    "SEVERITY",
    "SLOWDOWNS",
    "UNVERIFIED_FAIL_RATIO",
    "Comparison",
    "Report",
    "Settings",
    "SideSummary",
    "SuiteChange",
    "Verdict",
    "compare",
    "decide",
    "decide_many",
    "worded_for",
]
