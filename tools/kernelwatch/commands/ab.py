"""`kernelwatch ab REV_A REV_B`: did this change slow anything down? Build both commits, run
them alternately on this GPU, compare."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.config import Config
from kernelwatch.errors import BenchmarkCrashed, InputError, compile_regex
from kernelwatch.files import Input, Output, check_outputs

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import ab, explain, gpus, runner, verdict
    from kernelwatch.compare import Report
    from kernelwatch.results import ResultSet
    from kernelwatch.verdict import Judging, Outputs, report_outputs, write_report

DESCRIPTION = """\
Build two commits in their own git worktrees (<repo>/.kernelwatch/worktrees/<sha>, each with
its own build folder; both reused and rebuilt incrementally), run their benchmarks alternately
A B B A ... on this GPU (--rounds times each, every run a fresh process per binary) so that
drift of the machine, and what the second process of a round pays, fall on both alike, then
compare all A runs (the baseline, several processes: their spread is the noise floor) with all
B runs. A REGRESSION is measured in --confirm more rounds of each side (only those benchmarks)
and every round judged again: it fails only if it still regresses. A binary both commits built
identically (machine code, host code, build settings) is not measured: its benchmarks are
IDENTICAL rows (--measure-all measures everything). See docs/running.md."""

EPILOG = """\
exit status:
  0  no regression of B against A
  1  a REGRESSION in B, or a regression of the suite (docs/compare.md); or a benchmark
     MISSING from B (unless --allow-missing); or an ERROR
  2  bad input or usage (unknown commit, build failed, no binaries): one line on stderr,
     "kernelwatch: error: ..."
  3  a benchmark binary of B crashed, hung or lost its CUDA context in some round: the
     report is written, its benchmarks are ERROR rows "crashed: B round K of N: ...", the
     rest compared as usual (a crash on A only fails nothing; 3 only if nothing was compared)
  4  no CUDA GPU is visible, or it went away (the rounds written are kept)

examples:
  kernelwatch ab HEAD~1 HEAD                      # did the last commit slow anything down?
  kernelwatch ab main my-branch --filter '^transpose/' --rounds 5
  kernelwatch ab A B --build-only                 # build here, run elsewhere with --no-build
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "ab",
        help="build two commits and compare them, alternating runs on this GPU",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    # (not empty: `ab "$BASE" HEAD` with BASE unset said "kernelwatch: error: : not a commit")
    parser.add_argument(
        "rev_a", metavar="REV_A", type=options.non_empty, help="the reference commit (A)"
    )
    parser.add_argument(
        "rev_b", metavar="REV_B", type=options.non_empty, help="the commit judged (B)"
    )
    options.add_ab_options(
        parser,
        out_help="where the runs go, as DIR/A/round-K.json and DIR/B/round-K.json: a new or "
        "empty folder (default: results/ab-<A>-<B>-<time>)",
    )
    steps = parser.add_mutually_exclusive_group()
    steps.add_argument(
        "--no-build",
        action="store_true",
        help="use the worktrees' build folders as they are (a full sha needs no git then)",
    )
    steps.add_argument("--build-only", action="store_true", help="build both commits, run nothing")
    add_explain_options(parser)
    parser.add_argument(
        "--measure-all",
        action="store_true",
        help="measure every benchmark (default: a binary that both builds made identically, "
        "machine code, host code and build settings alike, is not measured: its rows read "
        "IDENTICAL; docs/running.md)",
    )
    parser.add_argument(
        "--no-overlap",
        action="store_true",
        help="build B before measuring anything (with --measure-all, B builds while A's first "
        "round is measured, host-bound benchmarks waiting for the build; the selection of "
        "identical builds needs B built first)",
    )
    options.add_compare_options(parser)
    parser.set_defaults(handler=main)


def add_explain_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        'explaining changes (after all timing; docs/running.md, "Explaining a regression")'
    )
    group.add_argument(
        "--explain",
        metavar="REGEX",
        help="also profile the benchmarks matching REGEX with ncu and diff their SASS (the "
        "REGRESSION and SLOWER rows always are)",
    )
    group.add_argument(
        "--explain-budget",
        type=float,
        default=defaults.EXPLAIN_BUDGET,
        metavar="SECONDS",
        help=f"at most this long for ncu and the SASS diffs (default {defaults.EXPLAIN_BUDGET:g}; "
        "0: kernel comparison only, no profiling)",
    )


