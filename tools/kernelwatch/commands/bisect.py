"""`kernelwatch bisect GOOD BAD --filter REGEX`: which commit made these benchmarks slower?
`git bisect run` in a worktree of its own, with the A/B comparison of `ab` as the oracle."""

from __future__ import annotations

import argparse
import functools
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from kernelwatch import ab, bisect, runner
from kernelwatch.commands._parsers import add_parser
from kernelwatch.commands.ab import add_ab_options
from kernelwatch.commands.compare import add_compare_options
from kernelwatch.commands.run import compare_settings, run_settings
from kernelwatch.errors import InputError
from kernelwatch.files import write_atomic, write_json_atomic

DESCRIPTION = """\
Find the first commit between GOOD and BAD that made the --filter benchmarks slower. Runs
`git bisect run` in a temporary detached worktree of its own (your checkout, HEAD and index are
not touched; the worktree is removed at the end, also on Ctrl-C). At each step the candidate
commit is built in ab's worktree cache (<repo>/.kernelwatch/worktrees/<sha>, reused by later
`ab` and `bisect` runs) and run alternately with GOOD on this GPU, as `kernelwatch ab GOOD
CANDIDATE` would: a REGRESSION makes it bad, none makes it good, and a commit that does not
build (or lacks the benchmarks) is skipped. BAD is measured first: if it does not regress
against GOOD there is nothing to find. See docs/running.md."""

