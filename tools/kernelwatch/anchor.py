"""Anchoring a run: the baseline's own commit measured on this runner's card, so that the
current build is judged against the same code on the same card (the process level) instead of
against numbers another card or host made (docs/running.md, "Anchoring").

A committed baseline made on other cards holds a run on another card to the spread between
cards or hosts: on an H200 that lets most 2 % slowdowns through, where the process level
catches 98 % of them (docs/measurement.md, "What a verdict can see"). The anchor is the
baseline's commit (its manifest's `commit`), built in `ab`'s worktree with `ab`'s build step
once the run's first process round has said which card and host it is on, and measured with
the run's settings on the same card, its process rounds interleaved with the run's (A B B A:
a drift of the card over the run falls on both alike). The committed
baseline is then compared with the anchor (same code, another runner): what differs there is
the runner, reported as a finding, never a failing regression.

A benchmark binary that the checkout's build made identically to the baseline commit's (`ab`'s
rule, ab.py: machine code, host code and build settings) is the baseline's own code: the anchor
does not measure it, and its benchmarks read IDENTICAL, never failing; the run's own numbers of
it stand in for the anchor's in the runner finding.

An anchor is kept in <checkout>/.kernelwatch/anchors/<key>.json, the key naming the baseline's
commit, the card, the host (its identity and configuration) and the harness settings; a later
run with the same key reuses it while it is younger than --anchor-max-age. One kept there that is
not that (damaged, of another commit, card or settings, dated in the future) is measured again,
with a note; where none can be kept there (a folder, a link), the run is not anchored, and says
why.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kernelwatch import ab, defaults, levels, runner, verdict
from kernelwatch import baseline as baselines
from kernelwatch import noise as noises
from kernelwatch.compare import SEVERITY, Report, Verdict, presence_notes
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError, shortened
from kernelwatch.files import check_writable, strict_json, write_json_atomic
from kernelwatch.gbench import MAX_UNPACKED, read_json
from kernelwatch.loading import from_documents
from kernelwatch.results import ANCHOR_KEY, IDENTICAL_KEY, ResultSet

MODES = defaults.ANCHOR_MODES
CONTEXT_KEY = ANCHOR_KEY  # whether and how a verdict was anchored (one phrase, a string)
SETTINGS_KEY = "kernelwatch_anchor_key"  # the key (key()) an anchor was measured for
ANCHORS = ab.WORKTREES.parent / "anchors"
DEFAULT_MAX_AGE_HOURS = defaults.ANCHOR_MAX_AGE_HOURS  # why 24 h: defaults.py


def max_age(text: str) -> float:
    """--anchor-max-age: hours (a number, or with a unit: 90m, 24h, 2d) -> seconds."""
    units = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
    number, unit = (text[:-1], text[-1]) if text[-1:] in units else (text, "h")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        seconds = -1.0
    if not (0 <= seconds < float("inf")):  # (1e308d overflows to no limit at all)
        raise InputError(
            f"--anchor-max-age {shortened(text)}: must be a number of hours, 0 or more (or with "
            "a unit: 90m, 24h, 2d)"
        )
    return seconds


def mode(given: str, ruled_out: Mapping[str, Any]) -> str:
    """--anchor as it applies: anchoring needs one GPU, this project's build and the committed
    baseline, so `auto` is `never` with an option that rules it out, and `always` is refused
    (exit 2, one line)."""
    for option, value in ruled_out.items():
        if value and given == "always":
            raise InputError(
                f"--anchor always: cannot anchor with {option} (it needs one GPU, this "
                "project's build and its committed baseline)"
            )
        if value:
            return "never"
    return given


def wanted(mode: str, baseline: Mapping[str, Any], run: Mapping[str, Any]) -> str | None:
    """Why this run is anchored, or None. `auto`: when the baseline holds no run on this card,
    so that the comparison would cross the card, kind or host level (levels.py)."""
    if mode == "never":
        return None
    if mode == "always":
        return "--anchor always"
    card = levels.unit_of(run).card
    if card is not None and card in {unit.card for unit in levels.units_of(baseline)}:
        return None
    return f"the baseline holds no run on this card: {levels.crossing(baseline, run).why}"


@dataclass(frozen=True)
class Anchor:
    """The baseline's commit measured on this card: its result, where it is kept, and whether
    it was measured by this run or reused (with its age)."""

    commit: str
    document: dict[str, Any]
    path: Path
    reused: bool
    age_s: float
    identical: frozenset[str] = frozenset()  # benchmarks of binaries built identically

    def phrase(self) -> str:
        how = f"reused, {self.age_s / 3600:.1f} h old" if self.reused else "measured by this run"
        if self.reused and self.age_s > defaults.ANCHOR_AGE_MEASURED_HOURS * 3600:
            how += (
                f", older than a card's drift was ever measured over "
                f"({defaults.ANCHOR_AGE_MEASURED_HOURS:g} h): a drift since may hide a change of "
                "its size"
            )
        where = f"; {self.path}"
        if self.identical:
            if not self.document.get("benchmarks"):
                how, where = "nothing to measure", ""  # (and nothing kept)
            how += f"; {len(self.identical)} benchmark(s) built identically, not measured"
        return f"anchored on {self.commit[:12]} ({how}{where})"

    def completed(self, run: Mapping[str, Any]) -> Anchor:
        """The anchor with the run's own rows (`run`: its result document) of the benchmarks
        built identically: the baseline's code on this card, as the anchor would have measured
        it."""
        if not self.identical:
            return self
        rows = [
            row
            for row in run.get("benchmarks", [])
            if isinstance(row, dict) and row.get("run_name") in self.identical
        ]
        context = self.document.get("context") or run.get("context") or {}  # (none measured)
        measured = [  # (a kept anchor may hold some of them, measured when they differed)
            row
            for row in self.document.get("benchmarks", [])
            if not isinstance(row, dict) or row.get("run_name") not in self.identical
        ]
        document = {**self.document, "context": context, "benchmarks": [*measured, *rows]}
        return dataclasses.replace(self, document=document)

    def holds(self, names: set[str]) -> bool:
        return names <= {row["run_name"] for row in self.document.get("benchmarks", [])}

    def side(self) -> ResultSet:
        return from_documents(str(self.path), [self.document])

    def against(self, floor: noises.LevelNoise | None) -> baselines.Against:
        """The anchor as the run's baseline (as_baseline)."""
        return as_baseline(str(self.path), [self.document], floor)