@dataclass(frozen=True)
class AbCommand:
    """What `kernelwatch ab` was asked to do."""

    rev_a: str
    rev_b: str
    settings: runner.RunSettings
    filter: str | None
    rounds: int
    confirm: int  # more rounds of each side for the regressions (ab.judge_confirmed)
    defaulted: frozenset[str]  # of "rounds", "repetitions": left at the defaults (ab.unmeasured)
    repo: Path
    bench: tuple[str, ...]
    out: Path | None
    cmake_args: tuple[str, ...]
    targets: tuple[str, ...]
    no_build: bool
    build_only: bool
    overlap: bool  # B builds while A's first round is measured
    measure_all: bool  # else binaries built identically are not measured (ab.py)
    explain: re.Pattern[str] | None
    explain_budget: float
    judging: Judging
    outputs: Outputs
    command_line: str
    config: Config  # --config, else the suite's kernelwatch.toml: read, so never written


def main(args: argparse.Namespace) -> int:
    from kernelwatch import verdict
    from kernelwatch.verdict import Judging

    settings = options.run_settings(args)
    pattern = _explain_pattern(args.explain)
    if not 0 <= args.explain_budget < math.inf:
        raise InputError(f"--explain-budget {args.explain_budget:g}: must be 0 or more, finite")
    rounds, confirm = options.rounds(args)
    config = verdict.suite_config(args.config)
    judging = Judging(
        options.metric(args),
        options.settings(args, config, **options.gates(args)),
    )
    return run(
        AbCommand(
            rev_a=args.rev_a,
            rev_b=args.rev_b,
            settings=settings,
            filter=args.filter,
            rounds=rounds,
            confirm=confirm,
            defaulted=options.defaulted(args, "rounds", "repetitions"),
            repo=Path(args.repo),
            bench=tuple(args.bench),
            out=Path(args.out) if args.out else None,
            cmake_args=tuple(args.cmake_arg),
            targets=tuple(args.target),
            no_build=args.no_build,
            build_only=args.build_only,
            overlap=not (args.no_overlap or args.build_only or not args.measure_all),
            measure_all=args.measure_all,
            explain=pattern,
            explain_budget=args.explain_budget,
            judging=judging,
            outputs=options.outputs(args),
            command_line=args.command_line,
            config=config,
        )
    )


def run(command: AbCommand, build: ab.BuildStep | None = None) -> int:
    from kernelwatch import locks
    from kernelwatch.verdict import report_outputs

    # A second command told to write in this folder is refused before it builds: two at once
    # each judged the other's rounds. (The default folder is named for the run: its own.)
    named = [("--out", command.out), *((o.option, o.path) for o in report_outputs(command.outputs))]
    with locks.writing(named):
        return _run(command, build)


