"""`kernelwatch selftest`: measure false alarms, detection of injected slowdowns and noise on
this GPU, and say whether the measurement meets its targets."""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.config import Config
from kernelwatch.errors import InputError, compile_regex
from kernelwatch.files import Input, Output, check_outputs, write_atomic, write_output

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import gpus, hostbound, runner, selftest, verdict
    from kernelwatch.binaries import find_binaries, usable_binaries
    from kernelwatch.compare import Settings
    from kernelwatch.selftest import views

DESCRIPTION = f"""\
Measure how well kernelwatch measures on this GPU, from a build folder (like `run`), and say
whether the targets hold:

  A/A: the chosen benchmarks run --aa-runs times, each a `run`-style collection (--processes
  processes per binary, the --repetitions split between them); every pair is compared with the
  settings `run` uses (baselines/kernelwatch.toml, the compare options). A REGRESSION, SLOWER
  or IMPROVEMENT (any change claimed) is a false alarm. Target: at most {defaults.TARGET_FALSE_ALARMS:.0%} of them.

  Injected slowdowns: for each of --trials trials, a control run with
  --kernelwatch_inject=REGEX:0 (an empty extra kernel) and one run per level of --slowdowns
  with --kernelwatch_inject=REGEX:LEVEL (the harness makes the matching benchmarks exactly
  LEVEL slower), each compared with the control. Detection = REGRESSION verdicts / (injected
  benchmarks x trials), over benchmarks whose median is at least --min-time-us and over all;
  benchmarks that a kernelwatch.toml rule holds to a threshold above the level are left out.
  Targets: 5% detected in at least 99%, 2% in at least 90% (>= --min-time-us).

  Figures: median CV of the repetitions per family (target: at most 0.5% overall), median
  `noise` and `samples` counters, throttled samples, wall time per run and per benchmark.

Every run is saved in --out DIR as it finishes (aa-K.json, control-K.json,
inject-LEVEL-K.json); --from DIR analyses a saved folder again without a GPU, with any compare
settings, so thresholds can be tuned offline. --resume finishes an interrupted selftest in the
same --out. See docs/measurement.md."""

