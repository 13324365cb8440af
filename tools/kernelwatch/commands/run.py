"""`kernelwatch run`: run the built benchmarks, save one result, compare it with this GPU's
baseline, and confirm regressions by re-running them."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kernelwatch.commands._parsers import add_parser
from kernelwatch import baseline as baselines
from kernelwatch import gpus, hostbound, runner
from kernelwatch import shard as shards
from kernelwatch.merge import SHARD_KEY
from kernelwatch.commands.compare import add_compare_options, settings_from, write_report
from kernelwatch.compare import Report, Settings, compare
from kernelwatch.config import Config, load_config
from kernelwatch.confirm import confirm_regressions
from kernelwatch.errors import InputError
from kernelwatch.files import write_json_atomic
from kernelwatch.gbench import read_json
from kernelwatch.results import Metric, ResultSet, from_documents, resolve_metric

DESCRIPTION = """\
Run the built benchmark binaries, merge their outputs into one result file, and compare it
with this GPU's baseline (baselines/<gpu-slug>/result.json).

Each binary (BUILD/bench/kernelwatch_bench_*, or every --bench) runs as --processes separate
processes (every binary's first, then every binary's second, ...), the --repetitions split
between them, with random interleaving; the harness does the warm-up,
the L2 flush and the adaptive sampling. The merged result keeps one context (the GPU, driver,
commit) plus how it was run, marks each repetition with its process, and is written before
anything is compared. The comparison's limit for each benchmark is at least 2 x its noise as
the baseline stored it (noise.json). A REGRESSION is then re-run alone in fresh processes
(--confirm times) and fails only when it regresses every time; the others are shown as "not
confirmed". See docs/running.md and docs/measurement.md."""

