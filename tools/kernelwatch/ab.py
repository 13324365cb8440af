"""A/B runs of two commits on one GPU: build each in its own git worktree, run them
alternately (A B B A A B ..., in_order) so that drift of the machine falls on both alike, then
compare all A runs (a multi-process baseline) with all B runs.

Worktrees live in <repo>/.kernelwatch/worktrees/<full sha>, each with its own build folder
(<worktree>/build); both are reused, so a second `ab` of the same commits only rebuilds what
changed. The build and the runs are injectable (`build=`), for tests.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import os
import re
import shlex
import shutil
import struct
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kernelwatch import completeness, locks, runner, tool, verdict
from kernelwatch.compare import Report, Verdict
from kernelwatch.errors import BenchmarkCrashed, InputError, NoGpuError, shortened
from kernelwatch.files import check_input_dir, write_atomic, write_json_atomic
from kernelwatch.loading import load_all
from kernelwatch.results import FAILED_KEY, NO_RESULT_KEY

if TYPE_CHECKING:
    from kernelwatch import ab


WORKTREES = Path(".kernelwatch") / "worktrees"
BUILD_FOLDER = "build"
BUILD_LOG = "kernelwatch-build.log"
# What the last build left of the tracked files (a digest; "" when they are the commit's): a
# build may rewrite a tracked file (a generated header), which is no one's edit.
TREE_STATE = ".kernelwatch-tree-state"

_FULL_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Side:
    """One of the two commits: "A" (the reference) or "B" (the one judged)."""

    name: str
    rev: str  # as given
    sha: str  # full commit id
    worktree: Path
    build_dir: Path

    @property
    def short(self) -> str:
        return self.sha[:12]


class BuildStep(Protocol):
    """Builds side.worktree into side.build_dir, its output in `log`; InputError on failure.
    `cancel` set (from another thread) ends the build early."""

    def __call__(self, side: Side, log: Path, *, cancel: threading.Event | None = None) -> None: ...


# What git exports to a hook (a pre-commit hook: GIT_INDEX_FILE, the index being committed) and
# `git bisect run` to its command. git run on another folder (`-C`) took them for its own:
# `git worktree add` checked the commit out into the user's index.
GIT_LOCATION_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
)


def git_environment() -> dict[str, str]:
    """This environment without GIT_LOCATION_VARIABLES: git finds the repository from its
    folder (git's, and a build's git)."""
    return {k: v for k, v in os.environ.items() if k not in GIT_LOCATION_VARIABLES}


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its output, stripped. Failure is one InputError line."""
    try:
        command = ["git", "-C", str(repo), *args]
        return tool.run(command, timeout=600, env=git_environment()).stdout.strip()
    except tool.ToolError as exc:
        if exc.failure == "cannot-run":
            raise InputError(f"cannot run git: {exc.reason}") from None
        if exc.failure == "timeout":
            raise  # `git -C REPO ...` did not finish in 600 s
        raise InputError(
            f"`git {' '.join(args)}` failed in {repo}: {tool.last_line(exc.stderr) or exc.status}"
        ) from None


def repo_root(start: Path, needed: bool = True) -> Path:
    said = shortened(str(start), 200)
    check_input_dir(start, "--repo")
    try:
        return Path(git(start, "rev-parse", "--show-toplevel"))
    except InputError:
        if needed:
            raise InputError(f"{said}: not inside a git repository (pass --repo DIR)") from None
        return start.resolve()


def resolve_rev(repo: Path, rev: str) -> str:
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except InputError:
        raise InputError(f"{shortened(rev)}: not a commit in {repo}") from None


