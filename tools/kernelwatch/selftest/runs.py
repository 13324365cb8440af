"""Planning the selftest's runs, making them (each saved as soon as it is done), and reading
saved runs back (their role is in their context)."""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwatch import defaults, runner
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError, shortened
from kernelwatch.files import check_input_dir, check_input_file, write_json_atomic
from kernelwatch.gbench import read_json
from kernelwatch.names import row_name
from kernelwatch.results import gpu_model

DEFAULT_AA_RUNS = defaults.SELFTEST_AA_RUNS
DEFAULT_TRIALS = defaults.SELFTEST_TRIALS
# Sanity bounds (a typo, not a plan): each run is a whole `run` of the chosen benchmarks, and
# the A/A runs are compared in every pair (1000 runs: about 500,000 comparisons).
MAX_AA_RUNS = 1000
MAX_TRIALS = 1000
DEFAULT_LEVELS = defaults.SELFTEST_LEVELS
DEFAULT_MIN_TIME_US = defaults.SELFTEST_MIN_TIME_US
DEFAULT_INJECT = defaults.SELFTEST_INJECT  # every benchmark that runs

# Context keys that say what a saved run was for.
ROLE_KEY = "kernelwatch_selftest_role"  # "aa", "control" or "inject"
INDEX_KEY = "kernelwatch_selftest_index"  # the A/A run's number, or the trial's
LEVEL_KEY = "kernelwatch_selftest_level"  # "0.02" (inject runs)
INJECT_KEY = "kernelwatch_selftest_inject"  # the regex (control and inject runs)
ROLES = ("aa", "control", "inject")
_RUN_NAME = re.compile(r"(aa|control)-[0-9]+\.json|inject-.+-[0-9]+\.json")  # file_name's


def check_counts(aa_runs: int, trials: int) -> None:
    """--aa-runs and --trials, refused (one line) outside what a selftest can make."""
    if aa_runs < 0 or aa_runs == 1:
        raise InputError(f"--aa-runs {aa_runs}: must be 0 (no A/A) or at least 2 (one pair)")
    if trials < 0:
        raise InputError(f"--trials {trials}: must be 0 (no injection) or more")
    for option, value, most in (
        ("--aa-runs", aa_runs, MAX_AA_RUNS),
        ("--trials", trials, MAX_TRIALS),
    ):
        if value > most:
            raise InputError(f"{option} {value}: must be at most {most}")


@dataclass(frozen=True)
class PlannedRun:
    """One collection of the selftest: an A/A run, a control, or a slowed run."""

    role: str
    index: int  # A/A: the run's number; control and inject: the trial's
    level: float | None = None  # inject: the slowdown

    @property
    def file_name(self) -> str:
        if self.role == "inject":
            return f"inject-{level_text(self.level or 0.0)}-{self.index}.json"
        return f"{self.role}-{self.index}.json"

    def inject_arg(self, regex: str) -> str | None:
        """The harness flag of this run (None for A/A: a run exactly as `run` makes it)."""
        if self.role == "aa":
            return None
        fraction = "0" if self.role == "control" else level_text(self.level or 0.0)
        return f"--kernelwatch_inject={regex}:{fraction}"

    def context(self, regex: str) -> dict[str, str]:
        keys = {ROLE_KEY: self.role, INDEX_KEY: str(self.index)}
        if self.role != "aa":
            keys[INJECT_KEY] = regex
        if self.role == "inject":
            keys[LEVEL_KEY] = level_text(self.level or 0.0)
        return keys

    @property
    def label(self) -> str:
        if self.role == "aa":
            return f"A/A run {self.index}"
        if self.role == "control":
            return f"trial {self.index}: control"
        return f"trial {self.index}: {level_text(self.level or 0.0, percent=True)} slower"


def level_text(level: float, percent: bool = False) -> str:
    """0.02 -> "0.02" (or "2%"): short and exact enough for file names and flags."""
    return f"{level * 100:g}%" if percent else f"{level:g}"


def plan(aa_runs: int, trials: int, levels: Sequence[float]) -> list[PlannedRun]:
    """The runs, interleaved (A/A run k, then trial k's control and slowed runs) so that drift
    of the machine falls on all of them alike."""
    runs: list[PlannedRun] = []
    for k in range(1, max(aa_runs, trials) + 1):
        if k <= aa_runs:
            runs.append(PlannedRun("aa", k))
        if k <= trials:
            runs.append(PlannedRun("control", k))
            runs += [PlannedRun("inject", k, level) for level in levels]
    return runs


@dataclass(frozen=True)
class SavedRun:
    """A run of the selftest as saved: its role and its result document."""

    role: str
    index: int
    level: float | None
    inject: str | None
    path: Path
    document: Mapping[str, Any]

    @property
    def seconds(self) -> float | None:
        text = (self.document.get("context") or {}).get("kernelwatch_run_seconds")
        try:
            seconds = float(str(text))
        except ValueError:
            return None
        # (a hand-edited "nan" read nan s in the text and null in the JSON)
        return seconds if 0 <= seconds < math.inf else None

    @property
    def benchmarks(self) -> int:
        return len({row_name(r) for r in self.document.get("benchmarks", [])})