def as_baseline(
    label: str, documents: Sequence[Any], floor: noises.LevelNoise | None
) -> baselines.Against:
    """An anchor's result as the run's baseline. Its spread at the process level is its own
    processes' (as `ab`'s A), at least `floor` (noise.process_floor: the committed baseline's)
    where that holds the benchmark (noise.floored). Two processes are too few to see a slow mode
    that comes one process in several: `ab` rounds on three H200 cards replayed as anchored runs
    flagged an unchanged kernel in 7-26 % of them (reductions) and 29-47 % (transposes) on the
    anchor's own spread, 0-4.3 % and 0.2-7.6 % with this floor (docs/measurement.md, "An
    anchor's two processes")."""
    side = from_documents(label, documents)
    floored = None if floor is None else noises.floored(side, floor, "the anchor's own")
    return baselines.Against(label, "the anchor", list(documents), floored, None, side)


class Builds:
    """The baseline's commits one `run` has built. The GPUs of a `run --gpus` anchor at once,
    each on its own card, from one worktree: the first builds it, the others wait and take it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: dict[str, ab.Side] = {}

    def side(self, repo: Path, commit: str, why: str, progress: runner.Progress) -> ab.Side:
        """`commit` built in `ab`'s worktree (InputError: it did not build)."""
        with self._lock:
            if commit not in self._built:
                side = ab.prepare_side(repo, "anchor", commit)
                progress.say(
                    f"kernelwatch: {why}: building the baseline's commit {side.short} in "
                    f"{side.build_dir}"
                )
                ab.build_side(ab.cmake_build, side)
                self._built[commit] = side
            return self._built[commit]


@dataclass(frozen=True)
class Request:
    """How `run` asks for an anchor: --anchor (auto or always), --anchor-max-age (in seconds)
    and the baselines folder (the checkout is the git repository that holds it); what it built."""

    mode: str
    max_age_s: float
    root: Path
    builds: Builds = dataclasses.field(default_factory=Builds, compare=False, repr=False)


class Run(Protocol):
    """What anchoring takes of `run`'s command (commands/run.py's RunCommand)."""

    @property
    def filter(self) -> str | None: ...

    @property
    def command_line(self) -> str: ...


