"""Find the first commit that made benchmarks slower: `git bisect run` with ab as the oracle.

The bisection runs in a temporary detached worktree of its own (the user's checkout, HEAD,
index and any bisection of theirs are untouched; bisect refs are per worktree) and the
worktree is removed however it ends, Ctrl-C included. At each step git runs this package
again (kernelwatch.bisect.step, with a state file holding the settings as JSON) in a fresh
process, which builds the candidate in ab's cached worktree (<repo>/.kernelwatch/worktrees/<sha>) and compares it with GOOD as
`ab` does: bad (exit 1) exactly where `ab` fails it for the hunted benchmarks (a REGRESSION of
one that BAD regresses; where BAD fails only as a suite, a regression of the suite), else good
(0); a commit that cannot be built or lacks the benchmarks, or whose hunted benchmarks stay
UNSURE after more rounds, is skipped (125). find_culprits bisects again for BAD's regressions the
commit found does not explain. A benchmark that crashes
(or hangs) at the commit makes it bad when BAD crashed too (the crash is what is hunted,
`Plan.crash_is_bad`), else skipped (that commit cannot be tested). Anything else (no GPU,
nothing measured at all, even bad arguments) aborts the bisection (255, git's "abort" range)
after writing the error for the parent to raise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwatch import ab, defaults, runner, tool
from kernelwatch.compare import Report, Verdict
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError
from kernelwatch.files import write_atomic, write_json_atomic
from kernelwatch import explain
from kernelwatch.render import render_table, suite_statement
from kernelwatch.verdict import Judging

# `git bisect run` exit codes of the oracle.
GOOD, BAD, SKIP, ABORT = 0, 1, 125, 255

_FIRST_BAD = re.compile(r"^([0-9a-f]{40}) is the first bad commit", re.MULTILINE)
_ONLY_SKIPPED = "only 'skip'ped commits left to test"
# What git lists then: the skipped commits and the earliest bad one, one full sha a line.
_COULD_BE = re.compile(r"^The first bad commit could be any of:\n((?:[0-9a-f]{40}\n?)+)", re.M)
LOG_FILE = "bisect.log"  # git bisect's output, in the runs' folder
STATE_FILE = ".bisect-state.json"  # the settings the steps read, in the runs' folder
FINDINGS_FILE = "findings.json"  # what a judged commit's comparison found, in its folder


@dataclass(frozen=True)
class Plan:
    """How every commit is judged: the bisect command's settings, saved as JSON in the state
    file when the bisection starts (each step is a process of its own and reads them back)."""

    filter: str
    bench: tuple[str, ...]
    rounds: int
    settings: runner.RunSettings
    judging: Judging
    cmake_args: tuple[str, ...]
    targets: tuple[str, ...]
    command_line: str
    # BAD crashed (a benchmark's process) against GOOD: a commit that crashes is bad, not skipped.
    crash_is_bad: bool = False
    confirm: int = defaults.AB_CONFIRM_ROUNDS  # more rounds for a regression, as `ab`
    # The benchmarks BAD regresses against GOOD: only their regressions make a commit bad.
    # Another one (made by a commit and undone by a later one) named a commit that did not
    # make BAD slower. Empty: any regression in --filter (BAD only crashes).
    hunted: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        document = dataclasses.asdict(self)
        document["judging"] = self.judging.to_json()
        return document

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Plan:
        run = {k: _tuples(v) for k, v in document["settings"].items()}
        return cls(
            filter=document["filter"],
            bench=tuple(document["bench"]),
            rounds=document["rounds"],
            settings=runner.RunSettings(**run),
            judging=Judging.from_json(document["judging"]),
            cmake_args=tuple(document["cmake_args"]),
            targets=tuple(document["targets"]),
            command_line=document["command_line"],
            crash_is_bad=document.get("crash_is_bad", False),
            confirm=document.get("confirm", 0),  # a bisection started before there were any
            hunted=tuple(document.get("hunted", ())),
        )


def _tuples(value: Any) -> Any:
    """JSON's lists back to the tuples of the settings (extra_args, environment)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def oracle(plan: Plan, repo: Path, good: ab.Side, out: Path) -> Oracle:
    return Oracle(
        repo=repo,
        good=good,
        plan=plan,
        out=out,
        # Looked up now, not at import: tests replace ab.cmake_build.
        build=functools.partial(
            ab.cmake_build, cmake_args=list(plan.cmake_args), targets=list(plan.targets)
        ),
        progress=runner.Progress(enabled=None if not plan.settings.verbose else False),
    )


