"""`kernelwatch ab REV_A REV_B`: did this change slow anything down? Build both commits, run
them alternately on this GPU, compare."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import re
from pathlib import Path
from typing import Any

from kernelwatch import ab, explain, gpus, runner
from kernelwatch.commands._parsers import add_parser
from kernelwatch.commands.compare import add_compare_options, write_report
from kernelwatch.commands.run import add_run_options, compare_settings, run_settings
from kernelwatch.compare import compare
from kernelwatch.errors import InputError
from kernelwatch.results import load_all

DESCRIPTION = """\
Build two commits in their own git worktrees (<repo>/.kernelwatch/worktrees/<sha>, each with
its own build folder; both reused and rebuilt incrementally), run their benchmarks alternately
A B A B ... on this GPU (--rounds times each, every run a fresh process per binary) so that
drift of the machine falls on both alike, then compare all A runs (the baseline, several
processes: their spread is the noise floor) with all B runs. See docs/running.md."""

EPILOG = """\
exit status:
  0  no regression of B against A
  1  a REGRESSION in B; or a benchmark MISSING from B (unless --allow-missing); or an ERROR
  2  bad input or usage (unknown commit, build failed, no binaries): one line on stderr,
     "kernelwatch: error: ..."
  3  a benchmark binary crashed or lost its CUDA context
  4  no CUDA GPU is visible: nothing to measure

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
    parser.add_argument("rev_a", metavar="REV_A", help="the reference commit (A)")
    parser.add_argument("rev_b", metavar="REV_B", help="the commit judged (B)")
    add_ab_options(parser, out_help="where the runs go, as DIR/A/round-K.json and DIR/B/round-K.json "
        "(default: results/ab-<A>-<B>-<time>)")
    steps = parser.add_mutually_exclusive_group()
    steps.add_argument(
        "--no-build",
        action="store_true",
        help="use the worktrees' build folders as they are (a full sha needs no git then)",
    )
    steps.add_argument("--build-only", action="store_true", help="build both commits, run nothing")
    add_explain_options(parser)
    parser.add_argument(
        "--no-overlap",
        action="store_true",
        help="build B before measuring anything (default: B builds while A's first round is "
        "measured; host-bound benchmarks wait for the build)",
    )
    add_compare_options(parser)
    parser.set_defaults(handler=run)


def add_explain_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "explaining changes (after all timing; docs/running.md, \"Explaining a regression\")"
    )
    group.add_argument(
        "--explain",
        metavar="REGEX",
        help="also profile the benchmarks matching REGEX with ncu and diff their SASS (the "
        "REGRESSIONs always are)",
    )
    group.add_argument(
        "--explain-budget",
        type=float,
        default=explain.DEFAULT_BUDGET,
        metavar="SECONDS",
        help=f"at most this long for ncu and the SASS diffs (default {explain.DEFAULT_BUDGET:g}; "
        "0: kernel comparison only, no profiling)",
    )


def add_ab_options(parser: argparse.ArgumentParser, out_help: str) -> None:
    """How two commits are built and run; `bisect` shares them."""
    add_run_options(
        parser,
        repetitions=ab.DEFAULT_REPETITIONS,
        repetitions_help="--benchmark_repetitions of each round's process",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=ab.DEFAULT_ROUNDS,
        metavar="K",
        help=f"runs of each side, alternating A B A B ... (default {ab.DEFAULT_ROUNDS})",
    )
    parser.add_argument(
        "--repo", metavar="DIR", default=".", help="the git repository (default: the current one)"
    )
    parser.add_argument(
        "--bench",
        metavar="PATH",
        action="append",
        default=[],
        help="a binary to run, relative to each side's build folder (repeatable; default: "
        "bench/kernelwatch_bench_*)",
    )
    parser.add_argument("--out", metavar="DIR", help=out_help)
    parser.add_argument(
        "--cmake-arg",
        metavar="ARG",
        action="append",
        default=[],
        help="an extra CMake configure argument, e.g. --cmake-arg=-DKERNELWATCH_BUILD_TESTS=OFF "
        "(repeatable)",
    )
    parser.add_argument(
        "--target",
        metavar="NAME",
        action="append",
        default=[],
        help="build only this target, e.g. kernelwatch_bench_transpose (repeatable; default: all)",
    )