def key(commit: str, context: Mapping[str, Any], settings: runner.RunSettings) -> str:
    """What an anchor's numbers depend on: the code, the card, the host and how it was run."""
    unit = levels.unit_of(context)
    parts = [
        commit,
        unit.card,
        unit.host,
        unit.config,
        f"{settings.max_time:g}",
        settings.interleave,
        settings.repetitions,
        settings.processes,
        list(settings.extra_args),
    ]
    return hashlib.sha256(strict_json(parts, indent=None).encode()).hexdigest()[:16]


def stored(
    path: Path, max_age_s: float, now: datetime.datetime, commit: str, run: Mapping[str, Any]
) -> Anchor | str | None:
    """The anchor kept at `path` (a regular file or none: prepare) when it is young enough; None
    where none is kept or it is too old; else why the one kept there is not the anchor of
    `commit` on the card of the run whose context is `run`, measured with the settings its key
    (`path`'s name) names (damaged, copied or renamed into place): measured again and rewritten,
    with a note."""
    try:
        if path.stat().st_size > MAX_UNPACKED:  # (read whole, a sparse file of terabytes)
            return f"{path}: larger than {MAX_UNPACKED >> 30} GiB, no anchor"
        document = read_json(path)
        from_documents(str(path), [document])  # every value checked, as a baseline's is
    except OSError:  # (none there)
        return None
    except InputError as exc:
        return str(exc)
    context, rows = document.get("context") or {}, document["benchmarks"]
    if not all(isinstance(row.get("run_name"), str) for row in rows):
        return f"{path}: a benchmark row without a run_name"
    theirs = context.get("kernelwatch_anchor_commit")
    if theirs != commit:
        return f"{path}: measured {shortened(str(theirs))}, not the baseline's commit {commit[:12]}"
    if not _same_runner(context, run):
        return f"{path}: measured on another card or host than this run"
    if context.get(SETTINGS_KEY) != path.stem:  # (its settings are in the key alone)
        return f"{path}: not measured with the settings its name stands for"
    started = str(context.get("kernelwatch_run_started"))
    try:
        age = (now - datetime.datetime.fromisoformat(started)).total_seconds()
    except (ValueError, TypeError, OverflowError):  # (TypeError: a naive date)
        return f"{path}: no date of its measurement ({shortened(started)})"
    if age < 0:
        return f"{path}: dated in the future ({shortened(started)})"
    if age > max_age_s:
        return None
    return Anchor(commit, document, path, True, age)