def prepare_side(repo: Path, name: str, rev: str, *, use_git: bool = True) -> Side:
    """The side's commit and worktree, created if absent (without git: a full sha whose
    worktree build folder exists already, for --no-build on a machine without the history)."""
    if not use_git and _FULL_SHA.fullmatch(rev):
        worktree = repo / WORKTREES / rev
        if (worktree / BUILD_FOLDER).is_dir():
            return Side(name, rev, rev, worktree, worktree / BUILD_FOLDER)
    sha = resolve_rev(repo, rev)
    worktree = repo / WORKTREES / sha
    if worktree.exists():
        try:
            top = Path(git(worktree, "rev-parse", "--show-toplevel")).resolve()
            head = git(worktree, "rev-parse", "HEAD")
        except InputError:
            top, head = None, None
        if top != worktree.resolve() or head != sha:
            raise InputError(
                f"{worktree} exists but is not a worktree of {sha[:12]}: remove it "
                f"(git worktree remove --force {worktree}) and run again"
            )
        # Someone's edit of the cache was built and measured as the commit. (Untracked files
        # are the build's own: its folder, its log; so are the tracked ones its build left.)
        changed = git(worktree, "status", "--porcelain", "--untracked-files=no").splitlines()
        if changed and tree_state(worktree) != _built_state(worktree):
            more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
            raise InputError(
                f"{worktree}: its files differ from {sha[:12]}'s "
                f"({shortened(changed[0].split(maxsplit=1)[-1])}{more}): remove it "
                f"(git worktree remove --force {worktree}) and run again"
            )
    elif use_git:
        worktree.parent.mkdir(parents=True, exist_ok=True)
        # --force: a worktree of ours whose folder was deleted is made again. `git worktree
        # prune` did that by forgetting every missing worktree, the user's too (on a disk not
        # mounted now), which then was no repository any more.
        git(repo, "worktree", "add", "--force", "--detach", str(worktree), sha)
    else:
        raise InputError(
            f"{shortened(rev)} ({sha[:12]}): no worktree {worktree} to use with --no-build"
        )
    if use_git:
        ignore_cache(repo / WORKTREES.parent)
    return Side(name, rev, sha, worktree, worktree / BUILD_FOLDER)


def tree_state(worktree: Path) -> str:
    """The tracked files' difference from the worktree's commit, as a digest ("": none)."""
    diff = git(worktree, "diff", "--binary", "HEAD")
    return hashlib.sha256(diff.encode("utf-8", "surrogateescape")).hexdigest() if diff else ""