EPILOG = """\
exit status:
  0  the first bad commit was found (printed: sha and subject)
  1  none: BAD shows no regression against GOOD, or only skipped commits were left
  2  bad input or usage (unknown commit, GOOD not an ancestor of BAD, GOOD or BAD does not
     build): one line on stderr, "kernelwatch: error: ..."
  3  a benchmark binary crashed or lost its CUDA context (the bisection is abandoned)
  4  no CUDA GPU is visible: nothing to measure
  130  interrupted (the bisection worktree is removed)

examples:
  kernelwatch bisect v1.2 main --filter '^transpose/naive'
  kernelwatch bisect HEAD~20 HEAD --filter '^reduction/' --rounds 2 --target kernelwatch_bench_reduction
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "bisect",
        help="find the commit that made benchmarks slower (git bisect with ab as the oracle)",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument("good", metavar="GOOD", help="a commit without the regression")
    parser.add_argument("bad", metavar="BAD", help="a later commit with it (GOOD is its ancestor)")
    add_ab_options(
        parser,
        out_help="where the runs go: DIR/<sha>/A and B, one folder per commit judged, and "
        "DIR/bisect.log (default: results/bisect-<GOOD>-<BAD>-<time>)",
    )
    add_compare_options(parser)
    parser.set_defaults(handler=run)


def _oracle(args: argparse.Namespace, repo: Path, good: ab.Side, out: Path) -> bisect.Oracle:
    settings = run_settings(args)
    compare_with, metric = compare_settings(args)
    return bisect.Oracle(
        repo=repo,
        good=good,
        filter=args.filter,
        bench=tuple(args.bench),
        rounds=args.rounds,
        settings=settings,
        compare_with=compare_with,
        metric=metric,
        out=out,
        # Looked up now, not at import: tests replace ab.cmake_build.
        build=functools.partial(ab.cmake_build, cmake_args=args.cmake_arg, targets=args.target),
        progress=runner.Progress(enabled=None if not settings.verbose else False),
        command_line=args.command_line,
    )


def run(args: argparse.Namespace) -> int:
    if not args.filter:
        raise InputError("--filter REGEX is required: name the benchmarks that regressed")
    if args.rounds < 1:
        raise InputError(f"--rounds {args.rounds}: must be at least 1")
    run_settings(args)  # bad options fail before anything is built
    compare_settings(args)
    repo = ab.repo_root(Path(args.repo))
    good = ab.resolve_rev(repo, args.good)
    bad = ab.resolve_rev(repo, args.bad)
    if good == bad:
        raise InputError(f"{args.good} and {args.bad} are the same commit ({good[:12]})")
    if not bisect.is_ancestor(repo, good, bad):
        raise InputError(
            f"{args.good} ({good[:12]}) is not an ancestor of {args.bad} ({bad[:12]}): "
            "give GOOD first, then the later BAD"
        )
    out = Path(
        args.out or Path("results") / f"bisect-{good[:12]}-{bad[:12]}-{runner.timestamp()}"
    ).resolve()
    good_side = ab.prepare_side(repo, "A", good)
    oracle = _oracle(args, repo, good_side, out)
    say = oracle.progress.say

    say(f"kernelwatch bisect: building GOOD ({args.good}, {good_side.short})")
    try:
        oracle.build(good_side, ab.build_log(good_side))
    except InputError as exc:
        raise InputError(f"GOOD ({args.good}) cannot be built: {exc}") from None
    binaries = ab.binaries_of(good_side, args.bench)
    runner.require_gpu(binaries[0], oracle.settings.extra_args)
    runner.plan(binaries, args.filter, oracle.settings.extra_args)  # the filter matches in GOOD

    say(f"kernelwatch bisect: measuring BAD ({args.bad}, {bad[:12]}) against GOOD")
    verdict = bisect.judge(oracle, bad)
    if verdict.verdict == "skip":
        raise InputError(f"BAD ({args.bad}) cannot be measured: {verdict.detail}")
    if verdict.verdict == "good":
        print(
            f"kernelwatch bisect: {args.bad} ({bad[:12]}) shows no regression against "
            f"{args.good} ({good[:12]}) on {args.filter!r}: nothing to bisect "
            f"(the comparison: {verdict.report})"
        )
        return 1
    say(f"kernelwatch bisect: BAD regresses ({verdict.detail}); bisecting")

    if int(ab.git(repo, "rev-list", "--count", f"{good}..{bad}")) == 1:
        first_bad: str | None = bad  # BAD's parent is GOOD: nothing between them
        log = ""
    else:
        state_file = out / ".bisect-state.json"
        error_file = out / ".bisect-error.json"
        error_file.unlink(missing_ok=True)
        write_json_atomic(
            state_file,
            bisect.state_document(
                argv=shlex.split(args.command_line)[1:],  # "bisect GOOD BAD ..." as typed
                cwd=Path.cwd(),
                repo=repo,
                good=good,
                out=out,
                error_file=error_file,
            ),
            make_parents=True,
        )
        outcome = bisect.run_bisect(
            repo, good, bad, lambda worktree: bisect.oracle_command(state_file), error_file, say
        )
        first_bad, log = outcome.first_bad, outcome.log
        write_atomic(out / "bisect.log", log, make_parents=True)
    if first_bad is None:
        print(
            "kernelwatch bisect: only commits that could not be measured are left; the first "
            f"bad commit is one of them (see {out / 'bisect.log'})"
        )
        return 1
    print(f"first bad commit: {first_bad} {bisect.subject(repo, first_bad)}")
    report = out / first_bad[:12] / "compare.txt"
    if report.is_file():
        print(f"its comparison with {args.good} ({good[:12]}): {report}")
    return 0


def step(state_path: str) -> int:
    """One `git bisect run` step: judge the worktree's HEAD (git runs the step there). Never
    raises: git reads any status from 1 to 127 as "bad", so every failure, bad arguments
    included, is written down for the parent and aborts the bisection (255)."""
    state: dict[str, Any] = {}
    try:
        state = json.loads(Path(state_path).read_text(encoding="utf-8"))
        sha = ab.git(Path.cwd(), "rev-parse", "HEAD")
        bisect.forget_bisect_repository()  # the builds and ab's worktrees are other folders
        from kernelwatch import cli  # here, not at the top: cli imports every command

        args = cli.build_parser().parse_args(state["argv"])
        args.command_line = shlex.join(["kernelwatch", *state["argv"]])
        os.chdir(state["cwd"])  # the user's folder: relative --config as typed
        repo = Path(state["repo"])
        oracle = _oracle(args, repo, ab.prepare_side(repo, "A", state["good"]), Path(state["out"]))
        verdict = bisect.judge(oracle, sha)
        print(
            f"kernelwatch bisect: {sha[:12]} {bisect.subject(repo, sha)}: {verdict.verdict} "
            f"({verdict.detail})",
            flush=True,
        )
        return verdict.exit_code
    except BaseException as exc:  # noqa: BLE001 - every failure must reach the parent
        if isinstance(exc, SystemExit):  # argparse said why on stderr already
            exc = InputError(f"the bisect step refused its arguments {state.get('argv')}")
        if "error_file" in state:
            bisect.write_error(Path(state["error_file"]), exc)
        print(f"kernelwatch bisect: step aborted: {exc}", file=sys.stderr, flush=True)
        return bisect.ABORT