EPILOG = """\
exit status:
  0  every measured target holds
  1  a target is missed (named on stderr); or --time-budget left runs to make (--resume)
  2  bad input or usage: one line on stderr, "kernelwatch: error: ..."
  3  a benchmark binary crashed or lost its CUDA context
  4  no CUDA GPU is visible: nothing to measure

examples:
  kernelwatch selftest --build-dir build --out results/selftest
  kernelwatch selftest --build-dir build --filter '^(coalescing|transpose)/' --aa-runs 3
  kernelwatch selftest --from results/selftest --threshold 1.5% --json st.json
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "selftest",
        help="measure false alarms, detection of injected slowdowns and noise on this GPU",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    options.add_suite_options(
        parser,
        "a benchmark binary to run instead (repeatable; must accept the harness's "
        "--kernelwatch_inject)",
    )
    parser.add_argument(
        "--aa-runs",
        type=int,
        metavar="N",
        help=f"runs of the same build, every pair compared (default "
        f"{defaults.SELFTEST_AA_RUNS}; 0: no A/A)",
    )
    parser.add_argument(
        "--slowdowns",
        metavar="LIST",
        help="injected slowdowns, comma-separated fractions or percentages (default "
        + ",".join(f"{x:g}" for x in defaults.SELFTEST_LEVELS)
        + ")",
    )
    parser.add_argument(
        "--trials",
        type=int,
        metavar="N",
        help=f"control + slowed runs per level (default {defaults.SELFTEST_TRIALS}; 0: no "
        "injection)",
    )
    parser.add_argument(
        "--inject",
        metavar="REGEX",
        help="the benchmarks to slow down: matched by the harness against each one's family and "
        "argument values, e.g. local_memory/local_array/16777216/8 (not n:16777216/rounds:8); "
        f"default {defaults.SELFTEST_INJECT!r}: all that run",
    )
    parser.add_argument(
        "--min-time-us",
        type=float,
        metavar="US",
        help="detection targets hold for benchmarks whose median is at least this "
        f"(default {defaults.SELFTEST_MIN_TIME_US:g})",
    )
    parser.add_argument(
        "--out",
        type=options.non_empty,
        metavar="DIR",
        help="where every run is saved (default: results/selftest-<UTC time>)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs already saved in --out and make only the missing ones",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        metavar="S",
        help="start no run that would likely end after S seconds (at least one run is made); "
        "the runs left are made by the next call with --resume (for machines that limit how "
        "long one command may take)",
    )
    parser.add_argument(
        "--from",
        dest="from_dir",
        type=options.non_empty,
        metavar="DIR",
        help="analyse the runs saved in DIR again; runs nothing, needs no GPU",
    )
    options.add_baselines_option(
        parser,
        "where kernelwatch.toml (the suite's threshold rules) is read from (default: baselines, "
        f"{options.IN_PROJECT})",
    )
    options.add_gpus_option(parser)
    options.add_decision_options(parser)
    for flag, kind in (("--markdown", "Markdown"), ("--json", "JSON")):
        what = f"also write the report as {kind}"
        parser.add_argument(flag, metavar="FILE", type=options.output_file, help=what)
    options.keep_defaults(parser, _RUN_ONLY)
    parser.set_defaults(handler=main)


# Options that only make sense when runs are made, refused with --from.
_RUN_ONLY = {
    "build_dir": "--build-dir",
    "bench": "--bench",
    "aa_runs": "--aa-runs",
    "slowdowns": "--slowdowns",
    "trials": "--trials",
    "inject": "--inject",
    "out": "--out",
    "resume": "--resume",
    "time_budget": "--time-budget",
    "bench_arg": "--bench-arg",
    "repetitions": "--repetitions",
    "max_time": "--max-time",
    "processes": "--processes",
    "interleave": "--interleave/--no-interleave",
    "gpus": "--gpus",
}


@dataclass(frozen=True)
class SelftestCommand:
    """What `kernelwatch selftest` was asked to do."""

    # The run options as settings, or the error they raise: raised where runs are made, after
    # the selftest's own options are checked (_run_settings); --from checks none of them.
    run: runner.RunSettings | InputError
    filter: str | None
    compare_with: Settings
    config: Config  # the suite's: its host-bound list
    build_dir: str | None
    bench: tuple[str, ...]
    aa_runs: int | None
    slowdowns: str | None
    trials: int | None
    inject: str | None
    min_time_us: float | None  # None: left out (its default, unmeasured)
    out: str | None
    resume: bool
    time_budget: float | None
    from_dir: str | None
    run_only_given: str | None  # the first run-only option given (refused with --from)
    gpus: str | None
    markdown: str | None
    json: str | None
    command_line: str


def main(args: argparse.Namespace) -> int:
    from kernelwatch import verdict

    config = verdict.suite_config(args.config, options.baselines_root_if_any(args))
    compare_with = options.settings(args, config)  # bad ones fail before a run
    run_settings: runner.RunSettings | InputError
    try:
        run_settings = options.judged_by(options.suite_run_settings(args), compare_with)
    except InputError as exc:
        run_settings = exc
    return run(
        SelftestCommand(
            run=run_settings,
            filter=args.filter,
            compare_with=compare_with,
            config=config,
            build_dir=args.build_dir,
            bench=tuple(args.bench),
            aa_runs=args.aa_runs,
            slowdowns=args.slowdowns,
            trials=args.trials,
            inject=args.inject,
            min_time_us=args.min_time_us,
            out=args.out,
            resume=args.resume,
            time_budget=args.time_budget,
            from_dir=args.from_dir,
            run_only_given=options.first_given(args, _RUN_ONLY),
            gpus=args.gpus,
            markdown=args.markdown,
            json=args.json,
            command_line=args.command_line,
        )
    )


def run(command: SelftestCommand) -> int:
    from kernelwatch import locks

    # A second selftest told to write in this folder (or these reports) is refused before it
    # measures: two at once wrote each other's runs, aa-1.json, ..., and reported on the mix.
    out = None if command.from_dir else command.out or "results"
    named = [("--out", out), ("--markdown", command.markdown), ("--json", command.json)]
    with locks.writing(named):
        return _run(command)


def _run(command: SelftestCommand) -> int:
    from kernelwatch import gpus, selftest

    settings = command.compare_with
    if command.min_time_us is not None and not (
        command.min_time_us >= 0 and math.isfinite(command.min_time_us)
    ):
        raise InputError(f"--min-time-us {command.min_time_us}: must be a number >= 0")
    # Before the first run: a bad path would lose the report at the end. (With --gpus the
    # reports, FILE-gpu<index>, lie in the same folder: checked alike.)
    out = None if command.from_dir else command.out or "results"
    saved = [Input("--from", command.from_dir), Input("the --out runs", command.out, True)]
    saved.append(command.config.read())
    reports = [Output("--markdown", command.markdown), Output("--json", command.json)]
    check_outputs([Output("--out", out, folder=True, make_parents=True), *reports], saved)
    if command.from_dir:
        if command.run_only_given:
            raise InputError(
                f"--from re-analyses saved runs and runs nothing: {command.run_only_given} does "
                "not apply"
            )
        only = compile_regex(command.filter, "--filter") if command.filter else None
        return _report(command, selftest.load_runs(Path(command.from_dir)), 0, settings, only)
    if not command.gpus:
        collected = _measure(command)
        return _report(command, collected.runs, collected.missing, settings, None)
    statuses = []
    for gpu, outcome in _measure_gpus(command, command.gpus):
        print(f"== {gpu.label} ==", flush=True)
        if isinstance(outcome, InputError):
            print(f"kernelwatch: {gpu.label}: {outcome.prefix}{outcome}", file=sys.stderr)
            statuses.append(outcome.exit_status)
            continue
        mine = dataclasses.replace(
            command,
            markdown=str(gpus.out_for(Path(command.markdown), gpu)) if command.markdown else None,
            json=str(gpus.out_for(Path(command.json), gpu)) if command.json else None,
        )
        status = _report(mine, outcome.runs, outcome.missing, settings, None)
        print(f"kernelwatch: selftest: {gpu.label}: exit {status}", file=sys.stderr)
        statuses.append(status)
    return max(statuses)


def _report(
    command: SelftestCommand,
    runs: list[selftest.SavedRun],
    missing: int,
    settings: Settings,
    only: re.Pattern[str] | None,
) -> int:
    from kernelwatch import runner, selftest
    from kernelwatch.selftest import views

    progress = runner.Progress()
    analysis = selftest.analyse(
        runs,
        settings,
        min_time_us=command.min_time_us,
        only=only,
        progress=progress.status if progress.enabled else None,
        missing=missing,
    )
    progress.clear()
    # Comparisons, not pairs: two A/A runs of no benchmark in common compared nothing.
    measured = analysis.false_alarms.total or any(d.all.total for d in analysis.detections)
    if not measured and not missing:  # (runs still to make: --resume finishes; exit 1 below)
        where = f"--from {command.from_dir}" if command.from_dir else "the runs"
        raise InputError(
            f"{where}: nothing was compared ({analysis.runs} run(s): no A/A pair, no control "
            "with slowed runs, or none with a benchmark in common); a selftest that measured "
            "nothing does not pass"
        )
    if command.markdown:
        write_atomic(command.markdown, views.render_markdown(analysis))
    if command.json:
        write_atomic(command.json, views.render_json(analysis))
    write_output(views.render_text(analysis))
    for target in analysis.missed:
        print(
            f"kernelwatch: selftest: missed {target.name}: {views.target_value(target)} "
            f"({views.limit_text(target)})",
            file=sys.stderr,
        )
    if missing:
        # Part of the runs cannot show that the targets hold: not a pass (Analysis.missing).
        print(
            f"kernelwatch: selftest: incomplete: {missing} run(s) still to make in {command.out}; "
            "run the same command again with --resume",
            file=sys.stderr,
        )
    return analysis.exit_status


def _measure_gpus(
    command: SelftestCommand, which: str
) -> list[tuple[gpus.Gpu, selftest.Collected | InputError]]:
    """The selftest on every chosen GPU at once, each into OUT/gpu<index>; host-bound
    benchmarks one GPU at a time, as `run --gpus` measures them."""
    from kernelwatch import gpus, runner
    from kernelwatch.binaries import find_binaries, usable_binaries

    chosen = gpus.select(gpus.discover(), which)
    out = Path(command.out) if command.out else Path("results") / f"selftest-{runner.timestamp()}"
    if not find_binaries(command.build_dir, command.bench):
        extra_args = _run_settings(command).extra_args
        usable_binaries(command.build_dir, command.bench, extra_args)  # says why
    progress = runner.Progress(enabled=False)
    several = len(chosen) > 1

    def one(gpu: gpus.Gpu) -> selftest.Collected:
        mine = dataclasses.replace(command, out=str(out / f"gpu{gpu.index}"))
        return _measure(mine, gpu=gpu, several=several, progress=progress)

    return gpus.on_each(chosen, one)


def _run_settings(command: SelftestCommand) -> runner.RunSettings:
    """The run options' settings, or the error in them (SelftestCommand.run)."""
    if isinstance(command.run, InputError):
        raise command.run
    return command.run