def overlap(args: argparse.Namespace) -> bool:
    return not (args.no_overlap or args.build_only)


def run(args: argparse.Namespace, build: ab.BuildStep | None = None) -> int:
    settings = run_settings(args)
    pattern = _explain_pattern(args.explain)
    if args.explain_budget < 0:
        raise InputError(f"--explain-budget {args.explain_budget:g}: must be 0 or more")
    if args.rounds < 1:
        raise InputError(f"--rounds {args.rounds}: must be at least 1")
    compare_with, metric = compare_settings(args)
    if build is None:
        build = functools.partial(ab.cmake_build, cmake_args=args.cmake_arg, targets=args.target)
    progress = runner.Progress(enabled=None if not settings.verbose else False)

    repo = ab.repo_root(Path(args.repo), needed=not args.no_build)
    sides = [
        ab.prepare_side(repo, "A", args.rev_a, use_git=not args.no_build),
        ab.prepare_side(repo, "B", args.rev_b, use_git=not args.no_build),
    ]
    ahead: ab.BuildAhead | None = None
    if not args.no_build:
        for side in sides:
            if side is sides[1] and side.sha == sides[0].sha:
                continue  # the same commit: one build
            progress.say(
                f"kernelwatch: building {side.name} ({side.rev}, {side.short}) in {side.build_dir}"
                + (" while A is measured" if side is sides[1] and overlap(args) else "")
            )
            if side is sides[1] and overlap(args):
                ahead = ab.BuildAhead(build, side)
            else:
                build(side, ab.build_log(side))
    if args.build_only:
        for side in sides:
            progress.say(f"kernelwatch: {side.name} ({side.rev}) built in {side.build_dir}")
        return 0

    binaries = {"A": ab.binaries_of(sides[0], args.bench)}
    runner.require_gpu(binaries["A"][0], settings.extra_args)
    settings = dataclasses.replace(settings, gpu_uuid=gpus.visible_uuid(settings.extra_args))
    jobs = {"A": runner.plan(binaries["A"], args.filter, settings.extra_args)}

    def before(side: ab.Side) -> None:
        nonlocal ahead
        if side.name in jobs:
            return
        if ahead is not None:
            ahead.result()  # B's build: its failure is the command's
            ahead = None
        binaries[side.name] = ab.binaries_of(side, args.bench)
        jobs[side.name] = runner.plan(binaries[side.name], args.filter, settings.extra_args)

    if ahead is None:
        before(sides[1])  # no build running: B's jobs are known now
    out = (
        Path(args.out)
        if args.out
        else Path("results") / (f"ab-{sides[0].short}-{sides[1].short}-{runner.timestamp()}")
    )
    try:
        folders = ab.run_rounds(
            sides,
            jobs,
            settings,
            args.rounds,
            out,
            progress=progress,
            command_line=args.command_line,
            filter=args.filter,
            before=before,
        )
    finally:
        if ahead is not None:
            ahead.wait()
    progress.say(f"kernelwatch: wrote {args.rounds} run(s) of each side to {out}")
    base, contender = load_all(folders)
    report = compare(base, contender, metric, compare_with)
    builds = {
        side.name: explain.Build({b.name: b for b in binaries[side.name]}, settings.extra_args)
        for side in sides
    }
    report = explain.explain(
        report,
        builds,
        pattern=pattern,
        budget=args.explain_budget,
        say=progress.say,
        ncu_path=False if args.explain_budget == 0 else None,
    )
    if report.explanations:
        explain.write_explanations(report, out / explain.EXPLANATIONS_FILE)
    return write_report(report, args, command="ab")


def _explain_pattern(text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise InputError(f"--explain {text!r}: not a regular expression: {exc}") from None