def classify(path: Path, document: Any) -> SavedRun | None:
    """The selftest run a result document is, from its context; None for any other file."""
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        return None
    context = document.get("context")
    if not isinstance(context, dict) or context.get(ROLE_KEY) is None:
        return None
    role = context.get(ROLE_KEY)
    try:
        # Read through str: int(1.5) was trial 1, float(true) a level of 1.0.
        index = int(str(context.get(INDEX_KEY, "")))
        level = float(str(context[LEVEL_KEY])) if role == "inject" else None
    except (KeyError, TypeError, ValueError):
        raise InputError(
            f"{path}: a selftest run with a damaged {INDEX_KEY} or {LEVEL_KEY}"
        ) from None
    if role not in ROLES:
        raise InputError(f"{path}: unknown selftest role {shortened(repr(role))} ({ROLE_KEY})")
    if index < 1:
        raise InputError(
            f"{path}: bad selftest index {shortened(str(index))} ({INDEX_KEY}; must be 1 or more)"
        )
    if level is not None and not 0 < level < 10:
        raise InputError(
            f"{path}: bad slowdown level {shortened(repr(context[LEVEL_KEY]))} ({LEVEL_KEY}; "
            "must be a fraction above 0 and below 10)"
        )
    inject = context.get(INJECT_KEY)
    if inject is not None and (not isinstance(inject, str) or not inject):
        # str(["^a/"]) is a character class matching nearly every name, "" every name: the
        # benchmarks counted as injected would not be those the harness slowed.
        raise InputError(
            f"{path}: a selftest run with a damaged {INJECT_KEY} {shortened(repr(inject))} "
            "(the regex of the benchmarks slowed)"
        )
    return SavedRun(role, index, level, inject, path, document)


def load_runs(folder: Path) -> list[SavedRun]:
    """Every selftest run saved in `folder` (its *.json files; others are passed over)."""
    check_input_dir(folder, "--from")
    runs: list[SavedRun] = []
    seen: dict[tuple[str, int, float | None], Path] = {}
    for path in sorted(folder.glob("*.json")):
        check_input_file(path, "a selftest run", pipe=False)  # (a FIFO's read waits for ever)
        found = classify(path, read_json(path))
        if found is None:
            continue
        key = (found.role, found.index, found.level)
        if key in seen:
            raise InputError(f"{path}: the same selftest run as {seen[key]}")
        seen[key] = path
        runs.append(found)
    if not runs:
        raise InputError(
            f"--from {folder}: holds no selftest runs (result files whose context has "
            f"{ROLE_KEY}); make them with kernelwatch selftest --out {folder}"
        )
    return runs


def mixed(runs: Sequence[SavedRun]) -> tuple[str, str] | None:
    """Why runs are not one selftest's, as (what differs, "B was measured on X, A measured on
    Y"); None when they are. Runs of several GPU models (compare's own refusal suggests
    --allow-gpu-mismatch, which selftest has not: its figures are of one GPU), of several
    commits (two builds' runs would be counted as A/A pairs: their differences as false
    alarms, or, worse, a real change hidden among them) or of several --filters (a folder two
    selftests wrote: A/A and detection of other sets of benchmarks)."""
    kinds = (
        ("GPU model", gpu_model, "measured on"),
        ("commit", _commit, "measured on"),
        ("--filter", _filter, "made with"),
    )
    for what, of, verb in kinds:
        seen: dict[str, Path] = {}
        for run in runs:
            value = of(run.document.get("context") or {})
            if value is not None:
                seen.setdefault(value, run.path)
        if len(seen) > 1:
            (a, a_path), (b, b_path) = list(seen.items())[:2]
            return what, (
                f"{b_path} was {verb} {what} {shortened(b)}, {a_path} {verb} {shortened(a)}"
            )
    return None


def one_build_and_model(runs: Sequence[SavedRun]) -> None:
    """Refuses, in one line, runs that are not one selftest's (mixed)."""
    found = mixed(runs)
    if found is not None:
        what, why = found
        raise InputError(
            f"{why}: a selftest's runs are of one build on one GPU model, with one --filter; "
            f"keep one {what}'s runs in the folder"
        )


def _filter(context: Mapping[str, Any]) -> str | None:
    found = context.get("kernelwatch_filter")
    return None if found is None else repr(found)


def _commit(context: Mapping[str, Any]) -> str | None:
    commit = context.get("kernelwatch_git_commit")
    return str(commit) if commit not in (None, "", "unknown") else None


@dataclass(frozen=True)
class Collected:
    """What run_all left in the folder: the saved runs, and how many planned runs are still
    to be made (a --time-budget ran out)."""

    runs: list[SavedRun]
    missing: int = 0


