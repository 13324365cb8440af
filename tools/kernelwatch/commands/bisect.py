"""`kernelwatch bisect GOOD BAD --filter REGEX`: which commit made these benchmarks slower?
`git bisect run` in a worktree of its own, with the A/B comparison of `ab` as the oracle."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.errors import InputError, shortened
from kernelwatch.files import Output, check_outputs

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import ab, bisect, runner, verdict

DESCRIPTION = """\
Find the first commit between GOOD and BAD that made the --filter benchmarks slower. Runs
`git bisect run` in a temporary detached worktree of its own (your checkout, HEAD and index are
not touched; the worktree is removed at the end, also on Ctrl-C). At each step the candidate
commit is built in ab's worktree cache (<repo>/.kernelwatch/worktrees/<sha>, reused by later
`ab` and `bisect` runs) and run alternately with GOOD on this GPU, as `kernelwatch ab GOOD
CANDIDATE` would: a REGRESSION of a benchmark that BAD regresses makes it bad (where BAD fails
only as a suite, a regression of the suite), none makes it good, and a commit that does not
build (or lacks the benchmarks) is skipped; one whose benchmarks crash is bad when BAD crashes
too (the crash is then what is hunted), else skipped.
One too close to call (UNSURE) is measured in --confirm more rounds, and skipped if still
unsure. BAD is measured first: if it does not regress against GOOD there is nothing to find.
When the commit found does not regress all that BAD regresses, the rest are bisected again,
until each has its first bad commit. See docs/running.md."""

EPILOG = """\
exit status:
  0  the first bad commit was found (printed: sha and subject), for each regression of BAD
  1  none: BAD shows no regression against GOOD, or only skipped commits were left (for
     one of BAD's regressions: the commits found are printed, the rest named)
  2  bad input or usage (unknown commit, GOOD not an ancestor of BAD, GOOD or BAD does not
     build): one line on stderr, "kernelwatch: error: ..."
  3  nothing could be measured at a commit (every binary crashed; the bisection is
     abandoned). A commit whose benchmarks crash is bad when BAD crashes too, else skipped
  4  no CUDA GPU is visible: nothing to measure
  130  interrupted (the bisection worktree is removed)

examples:
  kernelwatch bisect v1.2 main --filter '^transpose/naive'
  kernelwatch bisect HEAD~20 HEAD --filter '^reduction/' --rounds 2 \\
    --target kernelwatch_bench_reduction
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "bisect",
        help="find the commit that made benchmarks slower (git bisect with ab as the oracle)",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument(
        "good", metavar="GOOD", type=options.non_empty, help="a commit without the regression"
    )
    parser.add_argument(
        "bad",
        metavar="BAD",
        type=options.non_empty,
        help="a later commit with it (GOOD is its ancestor)",
    )
    options.add_ab_options(
        parser,
        out_help="where the runs go: DIR/<sha>/A and B, one folder per commit judged, and "
        "DIR/bisect.log (default: results/bisect-<GOOD>-<BAD>-<time>)",
    )
    options.add_compare_options(parser, reports=False)
    parser.set_defaults(handler=main)


@dataclass(frozen=True)
class BisectCommand:
    """What `kernelwatch bisect` was asked to do."""

    good: str
    bad: str
    repo: Path
    out: str | None
    plan: bisect.Plan  # how each commit is judged (saved for the steps)
    defaulted: frozenset[str] = frozenset()  # of "rounds", "repetitions" (ab.unmeasured)


def main(args: argparse.Namespace) -> int:
    from kernelwatch import bisect, verdict

    if not args.filter:
        raise InputError("--filter REGEX is required: name the benchmarks that regressed")
    rounds, confirm = options.rounds(args)
    settings = options.run_settings(args)  # bad options fail before anything is built
    judging = verdict.Judging(
        options.metric(args),
        options.settings(args, verdict.suite_config(args.config), **options.gates(args)),
    )
    plan = bisect.Plan(
        filter=args.filter,
        bench=tuple(args.bench),
        rounds=rounds,
        settings=settings,
        judging=judging,
        cmake_args=tuple(args.cmake_arg),
        targets=tuple(args.target),
        command_line=args.command_line,
        confirm=confirm,
    )
    defaulted = options.defaulted(args, "rounds", "repetitions")
    return run(BisectCommand(args.good, args.bad, Path(args.repo), args.out, plan, defaulted))


def run(command: BisectCommand) -> int:
    from kernelwatch import ab, bisect, runner

    plan = command.plan
    ab.check_bench(plan.bench)
    # Before anything is built: the runs' folder (by default in results/, made when missing).
    check_outputs([Output("--out", command.out or "results", folder=True, make_parents=True)])
    if command.out:
        bisect.refuse_earlier_runs(Path(command.out))
    repo = ab.repo_root(command.repo)
    good = ab.resolve_rev(repo, command.good)
    bad = ab.resolve_rev(repo, command.bad)
    good_said, bad_said = shortened(command.good), shortened(command.bad)  # (for error lines)
    if good == bad:
        raise InputError(f"{good_said} and {bad_said} are the same commit ({good[:12]})")
    if not bisect.is_ancestor(repo, good, bad):
        raise InputError(
            f"{good_said} ({good[:12]}) is not an ancestor of {bad_said} ({bad[:12]}): "
            "give GOOD first, then the later BAD"
        )
    out = Path(
        command.out or Path("results") / f"bisect-{good[:12]}-{bad[:12]}-{runner.timestamp()}"
    ).resolve()
    runner.require_gpu(None)  # before any worktree or build: see ab
    good_side = ab.prepare_side(repo, "A", good)
    oracle = bisect.oracle(plan, repo, good_side, out)
    say = oracle.progress.say

    say(f"kernelwatch bisect: building GOOD ({command.good}, {good_side.short})")
    try:
        ab.build_side(oracle.build, good_side)
    except InputError as exc:
        raise InputError(f"GOOD ({good_said}) cannot be built: {exc}") from None
    binaries = ab.binaries_of(good_side, plan.bench)
    runner.require_gpu(binaries[0], plan.settings.extra_args)
    runner.plan(binaries, plan.filter, plan.settings.extra_args)  # the filter matches in GOOD

    sizes = ab.unmeasured(plan.rounds, plan.settings.repetitions, command.defaulted)
    say(
        f"kernelwatch bisect: measuring BAD ({command.bad}, {bad[:12]}) against GOOD"
        + (f", {sizes}" if sizes else "")
    )
    # A crash at BAD is part of what is hunted (bisect.Plan.crash_is_bad).
    hunting_crashes = dataclasses.replace(plan, crash_is_bad=True)
    verdict = bisect.judge(dataclasses.replace(oracle, plan=hunting_crashes), bad)
    if verdict.crashed:
        plan = hunting_crashes
    if verdict.verdict == "skip" and not verdict.unsure:
        raise InputError(f"BAD ({bad_said}) cannot be measured: {verdict.detail}")
    if verdict.verdict != "bad":
        said = f"no regression ({verdict.detail})" if verdict.unsure else "no regression"
        print(
            f"kernelwatch bisect: {command.bad} ({bad[:12]}) shows {said} against "
            f"{command.good} ({good[:12]}) on {plan.filter!r}: nothing to bisect "
            f"(the comparison: {verdict.report})"
        )
        return 1
    say(f"kernelwatch bisect: BAD regresses ({verdict.detail}); bisecting")
    plan = dataclasses.replace(plan, hunted=verdict.regressions)  # bisect.Plan.hunted

    hunts = bisect.find_culprits(plan, repo, good, bad, out, say)
    # Several hunts, or one that explains only some of BAD's regressions: say which each
    # commit explains, and which none does.
    last = hunts[-1]
    several = len(hunts) > 1 or bool(last.outcome.first_bad and last.explains != last.hunted)
    for hunt in hunts:
        first_bad = hunt.outcome.first_bad
        if first_bad is None:
            _only_skipped(out, repo, hunt, several)
            return 1
        print(f"first bad commit: {first_bad} {bisect.subject(repo, first_bad)}")
        report = out / first_bad[:12] / "compare.txt"
        if report.is_file():
            print(f"its comparison with {command.good} ({good[:12]}): {report}")
        if several:
            print(
                f"it regresses {len(hunt.explains)} of the {len(plan.hunted)} benchmark(s) "
                f"BAD regresses: {', '.join(hunt.explains) or 'none'}"
            )
    left = [n for n in plan.hunted if not any(n in hunt.explains for hunt in hunts)]
    if left:
        print(
            f"kernelwatch bisect: no first bad commit found for {len(left)} of the "
            f"{len(plan.hunted)} benchmark(s) BAD regresses: {', '.join(left)}"
        )
        return 1
    return 0


def _only_skipped(out: Path, repo: Path, hunt: bisect.Hunt, several: bool) -> None:
    """git was left with only skipped commits: its candidates, each as it was judged."""
    from kernelwatch import bisect

    outcome = hunt.outcome
    # git's candidates hold the earliest measured bad commit too: "one of them" (the
    # unmeasured ones) was wrong when that one is the first bad commit.
    which = f" of {', '.join(hunt.hunted)}" if several else ""
    said = [
        bisect.candidate_said(out, sha, sha in outcome.skipped, hunt.hunted)
        for sha in outcome.candidates
    ]
    unsure = " or too close to call" if any(s.startswith("unsure") for s in said) else ""
    print(
        f"kernelwatch bisect: only commits that could not be measured{unsure} are left to "
        f"test; the first bad commit{which} is one of "
        f"{'these ' if outcome.candidates else 'them'}{len(outcome.candidates) or ''} "
        f"(see {out / hunt.log}):"
    )
    for sha, how in zip(outcome.candidates, said):
        print(f"  {sha} {bisect.subject(repo, sha)}: {how}")