def _measure(
    command: SelftestCommand,
    *,
    gpu: gpus.Gpu | None = None,
    several: bool = False,
    progress: runner.Progress | None = None,
) -> selftest.Collected:
    from kernelwatch import gpus, hostbound, runner, selftest
    from kernelwatch.binaries import find_binaries, usable_binaries

    aa_runs = defaults.SELFTEST_AA_RUNS if command.aa_runs is None else command.aa_runs
    trials = defaults.SELFTEST_TRIALS if command.trials is None else command.trials
    selftest.check_counts(aa_runs, trials)
    levels = options.slowdowns(command.slowdowns, defaults.SELFTEST_LEVELS)
    # Each level as the harness is given it and its file is named (level_text, 6 digits):
    # 0.0123456789 was saved as 0.0123457, which --resume took for another run, and two
    # levels alike to 6 digits wrote one file, counted twice.
    said = [selftest.level_text(x) for x in levels]
    for k, text in enumerate(said):
        if text in said[:k]:
            raise InputError(f"--slowdowns {text}: given twice (to 6 digits)")
        if not 0 < float(text) < 10:
            raise InputError(f"--slowdowns {text}: out of range")
    levels = [float(text) for text in said]
    if aa_runs == 0 and (trials == 0 or not levels):
        raise InputError("--aa-runs 0 and no injected slowdowns: nothing to measure")
    inject = command.inject if command.inject is not None else defaults.SELFTEST_INJECT
    if not inject.strip():
        raise InputError("--inject: empty regex")
    compile_regex(inject, "--inject")  # the analysis matches it against the instance keys too
    if command.resume and not command.out:
        raise InputError("--resume needs the --out folder of the selftest to finish")
    if command.time_budget is not None and not 0 < command.time_budget < math.inf:
        raise InputError(
            f"--time-budget {command.time_budget:g}: must be a positive number of seconds"
        )
    if command.time_budget is not None and not command.out:
        raise InputError("--time-budget needs --out: the runs left are made there with --resume")
    out = Path(command.out) if command.out else Path("results") / f"selftest-{runner.timestamp()}"
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; name a folder")
    settings = _run_settings(command)
    binaries = (
        find_binaries(command.build_dir, command.bench)
        if gpu
        else usable_binaries(command.build_dir, command.bench, settings.extra_args)
    )
    jobs = runner.plan(binaries, command.filter, settings.extra_args)
    plain = [j.binary for j in jobs if not j.harness]
    if trials and levels and plain:  # it would exit 1 on the flag after the A/A runs: refuse now
        raise InputError(
            f"{plain[0]}: not built on kernelwatch's harness, so it cannot slow its benchmarks "
            "on purpose (--kernelwatch_inject); --trials 0 measures the A/A false alarms only"
        )
    serial = hostbound.select([n for j in jobs for n in j.names], command.config.serial)
    jobs = runner.split_serial(jobs, serial) if serial else jobs
    if gpu:
        settings = gpus.settings_for(settings, gpu)
    else:  # the card's lock, as run, ab and --gpus hold it while they measure
        settings = dataclasses.replace(settings, gpu_uuid=gpus.visible_uuid(settings.extra_args))
    planned = selftest.plan(aa_runs, trials, levels)
    progress = progress or runner.Progress(enabled=None if not settings.verbose else False)
    where = f"{gpu.label}: " if gpu else ""
    progress.say(
        f"kernelwatch: selftest: {where}{len(planned)} runs of "
        f"{sum(len(j.names) for j in jobs)} benchmarks into {out}"
        + (f"; {len(serial)} host-bound, one GPU at a time" if serial and several else "")
    )
    return selftest.run_all(
        planned,
        jobs,
        settings,
        out,
        inject=inject,
        resume=command.resume,
        progress=progress,
        context={
            "kernelwatch_run_command": command.command_line,
            "kernelwatch_filter": command.filter or "",
        },
        time_budget=command.time_budget,
    )
