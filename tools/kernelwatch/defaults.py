"""What a command uses when it is not told: every default that a `--help` shows.

They live here, in a leaf that imports nothing, so that `kernelwatch --help` (which builds
every command's parser, and so words every default) loads no command's work: a command
imports its workflow only when it runs (issue 33: the help imported 107 modules, numpy
included). The module of each concern names its defaults from here (runner.DEFAULT_PROCESSES,
compare.DEFAULT_THRESHOLD, ...); a value is changed here only.
"""

from __future__ import annotations

# --- compare: how a benchmark is judged ------------------------------------------------------

# Why these defaults: docs/measurement.md. A 1 % threshold lets a 2 % slowdown be flagged
# where the run-to-run noise is small; 2 x a benchmark's noise (itself the largest of four
# estimates) kept every same-code comparison of selftest on an H200 quiet (0 of 225) while
# catching 72 of 72 injected 5 % slowdowns, where 3 x missed one.
DEFAULT_THRESHOLD = 0.01
DEFAULT_NOISE_MULTIPLIER = 2.0
DEFAULT_ALPHA = 0.05

# --- run: how benchmarks run ----------------------------------------------------------------

# Why these defaults: docs/running.md.
RUN_REPETITIONS = 10
MAX_TIME = 0.25  # the harness's own default
PROCESSES = 2  # `kernelwatch run`: 2 processes of 5 repetitions each
# The relative standard error of a median that a run aims for (precision.py): with 10
# repetitions, 6-15 of the 312 benchmarks that do not touch the host are above it on an H200
# card (the 8192^2 transposes, the sums of 1 Mi elements, the empty kernel), the others at a
# median of 0.05 %; topping them up made runs of 441-457 s, against 368-421 s without. Two
# top-ups at most: 30 repetitions take a 1.2 % spread to 0.27 %.
PRECISION = 0.0025
TOP_UPS = 2

# Where `run --gpus` measures the host-bound benchmarks (--host-bound-on).
HOST_BOUND_ON = ("first", "each")

# run --anchor: whether to judge against the baseline's commit measured on this card.
ANCHOR_MODES = ("auto", "always", "never")
# How old a stored anchor may be and still serve. A card's drift was measured over 0.2 h at the
# most (anchors reused 0.1-0.2 h old on six H100 and H200 cards: no false alarm), never over
# hours or days: 24 h is a prior, one nightly's interval. What a drift can do is bounded both
# ways: a regression against a reused anchor is confirmed against the baseline's commit
# measured again (anchor.again), so a drift fails no unchanged code; it can only hide a change
# of its own size.
ANCHOR_MAX_AGE_HOURS = 24.0
ANCHOR_AGE_MEASURED_HOURS = 0.2

# --- ab (and bisect's oracle) -----------------------------------------------------------------

# Not derived from a measurement: no other count of first rounds or repetitions was measured.
# 3 x 4 = 12 values a side put the smallest Mann-Whitney p at 7.4e-7, room for
# Benjamini-Hochberg over thousands of benchmarks (a bound, docs/running.md, `ab` step 4). What
# was measured is what they cost on unchanged code, replayed from H200 rounds of 4 repetitions:
# 19.85 % of 3-round runs failed on GPU-c9368905 (4 of 20 processes slow), 3.48 and 3.92 % on
# GPU-b999dded and GPU-9e83bbdd; with AB_CONFIRM_ROUNDS 0.46, 0 and 0 % (docs/measurement.md,
# "An anchor's two processes"). ab and bisect say so where these are used (ab.unmeasured).
AB_ROUNDS = 3
AB_REPETITIONS = 4
# More rounds of each side for what the first rounds flag (ab.judge_confirmed). Replayed on the
# rounds of three H200 cards, 3-round runs of unchanged reductions and transposes failed in up to
# 19.9 % of runs (GPU-c9368905, where 4 of 20 processes ran slow); with 2, 3, 4 and 5 more
# rounds a side 5.7, 1.0, 0.46 and 0 %, and none on the other two cards from 2 more
# (docs/measurement.md, "An anchor's two processes"). Each costs a round of the flagged
# benchmarks only.
AB_CONFIRM_ROUNDS = 4
EXPLAIN_BUDGET = 300.0  # seconds of ncu per command: about 10 s per benchmark and side on an H200

# --- baseline update ------------------------------------------------------------------------

# Not derived from a measurement (set in bf795ea; docs/measurement.md measures none): it is what
# one `kernelwatch run` gives a benchmark (2 processes x 5), and `baseline update` says so where
# it applies. With 10 and 10 repetitions a lone regression can be called among about 4,600
# benchmarks (a bound, docs/compare.md, "Power"; the suite has 356).
BASELINE_MIN_REPETITIONS = 10

# --- history changes ------------------------------------------------------------------------

# Larger than compare's: nights run on different processes and often different cards and hosts
# of one model: a third H200 card's medians of one build's 312 GPU kernels differed from two
# others' by up to 4.74 % (p99 4.56 %; docs/measurement.md, "What was measured"), and simulated
# flat 12-run series with 1.5 % run-to-run noise showed a step in 7 of 200 at 3 %, none at 5 %
# (docs/history.md). Smaller steps are compare's to catch, against the baseline, with each
# benchmark's own noise. The suite config's threshold widens it only (changes.threshold_of).
CHANGES_THRESHOLD = 0.05
CHANGES_ALPHA = DEFAULT_ALPHA  # as compare: 0.05

# --- report, export -------------------------------------------------------------------------

TREND_PLOTS = 24  # at most, on the report's page
EXPORT_FORMATS = ("bmf", "github-action-benchmark")

# --- selftest -------------------------------------------------------------------------------

SELFTEST_AA_RUNS = 4
SELFTEST_TRIALS = 2
SELFTEST_LEVELS = (0.01, 0.02, 0.05)
# The bound of issue 6's detection targets (docs/measurement.md, "The targets"), not derived
# from a measurement: none placed the cut at 50 us, and selftest says so where it is used. What
# was measured near it: the injected spin costs one launch, about 1.5 us on an H200, so a 2 %
# slowdown is exact only from about 75 us (below, one launch: 3 % at 50 us).
SELFTEST_MIN_TIME_US = 50.0
SELFTEST_INJECT = "."  # every benchmark that runs
# The targets of issue 6 (docs/measurement.md).
TARGET_FALSE_ALARMS = 0.01  # at most, of all A/A benchmark comparisons