@dataclass(frozen=True)
class Oracle:
    """Everything a step needs to judge one commit against GOOD: the plan, and where."""

    repo: Path
    good: ab.Side
    plan: Plan
    out: Path  # each judged commit writes under out/<sha12>/
    build: ab.BuildStep
    progress: runner.Progress


@dataclass(frozen=True)
class Judgement:
    sha: str
    verdict: str  # "good", "bad" or "skip"
    detail: str
    report: Path | None = None  # the comparison, as a table
    crashed: bool = False  # a benchmark's process crashed or hung at this commit
    regressions: tuple[str, ...] = ()  # the benchmarks that regress at this commit
    unsure: tuple[str, ...] = ()  # hunted benchmarks too close to call (skipped for them)

    @property
    def exit_code(self) -> int:
        return {"good": GOOD, "bad": BAD, "skip": SKIP}[self.verdict]


@dataclass(frozen=True)
class Findings:
    """What a commit's comparison with GOOD found, per benchmark; saved beside its rounds
    (FINDINGS_FILE), so that a later hunt of the same bisection (find_culprits) judges it for
    other benchmarks without measuring it again."""

    # REGRESSION: a slowdown that fails `ab` (one that does not, unverified under 2x, reads
    # SLOWER: compare.worded_for)
    regressed: tuple[str, ...] = ()
    unsure: tuple[str, ...] = ()  # UNSURE after every round, the extra ones included
    crashed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # MISSING or ERROR
    untestable: str | None = None  # why nothing could be measured (a failed build, ...)
    rounds: int = 0  # rounds of each side measured
    # What the comparison says of the suite when it regresses as a whole (compare.SuiteChange):
    # `ab` fails that even where no row fails (many benchmarks each past its limit, unverified).
    suite: str | None = None

    @classmethod
    def of(cls, report: Report, rounds: int) -> Findings:
        def named(*verdicts: Verdict) -> tuple[str, ...]:
            return tuple(c.name for c in report.comparisons if c.verdict in verdicts)

        suite = report.suite
        return cls(
            regressed=named(Verdict.REGRESSION),
            unsure=named(Verdict.UNSURE),
            crashed=tuple(c.name for c in report.comparisons if c.crashed and c.failed),
            missing=named(Verdict.MISSING, Verdict.ERROR),
            rounds=rounds,
            suite=suite_statement(report) if suite is not None and suite.regression else None,
        )

    def regresses(self, hunted: Sequence[str]) -> str | None:
        """Why `ab` fails this commit for the `hunted` benchmarks, None where it does not: a
        REGRESSION of one of them (of any when none are), or, when none are (BAD fails only as
        a suite, or only crashes), a regression of the suite. The oracle's one rule of "bad"
        (crashes aside: _verdict)."""
        worse = hunted_in(self.regressed, hunted)
        if worse:
            return f"{len(worse)} regression(s): {', '.join(worse[:3])}"
        return self.suite if not hunted else None

    def save(self, folder: Path) -> None:
        write_json_atomic(folder / FINDINGS_FILE, dataclasses.asdict(self), make_parents=True)

    @classmethod
    def saved(cls, folder: Path) -> Findings | None:
        try:
            document = json.loads((folder / FINDINGS_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return cls(
            regressed=tuple(document["regressed"]),
            unsure=tuple(document["unsure"]),
            crashed=tuple(document["crashed"]),
            missing=tuple(document["missing"]),
            untestable=document["untestable"],
            rounds=document["rounds"],
            suite=document.get("suite"),  # saved before there was one: none
        )


def hunted_in(names: Sequence[str], hunted: Sequence[str]) -> list[str]:
    """Those of `names` that decide this hunt: the hunted ones (all of them when none are)."""
    return [n for n in names if not hunted or n in hunted]


def subject(repo: Path, sha: str) -> str:
    return ab.git(repo, "log", "-1", "--format=%s", sha)


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    command = ["git", "-C", str(repo), "merge-base", "--is-ancestor", older, newer]
    return tool.run(command, check=False, env=ab.git_environment()).status == 0


def judge(oracle: Oracle, sha: str) -> Judgement:
    """Build `sha` and run it against GOOD, alternating, as `ab` does. Raises what cannot be
    decided by skipping (no GPU, a crash, a broken worktree)."""
    plan = oracle.plan
    out = oracle.out / sha[:12]
    table = out / "compare.txt"
    findings = Findings.saved(out)
    if findings is not None:  # judged in an earlier hunt of this bisection: its findings
        verdict = _verdict(sha, findings, table, plan.crash_is_bad, plan.hunted)
        return dataclasses.replace(verdict, detail=f"{verdict.detail}; measured before")
    side = ab.prepare_side(oracle.repo, "B", sha)
    oracle.progress.say(f"kernelwatch bisect: building {side.short} in {side.build_dir}")
    try:
        ab.build_side(oracle.build, side)
        binaries = ab.binaries_of(side, plan.bench)
        jobs_b = runner.plan(binaries, plan.filter, plan.settings.extra_args)
    except (NoGpuError, BenchmarkCrashed):
        raise
    except InputError as exc:  # a failed build, no binaries, not the benchmarks: untestable
        findings = Findings(untestable=str(exc))
        findings.save(out)
        return _verdict(sha, findings, None, plan.crash_is_bad, plan.hunted)
    jobs = {
        "A": runner.plan(
            ab.binaries_of(oracle.good, plan.bench), plan.filter, plan.settings.extra_args
        ),
        "B": jobs_b,
    }
    measured = ab.run_rounds(
        [oracle.good, side],
        jobs,
        plan.settings,
        plan.rounds,
        out,
        progress=oracle.progress,
        command_line=plan.command_line,
        filter=plan.filter,
    )
    measured, report = ab.judge_confirmed(  # as `ab` judges
        measured,
        jobs,
        plan.settings,
        plan.rounds,
        plan.confirm,
        progress=oracle.progress,
        command_line=plan.command_line,
        judging=plan.judging,
    )
    measured, report = _measure_unsure(oracle, measured, jobs, report)
    report = explain.explain(report)  # kernel code changed / launch changed / identical
    write_atomic(table, render_table(report, color=False, command="ab"), make_parents=True)
    findings = Findings.of(report, measured.last)
    findings.save(out)
    return _verdict(sha, findings, table, plan.crash_is_bad, plan.hunted)


def _measure_unsure(
    oracle: Oracle, measured: ab.Rounds, jobs: dict[str, list[runner.Job]], report: Report
) -> tuple[ab.Rounds, Report]:
    """A hunted benchmark UNSURE (too close to call, or a regression the confirming rounds did
    not confirm) and none regressing: --confirm more rounds of each side of those, and every
    round judged again. Counted good, an UNSURE commit before the first bad one named the
    wrong commit; one still UNSURE is skipped (_verdict), and git names no first bad commit
    beside it."""
    plan = oracle.plan
    found = Findings.of(report, measured.last)
    unsure = hunted_in(found.unsure, plan.hunted)
    if plan.confirm <= 0 or not unsure or found.regresses(plan.hunted):
        return measured, report
    oracle.progress.say(
        f"kernelwatch bisect: {len(unsure)} benchmark(s) too close to call after "
        f"{measured.last} round(s): {plan.confirm} more round(s) of each side"
    )
    measured = ab.more_rounds(
        measured,
        jobs,
        plan.settings,
        unsure,
        plan.confirm,
        progress=oracle.progress,
        command_line=plan.command_line,
    )
    judged = ab.judge_rounds(measured, plan.judging)
    now = {c.name: c for c in judged.comparisons}
    note = (
        f"{len(unsure)} benchmark(s) UNSURE measured in {plan.confirm} more round(s) of each "
        f"side: " + ", ".join(f"{n} (-> {now[n].change})" for n in unsure if n in now)
    )
    kept = tuple(n for n in report.notes if n not in judged.notes)
    return measured, dataclasses.replace(judged, notes=(*judged.notes, *kept, note))


def _verdict(
    sha: str,
    findings: Findings,
    table: Path | None,
    crash_is_bad: bool,
    hunted: Sequence[str] = (),
) -> Judgement:
    if findings.untestable is not None:
        return Judgement(sha, "skip", findings.untestable)
    table = table if table is not None and table.is_file() else None
    regressed = findings.regressed
    others = [n for n in regressed if n not in hunted_in(regressed, hunted)]
    crashed = list(findings.crashed)
    said = f"{len(crashed)} crashed: {', '.join(crashed[:3])}"
    bad = findings.regresses(hunted)
    if bad is not None:
        return Judgement(
            sha,
            "bad",
            bad + (f"; {said}" if crashed else ""),
            table,
            bool(crashed),
            regressed,
        )
    also = f"; {len(others)} not regressing at BAD: {', '.join(others[:3])}" if others else ""
    if crashed:
        if crash_is_bad:
            return Judgement(sha, "bad", said + also, table, True, regressed)
        detail = f"{said} (BAD does not crash: cannot test){also}"
        return Judgement(sha, "skip", detail, table, True, regressed)
    if findings.missing:
        detail = f"{len(findings.missing)} benchmark(s) missing or failing{also}"
        return Judgement(sha, "skip", detail, table, regressions=regressed)
    unsure = tuple(hunted_in(findings.unsure, hunted))
    if unsure:
        detail = (
            f"unsure: {len(unsure)} too close to call after {findings.rounds} round(s): "
            f"{', '.join(unsure[:3])}{also}"
        )
        return Judgement(sha, "skip", detail, table, regressions=regressed, unsure=unsure)
    detail = "no regression of those BAD shows" + also if others else "no regression"
    return Judgement(sha, "good", detail, table, regressions=regressed)


# -------------------------------------------------------------------------- the oracle step


def write_error(path: Path, exc: BaseException) -> None:
    """What aborted a step, for the parent to raise as the same one-line error."""
    if isinstance(exc, InputError):
        status, message = exc.exit_status, str(exc)
    elif isinstance(exc, KeyboardInterrupt):
        status, message = 130, "interrupted"
    else:
        status, message = 2, f"internal error in a bisect step: {type(exc).__name__}: {exc}"
    write_json_atomic(path, {"status": status, "message": message}, make_parents=True)


def read_error(path: Path) -> InputError | None:
    if not path.is_file():
        return None
    recorded = json.loads(path.read_text(encoding="utf-8"))
    kind: type[InputError] = {3: BenchmarkCrashed, 4: NoGpuError}.get(
        recorded["status"], InputError
    )
    return kind(recorded["message"])


# ------------------------------------------------------------------------- the bisection


@dataclass(frozen=True)
class Outcome:
    first_bad: str | None  # None: git could not name one (only skipped commits left)
    log: str  # git bisect's output
    # With first_bad None: the commits git says the first bad one is among (the skipped ones
    # and the earliest measured bad one), and which of them were skipped.
    candidates: tuple[str, ...] = ()
    skipped: frozenset[str] = frozenset()


@contextlib.contextmanager
def bisect_worktree(repo: Path, bad: str) -> Iterator[Path]:
    """A temporary detached worktree at BAD, outside the repository; removed (with its
    bisect state) however the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="kernelwatch-bisect-"))
    worktree = folder / "worktree"
    try:
        ab.git(repo, "worktree", "add", "--detach", str(worktree), bad)
        yield worktree
    finally:
        remove = ["git", "-C", str(repo), "worktree", "remove", "--force", str(worktree)]
        removed = tool.run(remove, check=False, env=ab.git_environment()).status == 0
        shutil.rmtree(folder, ignore_errors=True)
        if not removed:  # a folder git could not remove: its record goes now, the folder gone.
            # Not `git worktree prune`: that forgot every missing worktree, the user's too.
            tool.run(remove, check=False, env=ab.git_environment())


def step_environment() -> dict[str, str]:
    """The environment of the oracle processes: this kernelwatch importable, whatever the way
    it was started (installed, PYTHONPATH=tools, or in-process as in the tests)."""
    package_parent = str(Path(__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    # (a hook's GIT_INDEX_FILE: git bisect's checkouts wrote the user's index)
    environment = ab.git_environment()
    return dict(environment, PYTHONPATH=package_parent + (os.pathsep + path if path else ""))


def run_bisect(
    repo: Path,
    good: str,
    bad: str,
    step: Callable[[Path], Sequence[str]],
    error_file: Path,
    show: Callable[[str], None],
) -> Outcome:
    """`git bisect start BAD GOOD` and `git bisect run STEP` in a worktree of their own.
    step(worktree) is the oracle command; `show` gets the lines worth showing as they come."""
    with bisect_worktree(repo, bad) as worktree:
        ab.git(worktree, "bisect", "start", bad, good)
        command = ["git", "-C", str(worktree), "bisect", "run", *step(worktree)]

        def shown(line: str) -> None:
            if line.startswith(("kernelwatch", "Bisecting:")):
                show(line.rstrip("\n"))

        # A session of its own: on Ctrl-C (or any exception here) the whole group, git, the
        # step and its benchmark binaries, is ended before the worktree is removed.
        done = tool.stream(command, shown, env=step_environment())
        log, status = done.stdout, done.status
        lines = log.splitlines(keepends=True)
        error = read_error(error_file)
        if error is not None:
            raise error
        found = _FIRST_BAD.search(log)
        if found:
            return Outcome(found.group(1), log)
        if _ONLY_SKIPPED in log:
            could_be = _COULD_BE.search(log)
            skipped = ab.git(
                worktree, "for-each-ref", "--format=%(objectname)", "refs/bisect/skip-*"
            )
            return Outcome(
                None,
                log,
                tuple(could_be.group(1).split()) if could_be else (),
                frozenset(skipped.split()),
            )
        said = [line for line in lines if line.strip()]
        raise InputError(
            f"git bisect run ended without a first bad commit (exit {status}): "
            f"{said[-1].strip() if said else 'no output'}"
        )


def refuse_earlier_runs(out: Path) -> None:
    """Each judged commit's comparison reads every round in out/<sha12>/A and B: a re-run
    into an earlier bisection's folder with fewer --rounds judged that run's later rounds too."""
    earlier = [out / name for name in (LOG_FILE, STATE_FILE) if (out / name).exists()]
    earlier += sorted(out.glob("*/[AB]/round-*.json"))[:1]
    earlier += sorted(out.glob(f"*/{FINDINGS_FILE}"))[:1]  # a commit judged from them
    if earlier:
        raise InputError(
            f"--out {out}: already holds an earlier bisection's runs ({earlier[0]}); name a new "
            "or empty folder"
        )


def find_first_bad(
    plan: Plan,
    repo: Path,
    good: str,
    bad: str,
    out: Path,
    show: Callable[[str], None],
    log_name: str = LOG_FILE,
) -> Outcome:
    """The first bad commit after GOOD up to BAD, which regresses against it (measured
    already). Bisects unless BAD's parent is GOOD, with the state file the steps read in `out`
    and git's output written to out/`log_name`; `show` as for run_bisect."""
    if int(ab.git(repo, "rev-list", "--count", f"{good}..{bad}")) == 1:
        return Outcome(bad, "")  # BAD's parent is GOOD: nothing between them
    state_file = out / STATE_FILE
    error_file = out / ".bisect-error.json"
    error_file.unlink(missing_ok=True)
    write_json_atomic(
        state_file,
        state_document(plan, cwd=Path.cwd(), repo=repo, good=good, out=out, error_file=error_file),
        make_parents=True,
    )
    outcome = run_bisect(
        repo, good, bad, lambda worktree: oracle_command(state_file), error_file, show
    )
    write_atomic(out / log_name, outcome.log, make_parents=True)
    return outcome


@dataclass(frozen=True)
class Hunt:
    """One bisection of find_culprits: the benchmarks it hunted, what git said, and those of
    them the first bad commit it named regresses (the ones it explains)."""

    hunted: tuple[str, ...]
    outcome: Outcome
    explains: tuple[str, ...]
    log: str = LOG_FILE  # git's output, in the runs' folder


def find_culprits(
    plan: Plan, repo: Path, good: str, bad: str, out: Path, show: Callable[[str], None]
) -> list[Hunt]:
    """The first bad commit of each of BAD's regressions (plan.hunted). One bisection hunts
    them all; where the commit it names does not regress some of them (another commit made
    those slower), another hunts those from GOOD again, and so on until each is explained or a
    bisection names no commit. A later hunt measures only the benchmarks it hunts, and a commit
    measured before is judged from its saved findings: it costs only the commits that were
    not, about log2 of the commits between GOOD and BAD for each commit found. A bisection
    that names a commit only for a crash (BAD crashed too) hunts the regressions again
    without it."""
    hunts: list[Hunt] = []
    remaining = plan.hunted
    while True:
        log_name = LOG_FILE if not hunts else f"bisect-{len(hunts) + 1}.log"
        outcome = find_first_bad(plan, repo, good, bad, out, show, log_name)
        if outcome.first_bad is None or not remaining:
            explained = remaining if outcome.first_bad else ()
            return [*hunts, Hunt(remaining, outcome, explained, log_name)]
        findings = Findings.saved(out / outcome.first_bad[:12])
        regressed = remaining if findings is None else findings.regressed
        explains = tuple(n for n in remaining if n in regressed)
        hunts.append(Hunt(remaining, outcome, explains, log_name))
        remaining = tuple(n for n in remaining if n not in explains)
        if not remaining or (not explains and not plan.crash_is_bad):
            return hunts
        show(
            f"kernelwatch bisect: {outcome.first_bad[:12]} does not regress {len(remaining)} "
            f"of BAD's regressions ({', '.join(remaining[:3])}): bisecting again for them"
        )
        plan = dataclasses.replace(
            plan, hunted=remaining, crash_is_bad=False, filter=runner.names_filter(remaining)
        )


def candidate_said(out: Path, sha: str, skipped: bool, hunted: Sequence[str]) -> str:
    """How a commit git lists as a candidate for the first bad one was judged."""
    if not skipped:
        return "bad"
    findings = Findings.saved(out / sha[:12])
    if findings is not None and not (findings.untestable or findings.crashed or findings.missing):
        unsure = hunted_in(findings.unsure, hunted)
        if unsure:
            return f"unsure: too close to call after {findings.rounds} round(s): " + ", ".join(
                unsure
            )
    return "could not be measured"


def forget_bisect_repository() -> None:
    """What `git bisect run` sets for its command in a linked worktree (GIT_DIR=<its gitdir>):
    git run by the step, or by a build, must find its repository from its own folder instead."""
    for name in ab.GIT_LOCATION_VARIABLES:
        os.environ.pop(name, None)


def state_document(plan: Plan, **values: Any) -> dict[str, Any]:
    """What a step reads: the plan, and where things are (Paths as strings)."""
    document = {k: str(v) if isinstance(v, Path) else v for k, v in values.items()}
    return {"plan": plan.to_json(), **document}


def oracle_command(state: Path) -> list[str]:
    """The step git runs: this Python, this kernelwatch, the state file (which holds the
    bisect command's settings). Not `kernelwatch bisect ...`: a usage error there would exit
    2, which git would take for "bad"; the step maps every failure to ABORT itself."""
    code = "import sys; from kernelwatch.bisect import step; sys.exit(step(sys.argv[1]))"
    return [sys.executable, "-c", code, str(state)]


def step(state_path: str) -> int:
    """One `git bisect run` step: judge the worktree's HEAD (git runs the step there). Never
    raises: git reads any status from 1 to 127 as "bad", so every failure is written down for
    the parent and aborts the bisection (255)."""
    state: dict[str, Any] = {}
    try:
        state = json.loads(Path(state_path).read_text(encoding="utf-8"))
        sha = ab.git(Path.cwd(), "rev-parse", "HEAD")
        forget_bisect_repository()  # the builds and ab's worktrees are other folders
        os.chdir(state["cwd"])  # the user's folder: relative paths as typed
        repo = Path(state["repo"])
        judge_by = oracle(
            Plan.from_json(state["plan"]),
            repo,
            ab.prepare_side(repo, "A", state["good"]),
            Path(state["out"]),
        )
        verdict = judge(judge_by, sha)
        print(
            f"kernelwatch bisect: {sha[:12]} {subject(repo, sha)}: {verdict.verdict} "
            f"({verdict.detail})",
            flush=True,
        )
        return verdict.exit_code
    except BaseException as exc:  # noqa: BLE001 - every failure must reach the parent
        if "error_file" in state:
            write_error(Path(state["error_file"]), exc)
        print(f"kernelwatch bisect: step aborted: {exc}", file=sys.stderr, flush=True)
        return ABORT