def _built_state(worktree: Path) -> str:
    try:
        return (worktree / TREE_STATE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def build_side(build: BuildStep, side: Side, *, cancel: threading.Event | None = None) -> None:
    """Build the side (its output in build_log), then record the state its build left of the
    tracked files (TREE_STATE), which a later prepare_side takes as the commit's."""
    build(side, build_log(side), cancel=cancel)
    write_atomic(side.worktree / TREE_STATE, tree_state(side.worktree) + "\n")


def ignore_cache(folder: Path) -> None:
    """A `.gitignore` of `*` in .kernelwatch/: other projects do not ignore it, and there
    `git status` listed it and `git add -A` added each worktree as an embedded repository."""
    ignore = folder / ".gitignore"
    if not ignore.exists():
        write_atomic(ignore, "# kernelwatch ab's worktrees and builds\n*\n")


def cmake_build(
    side: Side,
    log: Path,
    *,
    cmake_args: Sequence[str] = (),
    targets: Sequence[str] = (),
    cancel: threading.Event | None = None,
) -> None:
    """Configure (Release, plus `cmake_args`) and build (`targets`, else all) incrementally,
    KERNELWATCH_GIT_COMMIT set to the commit; the output goes to `log`."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise InputError("cmake not found: cannot build the commits (or pass --no-build)")
    env = dict(git_environment(), KERNELWATCH_GIT_COMMIT=side.sha)
    configure = [cmake, "-S", str(side.worktree), "-B", str(side.build_dir)]
    configure += ["-DCMAKE_BUILD_TYPE=Release", *cmake_args]
    build = [cmake, "--build", str(side.build_dir), "-j", str(os.cpu_count() or 2)]
    if targets:
        build += ["--target", *targets]
    commands = [configure, build]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as out:
        for command in commands:
            out.write(f"$ {shlex.join(command)}\n")
            out.flush()
            status = tool.run(command, check=False, env=env, log=out, cancel=cancel).status
            if status != 0:
                raise InputError(
                    f"building {side.name} ({shortened(side.rev)}, {side.short}) failed: "
                    f"`{shlex.join(command)}` exited {status}; see {log}"
                )


class BuildAhead:
    """A side's build made in the background while the other side is measured: CCCL's tuning
    tools gained about 4x on two GPUs from building while measuring. The build holds the host
    lock shared, so host-bound benchmarks (transfers) wait for it to end; GPU-timed kernels
    measure on meanwhile. `result()` waits for it and raises its error; `stop()` ends it."""

    def __init__(self, build: BuildStep, side: Side) -> None:
        self._cancel = threading.Event()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self._future = self._pool.submit(self._build, build, side, self._cancel)

    @staticmethod
    def _build(build: BuildStep, side: Side, cancel: threading.Event) -> None:
        with locks.host_shared():
            build_side(build, side, cancel=cancel)

    def result(self) -> None:
        try:
            self._future.result()
        finally:
            self._pool.shutdown(wait=True)

    def stop(self) -> None:
        """End the build if it still runs (the measurement failed or was interrupted: that is
        the error to report, at once; Python's exit would otherwise wait for the build)."""
        self._cancel.set()
        self._pool.shutdown(wait=True)


def build_log(side: Side) -> Path:
    return side.worktree / f".{BUILD_LOG}"


def build_sides(
    sides: Sequence[Side], build: BuildStep, *, overlap: bool, say: Callable[[str], None]
) -> BuildAhead | None:
    """Build A, then B unless it is A's commit. With `overlap`, B's build is started in the
    background and returned still running, for A to be measured meanwhile; else both are built
    when this returns (None). `say` gets a line before each build."""
    ahead: BuildAhead | None = None
    for side in sides:
        if side is sides[1] and side.sha == sides[0].sha:
            continue  # the same commit: one build
        say(
            f"kernelwatch: building {side.name} ({side.rev}, {side.short}) in {side.build_dir}"
            + (" while A is measured" if side is sides[1] and overlap else "")
        )
        if side is sides[1] and overlap:
            ahead = BuildAhead(build, side)
        else:
            build_side(build, side)
    return ahead


def check_bench(bench: Sequence[str]) -> None:
    """Each --bench is each side's own binary: an absolute path (or one out of the worktree)
    named one file for both sides, and A was compared with itself: never a regression."""
    for rel in bench:
        inside = os.path.normpath(os.path.join(BUILD_FOLDER, rel))
        if os.path.isabs(rel) or inside == os.pardir or inside.startswith(os.pardir + os.sep):
            raise InputError(
                f"--bench {shortened(rel, 200)}: must be relative to each side's build folder, "
                "inside its worktree (e.g. bench/kernelwatch_bench_transpose)"
            )


def binaries_of(side: Side, bench: Sequence[str]) -> list[Path]:
    """The side's benchmark binaries: --bench paths relative to its build folder, else this
    project's kernelwatch_bench_* binaries."""
    if bench:
        return runner.check_binaries(side.build_dir / rel for rel in bench)
    found = runner.find_binaries(side.build_dir)
    if not found:
        raise InputError(
            f"{side.name} ({shortened(side.rev)}, {side.short}): no benchmark binaries in "
            f"{side.build_dir / runner.BINARY_FOLDER}"
        )
    return found


class SidePlans:
    """Each side's binaries and jobs. A's are found at once, its first binary probing for a GPU
    before anything is listed; B's too unless its build is still running (`ahead`): then only
    when B is first measured, `before` (run_rounds' hook) waiting there for that build. A plain
    Google Benchmark binary (not on the harness) times the host, which a build beside it
    disturbs: then B's build is waited for before anything is measured (`say` tells why)."""

    def __init__(
        self,
        sides: Sequence[Side],
        bench: Sequence[str],
        filter: str | None,
        extra_args: Sequence[str],
        ahead: BuildAhead | None,
        say: Callable[[str], None] = lambda line: None,
    ) -> None:
        self._bench = bench
        self._filter = filter
        self._extra_args = extra_args
        self._ahead = ahead
        first = sides[0]
        self.binaries: dict[str, list[Path]] = {first.name: binaries_of(first, bench)}
        runner.require_gpu(self.binaries[first.name][0], extra_args)
        self.jobs: dict[str, list[runner.Job]] = {
            first.name: runner.plan(self.binaries[first.name], filter, extra_args)
        }
        plain = [job.binary.name for job in self.jobs[first.name] if not job.harness]
        if ahead is not None and plain:
            # On a 2-core host, A's first round of a plain CPU benchmark beside B's build ran
            # 1.3x slower than its later rounds and hid a 50% slowdown of B.
            say(
                f"kernelwatch: {plain[0]} is a plain Google Benchmark binary (host-timed): "
                "waiting for B's build before measuring"
            )
        if ahead is None or plain:
            self.before(sides[1])  # no build running (or waited for): B's jobs are known now

    def before(self, side: Side) -> None:
        if side.name in self.jobs:
            return
        if self._ahead is not None:
            self._ahead.result()  # B's build: its failure is the command's
            self._ahead = None
        self.binaries[side.name] = binaries_of(side, self._bench)
        self.jobs[side.name] = runner.plan(self.binaries[side.name], self._filter, self._extra_args)


@dataclass(frozen=True)
class Rounds:
    """What run_rounds measured: each side's folder of round files (a round none of whose
    processes finished writes a crash-only one: crash_only_document), each side's crashed
    processes, and the benchmarks each side's binaries register."""

    sides: Sequence[Side]
    folders: list[Path]
    crashes: dict[str, list[completeness.Crash]]
    registered: dict[str, frozenset[str]]
    last: int = 0  # the number of the last round measured: more rounds go on after it

    @property
    def contender_crashed(self) -> bool:
        return bool(self.crashes[self.sides[1].name])


def unmeasured(rounds: int, repetitions: int, defaulted: Collection[str]) -> str | None:
    """`3 rounds x 4 repetitions a side (defaults, not derived from a measurement: ...)` where
    either was left at its default (`defaulted`: "rounds", "repetitions"), which no
    measurement derived (defaults.py); None where both were chosen, even at the defaults'
    values."""
    at_default = [what for what in ("rounds", "repetitions") if what in defaulted]
    if not at_default:
        return None
    which = "defaults" if len(at_default) == 2 else f"{at_default[0]}: the default"
    return (
        f"{rounds} rounds x {repetitions} repetitions a side ({which}, not derived from a "
        "measurement: docs/running.md, `ab`)"
    )


def with_unmeasured(
    report: Report, rounds: int, repetitions: int, defaulted: Collection[str]
) -> Report:
    """The report with a note where its rounds or repetitions a side were left at the
    unmeasured defaults (unmeasured), and where what they let this comparison catch is shown."""
    said = unmeasured(rounds, repetitions, defaulted)
    if said is None:
        return report
    said += (
        "; what this comparison catches is each benchmark's sensitivity (Markdown's Catches, "
        "JSON's sensitivity; `(prior)` where the spread was not measured)"
    )
    return dataclasses.replace(report, notes=(*report.notes, said))


def in_order(k: int) -> tuple[int, int]:
    """The two sides' order in round k (1-based): A B in odd rounds, B A in even ones (A B B A
    A B ...), so that a drift of the card that is linear over the rounds falls on both alike,
    and so does whatever the process measured second in a round pays. With A B A B, in two
    `ab` runs of one build against itself on H200s (GPU-c9368905, GPU-65de7ddf, 10 rounds a
    side), the 64 Mi latency-bound reductions ran 2.2 % slow in 10 of the 20 processes
    measured second and in none of the 20 measured first (docs/measurement.md, "An anchor's
    two processes")."""
    return (0, 1) if k % 2 else (1, 0)


def run_rounds(
    sides: Sequence[Side],
    jobs: dict[str, list[runner.Job]],
    settings: runner.RunSettings,
    rounds: int,
    out_dir: Path,
    *,
    progress: runner.Progress,
    command_line: str,
    filter: str | None,
    before: Callable[[Side], None] | None = None,
    first: int = 1,
) -> Rounds:
    """A B B A ... (in_order): `rounds` runs of each side, each a fresh process per binary, written
    to out_dir/<side>/round-<k>.json, k counted from `first` (judge_confirmed's go on after
    the others). `before(side)` is called before each run (`ab` waits there for B's build,
    made while A's first round is measured).

    A binary that crashes or hangs costs only its own run of that round (completeness.py): the
    other binaries and rounds run on, and what finished is written. A GPU gone ends it at
    once (NoGpuError, exit 4), the rounds written so far kept."""
    folders = [out_dir / side.name for side in sides]
    crashed: dict[str, list[completeness.Crash]] = {side.name: [] for side in sides}
    last = first + rounds - 1
    for k in range(first, last + 1):
        for side, folder in ((sides[i], folders[i]) for i in in_order(k)):
            if before is not None:
                before(side)
            label = f"round {k}/{last}, {side.name} ({side.short})"
            context = {
                "kernelwatch_run_command": command_line,
                "kernelwatch_run_purpose": f"ab {side.name} round {k} of {last}",
                "kernelwatch_filter": filter or "",
                "kernelwatch_ab_rev": side.rev,
                "kernelwatch_ab_sha": side.sha,
            }
            out = folder / f"round-{k}.json"
            try:
                suite = runner.run_suite(
                    jobs[side.name],
                    settings,
                    progress=progress,
                    label=label,
                    context=context,
                    keep_going=True,
                )
            except runner.IncompleteRun as exc:
                if exc.gpu_lost is not None:
                    if exc.partial is not None:
                        write_json_atomic(out, exc.partial.document, make_parents=True)
                    raise NoGpuError(exc.gpu_lost) from None
                # A round that finished nothing is kept too, as its crash: without a file
                # `compare` of the folders never saw it.
                document = (
                    exc.partial.document
                    if exc.partial is not None
                    else crash_only_document(context, exc)
                )
                write_json_atomic(out, document, make_parents=True)
                crashed[side.name] += completeness.from_incomplete(
                    exc, side.name, f"round {k} of {last}"
                )
                progress.say(
                    f"kernelwatch: {label}: {len(exc.no_result)} benchmark(s) without a result "
                    "in this round; the rounds go on"
                )
                continue
            write_json_atomic(out, suite.document, make_parents=True)
    registered = {
        name: frozenset(n for job in side_jobs for n in job.names)
        for name, side_jobs in jobs.items()
    }
    return Rounds(sides, folders, crashed, registered, last)


def crash_only_document(context: Mapping[str, Any], failed: runner.IncompleteRun) -> dict[str, Any]:
    """The round file of a run none of whose processes finished: no rows, and the crash in its
    context as `run` records a partial result's (results.crash_list: loading reads it as the
    round's crash, and compare fails on it as on any partial result's)."""
    crash = {FAILED_KEY: list(failed.failures), NO_RESULT_KEY: list(failed.no_result)}
    return {"context": {**context, **crash}, "benchmarks": []}


def more_rounds(
    measured: Rounds,
    jobs: dict[str, list[runner.Job]],
    settings: runner.RunSettings,
    names: Sequence[str],
    times: int,
    *,
    progress: runner.Progress,
    command_line: str,
) -> Rounds:
    """`times` more rounds of each side (in_order) of only `names` (an anchored filter),
    written beside the others from round-<last + 1>.json on; the rounds with them."""
    again = {name: runner.rerun_jobs(side_jobs, names) for name, side_jobs in jobs.items()}
    more = run_rounds(
        measured.sides,
        again,
        settings,
        times,
        measured.folders[0].parent,
        progress=progress,
        command_line=command_line,
        filter=runner.names_filter(names),
        first=measured.last + 1,
    )
    return dataclasses.replace(
        measured,
        crashes={name: measured.crashes[name] + more.crashes[name] for name in measured.crashes},
        last=more.last,
    )


def judge_confirmed(
    measured: Rounds,
    jobs: dict[str, list[runner.Job]],
    settings: runner.RunSettings,
    rounds: int,
    times: int,
    *,
    progress: runner.Progress,
    command_line: str,
    judging: verdict.Judging,
) -> tuple[Rounds, Report]:
    """B's `rounds` rounds judged against A's (judge_rounds), and every REGRESSION measured in
    `times` more rounds of each side (in_order), only those benchmarks, written beside the others
    as round-<k>.json; then every round judged again, so that the verdict stays what
    `compare A/ B/` of the folders says. Returns the rounds with the confirming ones, and the
    report. Three rounds a side cannot see a slow mode of a few processes in twenty: replayed on
    three H200 cards, up to 19.9 % of the runs of unchanged kernels regressed, 0.46 % with four
    more rounds (docs/measurement.md, "An anchor's two processes"). A real regression is
    expected to stand: more rounds narrow its interval and its limit."""
    report = judge_rounds(measured, judging)
    flagged = sorted(
        c.name for c in report.comparisons if c.verdict is Verdict.REGRESSION and not c.crashed
    )
    if times <= 0 or not flagged:
        return measured, report
    merged = more_rounds(
        measured,
        jobs,
        settings,
        flagged,
        times,
        progress=progress,
        command_line=command_line,
    )
    judged = judge_rounds(merged, judging)
    now = {c.name: c for c in judged.comparisons}
    gone = [n for n in flagged if n in now and now[n].verdict is not Verdict.REGRESSION]
    before = {c.name: c for c in report.comparisons}
    note = (
        f"{len(flagged)} regression(s) after {rounds} round(s) measured in {times} more "
        f"round(s) of each side: {len(flagged) - len(gone)} still regress over all "
        f"{rounds + times} rounds"
    )
    if gone:
        note += ", not " + ", ".join(f"{n} ({before[n].change} -> {now[n].change})" for n in gone)
    progress.say(f"kernelwatch: {note}")
    return merged, dataclasses.replace(judged, notes=(*judged.notes, note))


def judge_rounds(measured: Rounds, judging: verdict.Judging) -> Report:
    """B's rounds judged against A's (verdict.judge), the crashes marked (completeness.mark). A
    benchmark of A that B's binaries do not register was removed or renamed by B: MISSING,
    not failing (completeness.py). A side whose rounds measured nothing (crash-only round
    files) has no rows, its crashes marked; both so: the first crash's error (exit 3)."""
    loaded = load_all(measured.folders)
    if not any(len(side) for side in loaded):
        first = next(c for side in measured.sides for c in measured.crashes[side.name])
        raise BenchmarkCrashed(f"{first.where}: {first.failure}")
    b_registered = measured.registered.get(measured.sides[1].name)
    removed = (
        completeness.not_registered(loaded[0], b_registered)
        if b_registered is not None
        else frozenset()
    )
    report = verdict.judge(loaded[0], loaded[1], judging, removed=removed)
    a, b = (measured.crashes[side.name] for side in measured.sides)
    return completeness.mark(report, a, b)


# Which benchmark binaries two builds made identically: `ab` does not measure those (issue #32).
#
# The rule is conservative, one binary (one family) at a time: a binary of B is *identical* to
# A's binary of the same name only when
#
# 1. it is an ELF file with the same entry point and program headers, and every section the
#    loader maps (SHF_ALLOC: host code, read-only data, data, relocations, the dynamic section,
#    and `.nv_fatbin` with every kernel's cubin and PTX of every architecture) is byte for byte the same, after each side's own commit id (every 8
#    characters of it: the compiler builds the string from pieces) and worktree path are replaced
#    by one placeholder of the same length (the generated *_build_info.cpp embeds the commit;
#    __FILE__ embeds the worktree path), and so the hash of the source's path in nvcc's names of
#    anonymous namespaces and internal variables (the project compiles CUDA with -frandom-seed and
#    an uncompressed fatbin, so that nothing else in those names differs). Byte equality of the
#    fatbin is stricter than equal SASS: it also covers PTX, `__constant__` data and kernel
#    attributes. Left out: `.note.gnu.build-id` (a hash of the file) and what the loader never
#    maps (symbol and debug tables: nvcc names a symbol after its temporary file's process id);
# 2. its dynamic section names no run path inside the build (a library built beside it is not
#    compared), and
# 3. the build settings are the same: CMakeCache.txt, and the binary's CMake target files
#    (CMakeFiles/<binary>.dir/flags.make, link.txt, *.rsp: compile flags, definitions, include
#    folders, link line) for a Makefile build, the whole build.ninja for a Ninja build, each with
#    the same placeholders.
#
# Anything else (not ELF, a file missing or unreadable, no CMakeCache.txt) is *different*, with
# why: measured. Runtime inputs other than the binary (files it reads, the driver, the GPU) are not
# seen: both sides share them in an `ab` run.
#
# `ab` calls leave_out() once both sides are built and listed (commands/ab.py): the identical
# binaries' jobs are dropped from both sides, and Report.with_identical() gives their benchmarks
# IDENTICAL rows in the report. docs/running.md, "What `ab` does not measure".


IDENTICAL_REASON = "identical build: not measured"

_SHF_ALLOC = 0x2
_SHT_NOBITS = 8
_SHT_DYNAMIC = 6
_DT_RPATH, _DT_RUNPATH = 15, 29
_LEFT_OUT = frozenset({b".note.gnu.build-id"})
_PLACEHOLDER = b"#"
_WORKTREE = b"<worktree>"
_PIECE = 8
_ANONYMOUS = re.compile(rb"(_GLOBAL__N__|_INTERNAL_)[0-9a-f]{8}(?=_\d+_)")


@dataclass(frozen=True)
class Build:
    """One side's build: its commit, worktree and build folder (ab.Side has all three)."""

    sha: str  # as its binaries record it (a tree with changes: write_build_info.cmake)
    worktree: Path
    build_dir: Path

    def neutral(self, data: bytes) -> bytes:
        """`data` with this side's worktree path and commit id made placeholders, and so the
        hash of the source's path in nvcc's names of anonymous namespaces
        (`_GLOBAL__N__7ad29798_18_transpose_bench_cu_...`). The path's placeholder is one token
        whatever its length: the anchored run compares the checkout's build with the baseline
        commit's in `ab`'s worktree, a longer path (the project builds with -ffile-prefix-map,
        so the binaries hold none; the build settings do)."""
        for text in sorted({str(self.worktree), str(self.worktree.resolve())}, key=len)[::-1]:
            data = data.replace(text.encode(), _WORKTREE)
        # The compiler builds the commit's string from 8- and 16-byte pieces (immediates, a
        # vector load): every 8 characters of it go.
        sha = self.sha.encode()
        for k in range(len(sha) - _PIECE + 1):
            data = data.replace(sha[k : k + _PIECE], _PLACEHOLDER * _PIECE)
        return _ANONYMOUS.sub(rb"\1########", data)


def build_of(binary: Path, sha: str) -> Build | None:
    """The CMake build that made `binary` (the nearest folder above it with a CMakeCache.txt,
    and the source folder that names), its binaries recording commit `sha`; None when there is
    none."""
    for folder in binary.parents:
        try:
            cache = (folder / "CMakeCache.txt").read_text(errors="replace")
        except OSError:
            continue
        for line in cache.splitlines():
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                return Build(sha, Path(line.partition("=")[2]), folder)
        return None
    return None


class NotComparable(Exception):
    """Why a binary cannot be shown identical (it is measured)."""


@dataclass(frozen=True)
class _Section:
    name: bytes
    kind: int
    flags: int
    offset: int
    size: int
    link: int


def loaded_image(binary: Path, build: Build) -> tuple[bytes, ...]:
    """The sections the loader maps from `binary` (name, size, content), neutralised;
    NotComparable when it is not an ELF file or names a run path in its build folder."""
    try:
        data = binary.read_bytes()
    except OSError as exc:
        raise NotComparable(f"{binary.name}: {exc.strerror or exc}") from None
    if data[:6] != b"\x7fELF\x02\x01":
        raise NotComparable(f"{binary.name}: not a 64-bit little-endian ELF file")
    try:
        return (_entry_and_segments(data), *_sections_loaded(binary.name, data, build))
    except (struct.error, IndexError, ValueError):
        raise NotComparable(f"{binary.name}: an ELF file cut short") from None


def _entry_and_segments(data: bytes) -> bytes:
    """The entry point and the program headers (the segments mapped, their addresses)."""
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    return data[0x18:0x20] + data[phoff : phoff + phentsize * phnum]


def _sections_loaded(name: str, data: bytes, build: Build) -> list[bytes]:
    sections = _sections(data)
    image = []
    for section in sections:
        if not section.flags & _SHF_ALLOC or section.name in _LEFT_OUT:
            continue
        content = b"" if section.kind == _SHT_NOBITS else _content(data, section)
        if section.kind == _SHT_DYNAMIC:
            _check_run_paths(name, content, _content(data, sections[section.link]), build)
        image.append(
            section.name + b"\0" + struct.pack("<Q", section.size) + build.neutral(content)
        )
    return image


def _content(data: bytes, section: _Section) -> bytes:
    return data[section.offset : section.offset + section.size]


def _sections(data: bytes) -> list[_Section]:
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQI", data, shoff + k * shentsize) for k in range(shnum)]
    names = raw[shstrndx]
    table = data[names[4] : names[4] + names[5]]
    return [
        _Section(table[name : table.index(b"\0", name)], kind, flags, offset, size, link)
        for name, kind, flags, _, offset, size, link in raw
    ]


def _check_run_paths(name: str, dynamic: bytes, strings: bytes, build: Build) -> None:
    """A run path (RPATH, RUNPATH) into the build: a library built there is loaded, and it is
    not compared."""
    for k in range(0, len(dynamic) - 15, 16):
        tag, value = struct.unpack_from("<qQ", dynamic, k)
        if tag in (_DT_RPATH, _DT_RUNPATH):
            path = strings[value : strings.index(b"\0", value)].decode(errors="replace")
            if "$ORIGIN" in path or str(build.worktree) in path or str(build.build_dir) in path:
                raise NotComparable(f"{name}: loads libraries from its build ({path})")


def settings(build: Build, binary: Path) -> tuple[tuple[str, bytes], ...]:
    """The build settings that made `binary`, neutralised: CMakeCache.txt and the target's
    flag files (Makefiles) or build.ninja. NotComparable when there is no CMakeCache.txt or
    neither generator's files."""
    cache = build.build_dir / "CMakeCache.txt"
    target = binary.parent / "CMakeFiles" / f"{binary.name}.dir"
    files = [cache]
    if (target / "flags.make").is_file():
        files += [target / "flags.make", target / "link.txt", *sorted(target.glob("*.rsp"))]
    elif (build.build_dir / "build.ninja").is_file():
        files.append(build.build_dir / "build.ninja")
    else:
        raise NotComparable(f"{binary.name}: no CMake target files for it in {build.build_dir}")
    found = []
    for path in files:
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise NotComparable(f"{path}: {exc.strerror or exc}") from None
        found.append((path.relative_to(build.build_dir).as_posix(), build.neutral(text)))
    return tuple(found)


def differs(a: Build, a_binary: Path, b: Build, b_binary: Path) -> str | None:
    """None when B's binary is identical to A's (the rules above), else why not."""
    try:
        if settings(a, a_binary) != settings(b, b_binary):
            return "build settings differ"
        if loaded_image(a_binary, a) != loaded_image(b_binary, b):
            return "machine code or data differ"
    except NotComparable as exc:
        return str(exc)
    return None


def select(
    a: Build, a_binaries: Sequence[Path], b: Build, b_binaries: Sequence[Path]
) -> dict[str, str | None]:
    """Each of B's binaries by name: None when identical to A's of that name, else why it is
    measured."""
    by_name: Mapping[str, Path] = {p.name: p for p in a_binaries}
    return {
        p.name: (differs(a, by_name[p.name], b, p) if p.name in by_name else "new in B")
        for p in b_binaries
    }


def leave_out(sides: Sequence[ab.Side], plans: ab.SidePlans) -> dict[str, str]:
    """Leave out of `plans` the binaries both builds made identically (the rules above): no side
    measures them. The benchmarks left out, with the reason their rows carry."""
    builds = [Build(side.sha, side.worktree, side.build_dir) for side in sides]
    a, b = (side.name for side in sides)
    same = {
        name
        for name, why in select(builds[0], plans.binaries[a], builds[1], plans.binaries[b]).items()
        if why is None
    }
    left_out = {
        name: IDENTICAL_REASON
        for job in plans.jobs[b]
        if job.binary.name in same
        for name in job.names
    }
    for side in sides:
        plans.jobs[side.name] = [j for j in plans.jobs[side.name] if j.binary.name not in same]
    return left_out