EPILOG = """\
exit status (with --gpus: the highest of the GPUs'):
  0  no regression (or --no-compare and the run succeeded)
  1  a confirmed REGRESSION; or a MISSING benchmark (unless --allow-missing); or an ERROR
     (unless --allow-errors)
  2  bad input or usage, no baseline for this GPU, a binary refused its arguments:
     one line on stderr, "kernelwatch: error: ..."
  3  a benchmark binary crashed or lost its CUDA context
  4  no CUDA GPU is visible: nothing to measure (one line on stderr)

examples:
  kernelwatch run                                   # the suite against this GPU's baseline
  kernelwatch run --gpus all                        # every GPU of the host at once
  kernelwatch run --shard 2/4 --no-compare --out s2.json   # then: kernelwatch merge s*.json
  kernelwatch run --filter '^matmul/' --confirm 2
  kernelwatch run --no-compare --out new.json       # then: kernelwatch baseline update new.json
  kernelwatch run --bench ./my_gbench_binary --baseline old.json
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "run",
        help="run the benchmarks and compare with this GPU's baseline",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    add_run_options(parser, repetitions=runner.DEFAULT_REPETITIONS)
    add_processes_option(parser)
    add_binary_options(
        parser, "a Google Benchmark binary to run instead (repeatable; any project's)"
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="where the merged result goes (default: results/kernelwatch-run-<gpu>-<time>.json)",
    )
    parser.add_argument(
        "--confirm",
        type=int,
        default=1,
        metavar="N",
        help="re-run each REGRESSION N times in a fresh process; it fails only if it regresses "
        "every time (default 1; 0: no re-run)",
    )
    parser.add_argument(
        "--no-compare",
        action="store_true",
        help="only run and write the result (for a new baseline)",
    )
    parser.add_argument(
        "--baselines",
        metavar="DIR",
        help="the baselines folder (default: baselines, in the checkout)",
    )
    parser.add_argument(
        "--baseline",
        metavar="PATH",
        help="compare with this result file or folder instead of the GPU's baseline",
    )
    add_gpus_option(parser)
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="run part K of N of the benchmarks, split by the baselines' durations into parts "
        "of about equal time (the same split on every machine); join the N results with "
        "kernelwatch merge",
    )
    add_compare_options(parser)
    parser.set_defaults(handler=run)


def add_gpus_option(parser: argparse.ArgumentParser) -> None:
    """--gpus; `selftest` shares it."""
    parser.add_argument(
        "--gpus",
        metavar="all|LIST",
        help="measure on these GPUs at once (all, or nvidia-smi indices or UUIDs, comma-"
        "separated), one process per GPU, each with its own result file (OUT-gpu<index>.json) "
        "and report; host-bound benchmarks measure one GPU at a time; the exit status is the "
        "worst GPU's",
    )


def add_run_options(
    parser: argparse.ArgumentParser,
    repetitions: int,
    repetitions_help: str = "repetitions of each benchmark, split between the --processes",
) -> None:
    """Options of how benchmarks run; `ab` and `selftest` share them."""
    parser.add_argument(
        "--filter",
        metavar="REGEX",
        help="only benchmarks whose full name matches (Google Benchmark's --benchmark_filter)",
    )
    parser.add_argument(
        "--repetitions",
        type=int,
        default=repetitions,
        metavar="N",
        help=f"{repetitions_help} (default {repetitions})",
    )
    parser.add_argument(
        "--max-time",
        type=float,
        default=runner.DEFAULT_MAX_TIME,
        metavar="S",
        help="seconds of sampling per repetition at most (--kernelwatch_max_time; default "
        f"{runner.DEFAULT_MAX_TIME:g})",
    )
    parser.add_argument(
        "--no-interleave",
        action="store_true",
        help="turn off --benchmark_enable_random_interleaving (on by default)",
    )
    parser.add_argument(
        "--bench-arg",
        metavar="ARG",
        action="append",
        default=[],
        help="an extra argument for every binary, e.g. --bench-arg=--kernelwatch_device=1 "
        "(repeatable)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show the binaries' own output on stderr (instead of the progress line)",
    )


def add_binary_options(parser: argparse.ArgumentParser, bench_help: str) -> None:
    """--build-dir and --bench: which binaries run; `selftest` shares them."""
    parser.add_argument(
        "--build-dir",
        metavar="DIR",
        help="the CMake build folder whose bench/kernelwatch_bench_* binaries run "
        "(default: build, in the checkout)",
    )
    parser.add_argument("--bench", metavar="PATH", action="append", default=[], help=bench_help)


def add_processes_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--processes",
        type=int,
        default=runner.DEFAULT_PROCESSES,
        metavar="K",
        help="run each binary as K separate processes, interleaved across binaries, the "
        f"repetitions split between them (default {runner.DEFAULT_PROCESSES}): the spread "
        "between processes is the noise that matters",
    )


SUITE_CONFIG = "kernelwatch.toml"


def run_settings(args: argparse.Namespace) -> runner.RunSettings:
    if args.filter is not None and not args.filter.strip():
        raise InputError("--filter: empty regex")
    return runner.RunSettings(
        repetitions=args.repetitions,
        max_time=args.max_time,
        interleave=not args.no_interleave,
        extra_args=tuple(args.bench_arg),
        verbose=args.verbose,
        processes=getattr(args, "processes", 1),
    )


def compare_settings(args: argparse.Namespace) -> tuple[Settings, Metric]:
    """Settings from the options over the config file (suite_config)."""
    return settings_from(args, suite_config(args)), resolve_metric(
        args.metric, args.higher_is_better
    )


def run(args: argparse.Namespace) -> int:
    settings = run_settings(args)
    if args.confirm < 0:
        raise InputError(f"--confirm {args.confirm}: must be 0 or more")
    judge = None
    if not args.no_compare:
        judge = compare_settings(args)  # bad options fail before any run
    config = suite_config(args)
    root = Path(args.baselines) if args.baselines else baselines.default_root()
    if args.out and Path(args.out).is_dir():
        raise InputError(f"--out {args.out}: is a directory; name the result file")
    if args.baseline and not Path(args.baseline).exists():
        raise InputError(f"--baseline {args.baseline}: no such file or directory")
    shard = shards.parse(args.shard) if args.shard else None
    chosen_gpus = gpus.select(gpus.discover(), args.gpus) if args.gpus else None

    progress = runner.Progress(enabled=None if not settings.verbose else False)
    binaries = find_binaries(args) if chosen_gpus else usable_binaries(args, settings)
    if not binaries:
        usable_binaries(args, settings)  # says there are none
    jobs = schedule(
        args,
        runner.plan(binaries, args.filter, settings.extra_args),
        config,
        root,
        shard,
        progress,
        several=bool(chosen_gpus and len(chosen_gpus) > 1),
    )
    context = {
        "kernelwatch_run_command": args.command_line,
        "kernelwatch_run_purpose": "run",
        "kernelwatch_filter": args.filter or "",
        **({SHARD_KEY: str(shard)} if shard else {}),
    }
    if chosen_gpus is None:
        suite = runner.run_suite(jobs, settings, progress=progress, context=context)
        return _finish(
            args, jobs, settings, suite, Path(args.out) if args.out else None, progress, judge, root
        )

    progress.say(
        f"kernelwatch: measuring on {len(chosen_gpus)} GPU(s) at once, one process per GPU: "
        + "; ".join(gpu.label for gpu in chosen_gpus)
    )
    measured = gpus.measure_all(chosen_gpus, jobs, settings, context, progress)
    stamp = runner.timestamp()
    statuses: list[tuple[gpus.Gpu, int, str]] = []
    for gpu, outcome in measured:
        on_gpu = gpus.settings_for(settings, gpu)
        if isinstance(outcome, InputError):
            print(f"kernelwatch: {gpu.label}: {outcome.prefix}{outcome}", file=sys.stderr)
            statuses.append((gpu, outcome.exit_status, "no result"))
            continue
        out = (
            gpus.out_for(Path(args.out), gpu)
            if args.out
            else default_out(
                baselines.context_slug(outcome.document["context"]), f"gpu{gpu.index}-{stamp}"
            )
        )
        print(f"== {gpu.label} ==", flush=True)
        try:
            status = _finish(
                gpus.args_for(args, gpu), jobs, on_gpu, outcome, out, progress, judge, root
            )
        except InputError as exc:  # this GPU's own trouble (no baseline for its model, ...)
            print(f"kernelwatch: {gpu.label}: {exc.prefix}{exc}", file=sys.stderr)
            status = exc.exit_status
        statuses.append((gpu, status, str(out)))
    for gpu, status, where in statuses:
        progress.say(
            f"kernelwatch: {gpu.label}: exit {status} ({EXIT_MEANING.get(status, 'failed')}); {where}"
        )
    return max(status for _, status, _ in statuses)


# What each exit status of a GPU's part means, for the summary of `run --gpus`.
EXIT_MEANING = {
    0: "no regression",
    1: "regression, missing or erroring benchmark",
    2: "bad input",
    3: "a benchmark binary crashed",
    4: "no usable GPU",
}


def suite_config(args: argparse.Namespace) -> Config:
    """--config, else the suite's own kernelwatch.toml in the baselines folder when there is
    one (its per-benchmark thresholds and host-bound list belong to the benchmarks, as the
    baselines do)."""
    path = getattr(args, "config", None)
    if path is None:
        root = (
            Path(args.baselines) if getattr(args, "baselines", None) else baselines.default_root()
        )
        suite_config = root / SUITE_CONFIG
        path = suite_config if suite_config.is_file() else None
    return load_config(path) if path else Config()


def planning_documents(args: argparse.Namespace, root: Path) -> list[Any]:
    """What the schedule reads the benchmarks' durations and host_bound counters from:
    --baseline, else every baseline in the folder. Not this GPU's alone: every shard job of
    every model must compute the same split from the same checkout."""
    if getattr(args, "baseline", None):
        return baselines.result_documents(Path(args.baseline))
    return [read_json(entry.result) for entry in baselines.entries(root)]


def schedule(
    args: argparse.Namespace,
    jobs: list[runner.Job],
    config: Config,
    root: Path,
    shard: shards.Shard | None,
    progress: runner.Progress,
    *,
    several: bool,
) -> list[runner.Job]:
    """The jobs of this shard, the host-bound benchmarks in jobs of their own (serial)."""
    names = [name for job in jobs for name in job.names]
    documents: list[Any] = []
    if shard or several or config.serial:
        documents = planning_documents(args, root)
    if shard:
        chosen = shards.select(names, shard, shards.durations(documents))
        if not chosen:
            raise InputError(f"--shard {shard}: no benchmark falls in it ({len(names)} in all)")
        progress.say(
            f"kernelwatch: shard {shard}: {len(chosen)} of {len(names)} benchmarks "
            f"(split by {'the baselines’ durations' if documents else 'count'})"
        )
        jobs = runner.select_jobs(jobs, chosen)
        names = chosen
    serial = hostbound.select(names, config.serial, documents)
    if serial:
        jobs = runner.split_serial(jobs, serial)
        if several:
            progress.say(
                f"kernelwatch: {len(serial)} host-bound benchmark(s) (counter "
                f"{hostbound.COUNTER}, or [run] serial in {SUITE_CONFIG}) measure one GPU at a "
                "time, with nothing else of kernelwatch running on this host"
            )
    return jobs


def _finish(
    args: argparse.Namespace,
    jobs: list[runner.Job],
    settings: runner.RunSettings,
    suite: runner.SuiteRun,
    out: Path | None,
    progress: runner.Progress,
    judge: tuple[Settings, Metric] | None,
    root: Path,
) -> int:
    """Write the result; compare it with its GPU's baseline and confirm the regressions."""
    document = suite.document
    context = document["context"]
    slug = baselines.context_slug(context)
    out = out or default_out(slug)
    write_json_atomic(out, document, make_parents=True)
    count = sum(len(job.names) for job in jobs)
    each = f", {settings.processes} processes each," if settings.processes > 1 else ""
    progress.say(
        f"kernelwatch: wrote {out} ({count} benchmarks from "
        f"{len({job.binary for job in jobs})} binaries{each} in {suite.seconds:.0f} s)"
    )
    if judge is None:
        return 0
    compare_with, metric = judge

    names = {name for job in jobs for name in job.names}
    part = bool(args.filter or args.bench or args.shard)  # the rest is not MISSING
    baseline = baselines.against(
        root,
        context,
        str(out),
        given=Path(args.baseline) if args.baseline else None,
        names=names if part else None,
    )
    base_label, base_docs = baseline.label, baseline.documents
    base = _side(base_label, base_docs, f"holds none of the {count} benchmarks that ran")
    stored, stored_warning = baseline.noise, baseline.warning
    report = compare(base, from_documents(str(out), [document]), metric, compare_with, stored)
    report = _warn_other_settings(report, base.context, context, stored_warning)

    def rerun(k: int, flagged: Sequence[str]) -> Report:
        again = runner.run_suite(
            runner.rerun_jobs(jobs, flagged),
            settings,
            progress=progress,
            label=f"confirming {len(flagged)} regression(s), re-run {k}/{args.confirm}",
            context={
                "kernelwatch_run_command": args.command_line,
                "kernelwatch_run_purpose": f"confirm {k} of {args.confirm} for {out.name}",
                "kernelwatch_filter": runner.names_filter(flagged),
            },
        )
        path = out.with_name(f"{out.stem}.confirm-{k}{out.suffix or '.json'}")
        write_json_atomic(path, again.document, make_parents=True)
        progress.say(f"kernelwatch: re-ran {len(flagged)} flagged benchmark(s): wrote {path}")
        chosen = set(flagged)
        base_k = _side(base_label, [baselines.restrict(d, chosen) for d in base_docs], "")
        return compare(
            base_k, from_documents(str(path), [again.document]), metric, compare_with, stored
        )

    report = confirm_regressions(report, rerun, args.confirm)
    return write_report(report, args, command="run")


