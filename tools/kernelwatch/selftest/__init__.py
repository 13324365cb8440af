"""`kernelwatch selftest`: does the measurement meet its targets on this GPU?

Three measurements, from runs made exactly as `kernelwatch run` makes them (several processes
per binary, the same compare settings):

* A/A: the same build run N times; every pair compared. A REGRESSION or IMPROVEMENT between
  two runs of the same code is a false alarm.
* Injected slowdowns: the harness's --kernelwatch_inject=REGEX:FRACTION adds a spin kernel to
  the timed region of the matching benchmarks, lasting FRACTION of the benchmark's own median,
  so they run exactly FRACTION slower. Each trial is a control run (FRACTION 0: the same extra
  launch, empty) and one run per level; a REGRESSION of an injected benchmark is a detection.
* Figures of the runs: the CV of the repetitions, the harness's `noise` and `samples`
  counters, wall time.

Every run is saved (one result file each, named by its role) and carries its role in its
context, so a saved folder can be analysed again without a GPU (`--from`), with other compare
settings: thresholds are tuned offline from GPU data.

The modules: runs (planning, running and reading back the saved runs), analysis (the
Analysis and its parts, as data, and analyse, which decides them), views (text, Markdown, JSON).
"""

from kernelwatch.selftest.analysis import (
    EXAMPLES,
    FLAGGED,
    MEASURED,
    TARGET_DETECTION,
    TARGET_FALSE_ALARMS,
    TARGET_MEDIAN_CV,
    TIME,
    analyse,
)
from kernelwatch.selftest.analysis import (
    Analysis,
    Detection,
    Example,
    FamilyFigures,
    Rate,
    RunTime,
    TargetCheck,
)
from kernelwatch.selftest.runs import (
    DEFAULT_AA_RUNS,
    DEFAULT_INJECT,
    DEFAULT_LEVELS,
    DEFAULT_MIN_TIME_US,
    DEFAULT_TRIALS,
    INDEX_KEY,
    INJECT_KEY,
    LEVEL_KEY,
    ROLE_KEY,
    ROLES,
    Collected,
    PlannedRun,
    SavedRun,
    check_counts,
    classify,
    level_text,
    load_runs,
    plan,
    run_all,
)

__all__ = [
    "Analysis",
    "Collected",
    "DEFAULT_AA_RUNS",
    "DEFAULT_INJECT",
    "DEFAULT_LEVELS",
    "DEFAULT_MIN_TIME_US",
    "DEFAULT_TRIALS",
    "Detection",
    "EXAMPLES",
    "Example",
    "FLAGGED",
    "FamilyFigures",
    "INDEX_KEY",
    "INJECT_KEY",
    "LEVEL_KEY",
    "MEASURED",
    "PlannedRun",
    "ROLES",
    "ROLE_KEY",
    "Rate",
    "RunTime",
    "SavedRun",
    "TARGET_DETECTION",
    "TARGET_FALSE_ALARMS",
    "TARGET_MEDIAN_CV",
    "TIME",
    "TargetCheck",
    "analyse",
    "check_counts",
    "classify",
    "level_text",
    "load_runs",
    "plan",
    "run_all",
]