def _run(command: AbCommand, build: ab.BuildStep | None = None) -> int:
    from kernelwatch import ab, explain, gpus, runner
    from kernelwatch.verdict import write_report

    ab.check_bench(command.bench)  # before building (minutes)
    settings = command.settings
    if build is None:
        build = functools.partial(
            ab.cmake_build, cmake_args=list(command.cmake_args), targets=list(command.targets)
        )
    progress = runner.Progress(enabled=None if not settings.verbose else False)
    if not command.build_only:  # before building: a bad path would lose the runs at the end
        check_outputs(outputs_of(command), inputs_of(command))
        _refuse_earlier_runs(command.out)

    repo = ab.repo_root(command.repo, needed=not command.no_build)
    if not command.build_only:
        # Without a GPU nothing can be measured: say so before two worktrees and two builds
        # (minutes), not after. With no nvidia-smi and device files present, the first binary
        # decides once built.
        runner.require_gpu(None)
    sides = [
        ab.prepare_side(repo, "A", command.rev_a, use_git=not command.no_build),
        ab.prepare_side(repo, "B", command.rev_b, use_git=not command.no_build),
    ]
    ahead: ab.BuildAhead | None = None  # B's build, running on while A is measured
    if not command.no_build:
        ahead = ab.build_sides(sides, build, overlap=command.overlap, say=progress.say)
    if command.build_only:
        for side in sides:
            progress.say(f"kernelwatch: {side.name} ({side.rev}) built in {side.build_dir}")
        return 0

    out = (
        command.out
        if command.out
        else Path("results") / (f"ab-{sides[0].short}-{sides[1].short}-{runner.timestamp()}")
    )
    try:  # whatever ends the measuring (a failure, Ctrl-C) ends B's build too
        plans = ab.SidePlans(
            sides, command.bench, command.filter, settings.extra_args, ahead, say=progress.say
        )
        # The same commit twice is an A/A run, measured by intent (its noise).
        same = sides[0].sha == sides[1].sha
        left_out = {} if command.measure_all or same else ab.leave_out(sides, plans)
        if left_out:
            progress.say(
                f"kernelwatch: {len(left_out)} benchmark(s) of binaries built identically on "
                "both sides: not measured (--measure-all measures them)"
            )
        if not any(plans.jobs.values()):
            report = _all_identical(command, sides, left_out)
            return write_report(report, command.outputs, command="ab")
        settings = dataclasses.replace(settings, gpu_uuid=gpus.visible_uuid(settings.extra_args))
        measured = ab.run_rounds(
            sides,
            plans.jobs,
            settings,
            command.rounds,
            out,
            progress=progress,
            command_line=command.command_line,
            filter=command.filter,
            before=plans.before,
        )
    finally:
        if ahead is not None:
            ahead.stop()
    progress.say(f"kernelwatch: wrote {command.rounds} run(s) of each side to {out}")
    measured, report = ab.judge_confirmed(
        measured,
        plans.jobs,
        settings,
        command.rounds,
        command.confirm,
        progress=progress,
        command_line=command.command_line,
        judging=command.judging,
    )
    report = ab.with_unmeasured(
        report.with_identical(left_out),
        command.rounds,
        settings.repetitions,
        command.defaulted,
    )
    builds = {
        side.name: explain.Build(
            {b.name: b for b in plans.binaries[side.name]}, settings.extra_args
        )
        for side in sides
    }
    report = explain.explain(
        report,
        builds,
        pattern=command.explain,
        budget=command.explain_budget,
        say=progress.say,
        ncu_path=False if command.explain_budget == 0 else None,
    )
    if report.explanations:
        explain.write_explanations(report, out / explain.EXPLANATIONS_FILE)
    status = write_report(report, command.outputs, command="ab")
    return max(status, crash_status(measured, report))


def _all_identical(command: AbCommand, sides: list[ab.Side], left_out: dict[str, str]) -> Report:
    """The report when every binary was built identically: nothing measured, nothing failing;
    each side shown as its build folder."""
    from kernelwatch.compare import Report
    from kernelwatch.results import ResultSet

    a, b = (ResultSet.empty(side.name, (side.build_dir,)) for side in sides)
    report = Report(command.judging.metric, command.judging.settings, a, b, comparisons=())
    return report.with_identical(left_out)


def crash_status(measured: ab.Rounds, report: Report) -> int:
    """3 when B crashed, or when A's crashes left nothing compared; else 0 (the report's own
    status stands). A crash on A only does not fail B: B ran what A could not."""
    if measured.contender_crashed:
        return BenchmarkCrashed.exit_status
    if any(measured.crashes.values()) and report.geomean_ratio() is None:
        return BenchmarkCrashed.exit_status
    return 0


def outputs_of(command: AbCommand) -> list[Output]:
    """The runs' folder (by default in results/, made when missing), the explanations beside
    the runs, the report files."""
    from kernelwatch import explain
    from kernelwatch.verdict import report_outputs

    out = command.out
    return [
        Output("--out", out if out else Path("results"), folder=True, make_parents=True),
        Output(
            f"--out's {explain.EXPLANATIONS_FILE}", out / explain.EXPLANATIONS_FILE if out else None
        ),
        *report_outputs(command.outputs),
    ]


def inputs_of(command: AbCommand) -> list[Input]:
    """The folders of each side's runs, compared at the end (a report in one breaks that), and
    the settings file."""
    out = command.out
    runs = [Input(f"{side}'s runs", out / side if out else None, True) for side in ("A", "B")]
    return [*runs, command.config.read()]


def _refuse_earlier_runs(out: Path | None) -> None:
    """An earlier ab's rounds in --out would be overwritten (its results lost), and those beyond
    this run's --rounds judged with this run's."""
    for side in ("A", "B"):
        folder = out / side if out else None
        if folder is not None and folder.is_dir() and any(folder.iterdir()):
            raise InputError(
                f"--out {out}: already holds runs ({folder}); name a new or empty folder"
            )


def _explain_pattern(text: str | None) -> re.Pattern[str] | None:
    return None if text is None else compile_regex(text, "--explain")