# How a result was run, where a difference moves medians (random interleaving shifted one
# strided kernel by 2.4% on an H200: shared/README.md).
RUN_SETTING_KEYS = {
    "kernelwatch_random_interleaving": "random interleaving",
    "kernelwatch_max_time": "max time (s)",
}


def _warn_other_settings(report: Report, base: Any, run: Any, extra: str | None = None) -> Report:
    warnings = [
        f"different {label}: baseline {base[key]}, this run {run[key]}"
        for key, label in RUN_SETTING_KEYS.items()
        if key in base and key in run and str(base[key]) != str(run[key])
    ]
    if extra:
        warnings.append(extra)
    if not warnings:
        return report
    return dataclasses.replace(report, warnings=tuple(report.warnings) + tuple(warnings))


def default_out(slug: str | None, tail: str | None = None) -> Path:
    return (
        Path("results")
        / f"kernelwatch-run-{slug or 'unknown-gpu'}-{tail or runner.timestamp()}.json"
    )


def usable_binaries(args: argparse.Namespace, settings: runner.RunSettings) -> list[Path]:
    """The binaries to run, once a GPU is known to be there (exit 4 first: without a GPU
    nothing else matters); refuses when there are none."""
    binaries = find_binaries(args)
    runner.require_gpu(binaries[0] if binaries else None, settings.extra_args)
    if not binaries:
        build = args.build_dir or baselines.project_root() / "build"
        raise InputError(
            f"no benchmark binaries ({runner.BINARY_GLOB}) in {Path(build) / runner.BINARY_FOLDER}"
            ": build them first (tools/kw suite, or cmake --preset release && cmake --build "
            "--preset release), or name them with --bench"
        )
    return binaries


def find_binaries(args: argparse.Namespace) -> list[Path]:
    """The --bench binaries, else this project's in --build-dir (or the checkout's build)."""
    if args.bench:
        return [runner.check_binary(Path(p)) for p in args.bench]
    if args.build_dir is not None:
        build = Path(args.build_dir)
        if not build.is_dir():
            raise InputError(f"--build-dir {build}: no such directory")
    else:
        build = baselines.project_root() / "build"
    return runner.find_binaries(build)


def _side(label: str, documents: list[Any], empty: str) -> ResultSet:
    kept = [d for d in documents if d.get("benchmarks")]
    if not kept:
        raise InputError(
            f"baseline {label} {empty or 'holds none of these benchmarks'}; update it with "
            "kernelwatch baseline update"
        )
    return from_documents(label, kept)