def run_all(
    planned: Sequence[PlannedRun],
    jobs: Sequence[runner.Job],
    settings: runner.RunSettings,
    out_dir: Path,
    *,
    inject: str,
    resume: bool,
    progress: runner.Progress,
    context: Mapping[str, str],
    time_budget: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Collected:
    """Make the planned runs, each saved to out_dir as soon as it is done (a run interrupted
    later loses nothing); with `resume`, runs already saved there are kept. With a
    `time_budget` (seconds), no run is started that would likely end past it (judged by the
    longest run so far); at least one is always made."""
    earlier = {p.name for p in out_dir.glob("*.json")} if out_dir.is_dir() else set()
    ours = {p.file_name for p in planned}
    if earlier & ours and not resume:
        raise InputError(
            f"--out {out_dir}: already holds selftest runs ({min(earlier & ours)}, ...): "
            "pass --resume to finish that selftest, or name another --out"
        )
    # Runs of another plan there (--aa-runs 3, then 2; A/A, then trials): the report would
    # leave them out where --from of the folder counts them, with the runs of this one.
    theirs = sorted(n for n in earlier - ours if _RUN_NAME.fullmatch(n))
    if theirs:
        raise InputError(
            f"--out {out_dir}: already holds selftest runs ({theirs[0]}, ...) that this one "
            "does not plan (another --aa-runs, --trials or --slowdowns): name another --out"
        )
    started = clock()
    longest = 0.0
    made = 0
    saved: list[SavedRun] = []
    for number, run in enumerate(planned, 1):
        path = out_dir / run.file_name
        if path.name in earlier:
            saved.append(_resumed(path, run, inject, context))
            progress.say(f"kernelwatch: selftest: kept {path} ({run.label})")
            continue
        if time_budget is not None and made and clock() - started + longest > time_budget:
            missing = sum(1 for p in planned[number - 1 :] if p.file_name not in earlier)
            progress.say(
                f"kernelwatch: selftest: --time-budget {time_budget:g} s: {missing} run(s) "
                f"left (about {longest:.0f} s each); run again with --resume"
            )
            return Collected(saved, missing)
        flag = run.inject_arg(inject)
        run_settings = settings
        if flag is not None:
            run_settings = _with_args(settings, flag)
        before = clock()
        try:
            suite = runner.run_suite(
                jobs,
                run_settings,
                progress=progress,
                label=f"selftest {number}/{len(planned)}, {run.label}",
                context={
                    **context,
                    "kernelwatch_run_purpose": f"selftest {run.label}",
                    **run.context(inject),
                },
            )
        except (BenchmarkCrashed, NoGpuError) as exc:
            if not saved:
                raise
            # The runs saved stay for --resume; this one is not kept: a run without a
            # binary's benchmarks would count them as missed detections and unpaired A/A runs.
            raise type(exc)(
                f"selftest {number}/{len(planned)} ({run.label}): {exc}; the {len(saved)} "
                f"run(s) saved in {out_dir} are kept: run again with --resume to make the rest"
            ) from None
        made_run = classify(path, suite.document) or _impossible(path)
        # The build and GPU are known only from a run: --resume at another commit is refused
        # after its first run, not after making every run left (the kept ones stay).
        conflict = mixed([*saved, made_run]) if saved and not made else None
        if conflict is not None:
            raise InputError(
                f"selftest {number}/{len(planned)} is not written: {conflict[1]}: --resume "
                "finishes a selftest with the build, GPU model and --filter that began it; "
                f"use that {conflict[0]} or name another --out"
            )
        write_json_atomic(path, suite.document, make_parents=True)
        made += 1
        longest = max(longest, clock() - before)
        progress.say(
            f"kernelwatch: selftest {number}/{len(planned)}: wrote {path} ({run.label}, "
            f"{suite.seconds:.0f} s)"
        )
        saved.append(made_run)
    return Collected(saved)


def _with_args(settings: runner.RunSettings, flag: str) -> runner.RunSettings:
    return dataclasses.replace(settings, extra_args=(*settings.extra_args, flag))


def _resumed(path: Path, run: PlannedRun, inject: str, context: Mapping[str, str]) -> SavedRun:
    check_input_file(path, "a selftest run", pipe=False)  # (a FIFO's read waits for ever)
    found = classify(path, read_json(path))
    if found is None or (found.role, found.index, found.level) != (run.role, run.index, run.level):
        raise InputError(
            f"{path}: not the selftest run {run.label}; remove it or use another --out"
        )
    theirs = found.document.get("context") or {}
    if run.role != "aa" and found.inject != inject:
        raise InputError(
            f"{path}: made with --inject {shortened(repr(found.inject))}, not "
            f"{shortened(repr(inject))}"
        )
    if theirs.get("kernelwatch_filter", "") != context.get("kernelwatch_filter", ""):
        raise InputError(
            f"{path}: made with --filter {shortened(repr(theirs.get('kernelwatch_filter')))}, not "
            f"{shortened(repr(context.get('kernelwatch_filter')))}"
        )
    return found


def _impossible(path: Path) -> SavedRun:
    raise InputError(f"{path}: the run just written carries no selftest role")