def _same_runner(theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> bool:
    """Whether two results' contexts name one card of one host (what an anchor's key names;
    its host's configuration may read otherwise between processes)."""
    a, b = levels.unit_of(theirs), levels.unit_of(ours)
    return (a.card, a.host) == (b.card, b.host)


@dataclass(frozen=True)
class Pending:
    """An anchor to measure beside the run: the baseline's commit, built, and its jobs."""

    commit: str
    side: ab.Side
    jobs: list[runner.Job]
    path: Path  # where it is kept once measured
    repo: Path
    context: dict[str, Any]  # its result's context keys
    identical: frozenset[str] = frozenset()  # benchmarks it does not measure (Anchor's)

    def measuring(
        self, settings: runner.RunSettings, progress: runner.Progress
    ) -> runner.Measuring:
        """Its rounds, on the GPU whose lock the run holds; a crash costs only the anchor."""
        return runner.Measuring(
            self.jobs,
            settings,
            progress=progress,
            label="anchor",
            context=self.context,
            keep_going=True,
            lock=False,
        )

    def finish(
        self, measuring: runner.Measuring, ours: Mapping[str, Any], progress: runner.Progress
    ) -> Anchor | str:
        """The measured anchor, kept for reuse; or the note that says why there is none."""
        try:
            measured = measuring.finish()
        except BenchmarkCrashed as exc:  # (a GPU gone is NoGpuError: the run's end, exit 4)
            return (
                f"not anchored: the baseline's commit {self.side.short} failed on this card: {exc}"
            )
        document = measured.document
        if not _same_runner(document.get("context") or {}, ours):  # (CUDA_VISIBLE_DEVICES?)
            return "not anchored: the anchor ran on another card or host than this run"
        try:  # (a full disk, a folder put there since prepare): not the run's end
            ab.ignore_cache(self.repo / ab.WORKTREES.parent)
            write_json_atomic(self.path, document, make_parents=True)
        except InputError as exc:
            return f"not anchored: the anchor measured could not be kept: {exc}"
        anchor = Anchor(self.commit, document, self.path, False, 0.0, self.identical)
        progress.say(f"kernelwatch: {anchor.phrase()}")
        return anchor


def prepare(
    request: Request,
    settings: runner.RunSettings,
    jobs: Sequence[runner.Job],
    run: Run,
    found: baselines.Against,
    why: str,
    context: Mapping[str, Any],
    progress: runner.Progress,
) -> Anchor | Pending | str:
    """The anchor of the committed baseline `found` for the run of `jobs` whose first round's
    result has `context`: reused, or its commit built, to be measured beside the run; or the
    note that says why there is none (the run is then judged against the committed baseline,
    as without anchoring)."""
    commit = baselines.read_manifest(Path(found.label).parent).get("commit")
    if not isinstance(commit, str) or not commit:
        return "not anchored: the baseline's manifest names no commit"
    repo = ab.repo_root(request.root.parent, needed=False)
    names = {name for job in jobs for name in job.names}
    path = repo / ANCHORS / f"{key(commit, context, settings)}.json"
    try:  # A folder, link or FIFO there is never read (a FIFO waits for ever for a writer), and
        # the anchor measured could not be kept in its place: that was the whole run's end.
        check_writable(path, make_parents=True)
    except InputError as exc:
        return f"not anchored: {exc}"
    now = datetime.datetime.now(datetime.UTC)
    kept = stored(path, request.max_age_s, now, commit, context)
    if isinstance(kept, str):
        progress.say(f"kernelwatch: the kept anchor is not reused: {kept}")
        kept = None
    elif kept is not None and kept.holds(names):
        progress.say(f"kernelwatch: {why}: {kept.phrase()}")
        return kept
    try:
        ab.git(repo, "cat-file", "-e", f"{commit}^{{commit}}")
    except InputError:
        return (
            f"not anchored: the baseline's commit {commit[:12]} is not in {repo} (a "
            "shallow clone? fetch it, or the whole history: docs/ci.md)"
        )
    try:
        side = request.builds.side(repo, commit, why, progress)
        anchor_jobs = _jobs(side, jobs, run.filter, settings)
    except InputError as exc:
        return f"not anchored: {exc}"
    ours = str(context.get("kernelwatch_git_commit"))
    same = _built_identically(side, anchor_jobs, jobs, ours)
    identical = frozenset(name for job in jobs if job.binary.name in same for name in job.names)
    anchor_jobs = [job for job in anchor_jobs if job.binary.name not in same]
    if identical:
        progress.say(
            f"kernelwatch: {len(identical)} benchmark(s) of {len(same)} binaries built "
            f"identically to the baseline's commit {side.short}: the anchor does not measure them"
        )
    # What the baseline's commit has: a benchmark new since then is NEW, never in an anchor.
    wanted = {name for job in anchor_jobs for name in job.names}
    if kept is not None and not (wanted and kept.holds(wanted)):
        kept = None
    if kept is not None or not anchor_jobs:
        # (every binary identical: nothing to measure, and nothing worth keeping)
        empty = Anchor(commit, {"context": {}, "benchmarks": []}, path, False, 0.0)
        found_anchor = dataclasses.replace(kept or empty, identical=identical)
        progress.say(f"kernelwatch: {why}: {found_anchor.phrase()}")
        return found_anchor
    extra = {
        "kernelwatch_run_command": run.command_line,
        "kernelwatch_run_purpose": f"anchor: the baseline's commit {side.short} on this card",
        "kernelwatch_filter": run.filter or "",
        "kernelwatch_anchor_commit": commit,
        SETTINGS_KEY: path.stem,
    }
    return Pending(commit, side, anchor_jobs, path, repo, extra, identical)


@dataclass(frozen=True)
class Ahead:
    """Why the run is anchored, and its anchor (a Pending one until measured beside the run)
    or the note that says why there is none."""

    why: str
    outcome: Anchor | Pending | str


def ahead(
    request: Request,
    settings: runner.RunSettings,
    jobs: Sequence[runner.Job],
    run: Run,
    base: ResultSet,
    found: baselines.Against,
    context: Mapping[str, Any],
    progress: runner.Progress,
) -> Ahead | None:
    """After the run's first round (`context`: its result's): whether it is anchored, and how
    (prepare). None where `request.mode` does not want an anchor."""
    why = wanted(request.mode, base.context, context)
    if why is None:
        return None
    return Ahead(why, prepare(request, settings, jobs, run, found, why, context, progress))


def interleaved(rounds: int) -> list[tuple[bool, int]]:
    """The order of the two builds' process rounds after the run's first: (the anchor's?,
    round). A B B A A B ..., as `ab` orders its sides (ab.in_order), the run as A: a drift of
    the card that is linear over the run (its clock moved 0.75 % over four suites on
    GPU-acf992b3, docs/measurement.md) falls on both alike."""
    order = [(side == 1, k) for k in range(rounds) for side in ab.in_order(k + 1)]
    return order[1:]


def measure_beside(
    current: runner.Measuring,
    plan: Ahead | None,
    settings: runner.RunSettings,
    progress: runner.Progress,
) -> Ahead | None:
    """The run's rounds after its first, with a pending anchor's interleaved (interleaved):
    run and anchor on the same card at the same time, the anchor measured once and kept."""
    if plan is None or not isinstance(plan.outcome, Pending):
        for k in range(1, current.rounds):
            current.round(k)
        return plan
    pending = plan.outcome
    with pending.measuring(settings, progress) as theirs:
        for anchor, k in interleaved(current.rounds):
            (theirs if anchor else current).round(k)
        return Ahead(plan.why, pending.finish(theirs, current.first_context(), progress))


def _jobs(
    side: ab.Side, ran: Sequence[runner.Job], filter: str | None, settings: runner.RunSettings
) -> list[runner.Job]:
    """The anchor's jobs: the benchmarks the current build ran, those it ran alone (host-bound)
    alone here too. A benchmark the baseline's commit lacks is NEW in the anchored verdict."""
    names = [name for job in ran for name in job.names]
    serial = [name for job in ran if job.serial for name in job.names]
    planned = runner.plan(ab.binaries_of(side, ()), filter, settings.extra_args)
    jobs = runner.select_jobs(planned, names)
    if not jobs:
        raise InputError(f"the baseline's commit {side.short} has none of the benchmarks that ran")
    return runner.split_serial(jobs, serial) if serial else jobs


def _built_identically(
    side: ab.Side, theirs: Sequence[runner.Job], ours: Sequence[runner.Job], commit: str
) -> set[str]:
    """The binaries (by name) that this run's build, which records `commit` (`-dirty` for a
    tree with changes), made identically to the baseline commit's build `side` (ab.py's rule;
    a build it cannot find is measured)."""
    mine = sorted({job.binary for job in ours})
    build = ab.build_of(mine[0], commit) if mine else None
    if build is None:
        return set()
    anchor = ab.Build(side.sha, side.worktree, side.build_dir)
    chosen = ab.select(build, mine, anchor, sorted({job.binary for job in theirs}))
    return {name for name, why in chosen.items() if why is None}


@dataclass(frozen=True)
class Committed:
    """The run judged against the committed baseline, as without anchoring (verdict.judge_result
    of `base`, from `found`): what the finding and the rows the anchor cannot judge come from."""

    base: ResultSet
    found: baselines.Against
    report: Report


@dataclass(frozen=True)
class Judged:
    """The run's verdict of record: the report, and the baseline its regressions are confirmed
    against (those of the report's `fallback`, which the anchor failed, against the committed
    baseline: _with_committed, confirm)."""

    against: baselines.Against
    report: Report


def judge(
    plan: Ahead | None,
    committed: Committed,
    judging: verdict.Judging,
    document: dict[str, Any],
    progress: runner.Progress,
    floor: noises.LevelNoise | None,
) -> Judged:
    """The run (`document`, its result) judged against its anchor (verdict.judge_result, as
    against any baseline), with the committed baseline against the anchor as a finding about the
    runner; or, where there is no anchor, the run against the committed baseline (`committed`)
    with the note that says why. The run's context records which (CONTEXT_KEY). Nothing is
    anchored without a plan (ahead, measure_beside). `floor`: the committed baseline's
    process-level spread (noise.process_floor), the least the anchor's is taken at
    (as_baseline)."""
    report = committed.report
    if plan is None:
        return Judged(committed.found, report)
    context = document["context"]
    outcome = plan.outcome
    if isinstance(outcome, Pending):
        outcome = "not anchored: the anchor was never measured"  # (measure_beside not called)
    if isinstance(outcome, str):
        progress.say(f"kernelwatch: {outcome}; judged against the committed baseline")
        context[CONTEXT_KEY] = outcome
        return Judged(committed.found, dataclasses.replace(report, notes=(outcome, *report.notes)))
    phrase = outcome.phrase()
    if outcome.identical:  # (what compare and report judge as this run does: verdict.py)
        record = {"commit": outcome.commit, "benchmarks": sorted(outcome.identical)}
        context[IDENTICAL_KEY] = record
    outcome = outcome.completed(document)
    said = _finding(committed, outcome, judging)
    progress.say(f"kernelwatch: {said}")
    judged = _judged(outcome, document, committed, judging, floor)
    context[CONTEXT_KEY] = phrase + _fallback_phrase(judged)
    notes = (f"{phrase}: {plan.why}", said, *judged.report.notes)  # (_LEAD_NOTES of them first)
    return dataclasses.replace(judged, report=dataclasses.replace(judged.report, notes=notes))


# The notes judge puts before the anchored comparison's own: the anchoring line, the finding.
_LEAD_NOTES = 2


def _finding(committed: Committed, anchor: Anchor, judging: verdict.Judging) -> str:
    """The runner finding of the committed baseline against `anchor` (completed)."""
    return verdict.finding(verdict.judge(committed.base, anchor.side(), judging, committed.found))


def _fallback_phrase(judged: Judged) -> str:
    """What CONTEXT_KEY adds where some benchmarks were not judged against the anchor."""
    fallback = judged.report.fallback
    if not fallback:
        return ""
    return f"; {len(fallback)} benchmark(s) the anchor failed judged against the committed baseline"


def _judged(
    outcome: Anchor,
    document: dict[str, Any],
    committed: Committed,
    judging: verdict.Judging,
    floor: noises.LevelNoise | None,
) -> Judged:
    """The run (`document`, as the committed report's contender) judged against the anchor
    `outcome` (completed) on what it measured: the benchmarks built identically are IDENTICAL
    rows, and no note counts them (their rows on both sides are the run's own); what the anchor
    cannot judge is judged as the committed baseline does (_with_committed)."""
    run = committed.report.contender
    names = {
        baselines.row_identity(r)
        for r in (*outcome.document["benchmarks"], *document["benchmarks"])
    }
    names -= outcome.identical
    if names:
        against = as_baseline(
            str(outcome.path), [baselines.restrict(outcome.document, names)], floor
        )
        run_side = from_documents(run.label, [baselines.restrict(document, names)])
        anchored = verdict.judge_result(verdict.baseline_side(against), run_side, judging, against)
    else:
        against = outcome.against(floor)
        anchored = Report(judging.metric, judging.settings, outcome.side(), run, ())
    anchored = anchored.with_identical(dict.fromkeys(outcome.identical, verdict.IDENTICAL_REASON))
    failed = _failed_in_anchor(verdict.baseline_side(against), committed.report)
    return Judged(against, _with_committed(anchored, committed.report, failed))


def _failed_in_anchor(anchor: ResultSet, committed: Report) -> dict[str, str]:
    """The benchmarks the anchor has an error row for (its error) that the run measured and the
    committed baseline judged: the anchor cannot judge them (an ERROR `baseline: ...` that
    fails nothing would hide any regression of theirs)."""
    run = committed.contender
    judged = {c.name for c in committed.comparisons}
    return {
        name: error
        for name, error in anchor.errors.items()
        if name in judged
        and name in run.index
        and name not in run.errors
        and name not in run.skipped
    }


def _with_committed(anchored: Report, committed: Report, failed: Mapping[str, str]) -> Report:
    """The anchored report with the rows only the committed baseline can judge, as a run without
    anchoring judges them: those the anchor failed (`failed`, with a note naming them and the
    anchor's error; the report's `fallback`, out of its geomean), and those in the committed
    baseline that neither the anchor nor the run measured (removed or renamed since: MISSING,
    with compare's note on them)."""
    mine = {c.name for c in anchored.comparisons}
    missing = [
        c for c in committed.comparisons if c.verdict is Verdict.MISSING and c.name not in mine
    ]
    taken = [c for c in committed.comparisons if c.name in failed]
    if not missing and not taken:
        return anchored
    new = [c for c in anchored.comparisons if c.verdict is Verdict.NEW]  # (for a rename's note)
    notes = [n for n in presence_notes([*missing, *new]) if n not in anchored.notes]
    if taken:
        errors = sorted(failed.items())
        named = "; ".join(f"{name}: {error}" for name, error in errors[: verdict.FINDING_NAMES])
        more = (
            f"; and {len(errors) - verdict.FINDING_NAMES} more"
            if len(errors) > verdict.FINDING_NAMES
            else ""
        )
        notes.append(
            f"{len(taken)} benchmark(s) failed in the anchor but ran here: judged against the "
            f"committed baseline instead, as without anchoring ({named}{more})"
        )
    higher = anchored.metric.higher_is_better
    rows = sorted(
        [*(c for c in anchored.comparisons if c.name not in failed), *taken, *missing],
        key=lambda c: (SEVERITY[c.verdict], -c.worse_by(higher), c.name),
    )
    return dataclasses.replace(
        anchored,
        comparisons=tuple(rows),
        notes=(*anchored.notes, *notes),
        fallback=frozenset(failed),
    )


def again(
    plan: Ahead | None,
    request: Request,
    judged: Judged,
    committed: Committed,
    settings: runner.RunSettings,
    jobs: Sequence[runner.Job],
    run: Run,
    path: Path,
    progress: runner.Progress,
    floor: noises.LevelNoise | None,
    document: dict[str, Any],
    judging: verdict.Judging,
) -> Judged:
    """Where the run regressed against a reused anchor: the baseline's commit measured again on
    this card now, for the regressed benchmarks alone, as what their confirming re-runs are
    judged against; a card that drifted since the anchor was kept (a drift over more than
    defaults.ANCHOR_AGE_MEASURED_HOURS was never measured) then fails no unchanged code.
    Returns the verdict with it (as kept: their re-runs confirmed against the reused anchor)
    and a note saying so; the runner finding and CONTEXT_KEY then describe the anchor with
    what was measured again. Written to `path` (beside the run's result and its re-runs), never
    in the anchor's place. `floor`: the committed baseline's process-level spread
    (noise.process_floor). Where the suite as a whole regressed (compare's SuiteChange, which
    no re-run confirms: rows past their limits but unverified, or UNSURE, move it), the commit
    is measured again for every benchmark the run ran (but those built identically, or judged
    against the committed baseline) and the run (`document`) judged again against that."""
    report = judged.report
    anchor = plan.outcome if plan is not None else None
    flagged = [
        c.name
        for c in report.comparisons
        if c.verdict is Verdict.REGRESSION and c.name not in report.fallback
    ]
    whole = report.suite is not None and report.suite.regression
    if not (isinstance(anchor, Anchor) and anchor.reused and (flagged or whole)):
        return judged
    age = f"the anchor reused {anchor.age_s / 3600:.1f} h old"
    why = f"{len(flagged)} regression(s) against {age}"
    if whole:
        why = f"a regression of the suite{f' and {why}' if flagged else f' against {age}'}"
        left_out = anchor.identical | report.fallback
        flagged = [n for job in jobs for n in job.names if n not in left_out]
    kept = "their confirming re-runs judged against the anchor as kept"
    context = {
        "kernelwatch_run_command": run.command_line,
        "kernelwatch_run_purpose": f"anchor again: the baseline's commit {anchor.commit[:12]}",
        "kernelwatch_filter": runner.names_filter(flagged),
        "kernelwatch_anchor_commit": anchor.commit,
    }
    repo = ab.repo_root(request.root.parent, needed=False)
    try:
        side = request.builds.side(repo, anchor.commit, why, progress)
        measured = runner.run_suite(
            _jobs(side, runner.rerun_jobs(jobs, flagged), None, settings),
            settings,
            progress=progress,
            label=f"measuring the anchor again for {len(flagged)} regression(s)",
            context=context,
        ).document
    except NoGpuError:
        raise  # the GPU went away: the run's end (exit 4)
    except InputError as exc:  # its build failed, it lacks the benchmarks, or it crashed
        note = f"{why}: the commit not measured again ({exc}); {kept}"
        return dataclasses.replace(judged, report=_said(report, note, progress))
    if not _same_runner(measured.get("context") or {}, report.contender.context):  # (as finish)
        note = f"{why}: measured again on another card or host; {kept}"
        return dataclasses.replace(judged, report=_said(report, note, progress))
    write_json_atomic(path, measured, make_parents=True)
    # What the run is now judged against: the anchor as kept, with what was measured again in
    # place of its rows. The finding and the context key describe that, not the kept anchor.
    now = _measured_again(anchor, measured, path).completed(document)
    said = f"{_finding(committed, now, judging)}; of the anchor with {len(flagged)} benchmark(s)"
    said += " measured again now"
    progress.say(f"kernelwatch: {said}")
    again_phrase = (
        f"; the baseline's commit measured again on this card for {len(flagged)} benchmark(s) "
        f"({path})"
    )
    drift = (
        f"a card's drift over more than {defaults.ANCHOR_AGE_MEASURED_HOURS:g} h was never measured"
    )
    if whole:
        # The kept anchor set aside: the run judged again, its re-runs too, against the commit
        # measured now (after the run, not between its rounds).
        rejudged = _judged(now, document, committed, judging, floor)
        note = (
            f"{why}: the baseline's commit measured again on this card, the run and its "
            f"confirming re-runs judged against it ({path}; {drift})"
        )
        notes = (report.notes[0], said, *rejudged.report.notes)
        document["context"][CONTEXT_KEY] = (
            anchor.phrase() + again_phrase + _fallback_phrase(rejudged)
        )
        report = dataclasses.replace(rejudged.report, notes=notes)
        return dataclasses.replace(rejudged, report=_said(report, note, progress))
    note = (
        f"{why}: the baseline's commit measured again on this card for their confirming re-runs "
        f"({path}; {drift})"
    )
    document["context"][CONTEXT_KEY] = anchor.phrase() + again_phrase + _fallback_phrase(judged)
    fresh = dataclasses.replace(anchor, document=measured, path=path, reused=False)
    notes = (report.notes[0], said, *report.notes[_LEAD_NOTES:])
    report = _said(dataclasses.replace(report, notes=notes), note, progress)
    return dataclasses.replace(judged, against=fresh.against(floor), report=report)


def _measured_again(anchor: Anchor, measured: dict[str, Any], path: Path) -> Anchor:
    """The reused `anchor` with the rows of the benchmarks `measured` again in place of its own
    (the context: the measurement's, on this card now)."""
    names = {row.get("run_name") for row in measured.get("benchmarks", []) if isinstance(row, dict)}
    rows = [
        row
        for row in anchor.document.get("benchmarks", [])
        if not isinstance(row, dict) or row.get("run_name") not in names
    ]
    document = {**measured, "benchmarks": [*rows, *measured.get("benchmarks", [])]}
    return dataclasses.replace(anchor, document=document, path=path, reused=False)


def _said(report: Report, note: str, progress: runner.Progress) -> Report:
    progress.say(f"kernelwatch: {note}")
    return dataclasses.replace(report, notes=(*report.notes, note))


def confirm(
    judged: Judged,
    committed: Committed,
    judging: verdict.Judging,
    rerun: verdict.Rerun,
    times: int,
) -> Report:
    """verdict.confirm of the run's verdict: each REGRESSION re-run and judged against what
    flagged it, the anchor (`judged.against`) or, for the benchmarks judged against the
    committed baseline instead (the report's `fallback`), that baseline; one set of re-runs for
    both (_Together)."""
    report = judged.report
    fallback = [c for c in report.comparisons if c.name in report.fallback]
    flagged = [c.name for c in fallback if c.verdict is Verdict.REGRESSION]
    if not flagged:
        return verdict.confirm(report, judged.against, judging, rerun, times)
    together = _Together(rerun, flagged)
    rest = tuple(c for c in report.comparisons if c.name not in report.fallback)
    first = verdict.confirm(
        dataclasses.replace(report, comparisons=rest), judged.against, judging, together, times
    )
    fell_back = dataclasses.replace(committed.report, comparisons=tuple(fallback), notes=())
    second = verdict.confirm(fell_back, committed.found, judging, together, times)
    rows = sorted(
        [*first.comparisons, *second.comparisons],
        key=lambda c: (SEVERITY[c.verdict], c.confirmed is False),
    )
    said = tuple(f"against the committed baseline: {note}" for note in second.notes)
    return dataclasses.replace(first, comparisons=tuple(rows), notes=(*first.notes, *said))


class _Together:
    """verdict.Rerun for two sets of regressions confirmed one after the other (confirm): the
    first set's re-run k also runs every benchmark of the second (`later`), and the second's
    re-run k is that one where it holds them: one re-run k, one file, as without a fallback."""

    def __init__(self, rerun: verdict.Rerun, later: Sequence[str]) -> None:
        self._rerun = rerun
        self._later = set(later)
        self._done: dict[int, tuple[set[str], ResultSet | verdict.RerunCrashed]] = {}

    def __call__(self, k: int, flagged: Sequence[str]) -> ResultSet:
        done = self._done.get(k)
        if done is None or not set(flagged) <= done[0]:
            names = set(flagged) | self._later
            try:
                done = names, self._rerun(k, sorted(names))
            except verdict.RerunCrashed as exc:
                done = names, exc
            self._done[k] = done
        if isinstance(done[1], verdict.RerunCrashed):
            raise done[1]
        return done[1]
