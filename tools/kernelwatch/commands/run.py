"""`kernelwatch run`: run the built benchmarks, save one result, compare it with this GPU's
baseline (or its anchor, anchor.py), and confirm regressions by re-running them.

The command's one flow from options to exit status, for one GPU and for
--gpus; each step's work is elsewhere (runner/, gpus, shard, anchor, verdict, reruns)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.config import Config
from kernelwatch.errors import InputError
from kernelwatch.files import Input, Output, check_outputs, tagged, write_json_atomic

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import anchor as anchors
    from kernelwatch import baseline as baselines
    from kernelwatch import completeness, gpus, hostbound, noise, reruns, runner
    from kernelwatch import merge as shards
    from kernelwatch import verdict
    from kernelwatch.binaries import find_binaries, planning_documents, usable_binaries
    from kernelwatch.loading import from_documents
    from kernelwatch.merge import SHARD_KEY
    from kernelwatch.verdict import Outputs, report_outputs, write_report
    from kernelwatch.verdict import Judging, SUITE_CONFIG
    from kernelwatch.results import ResultSet

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
(--confirm times) and fails only when it regresses every time; the others are shown as SLOWER
"not confirmed". See docs/running.md and docs/measurement.md."""

EPILOG = """\
exit status (with --gpus: the highest of the GPUs'):
  0  no regression (or --no-compare and the run succeeded)
  1  a confirmed REGRESSION, or a regression of the suite (docs/compare.md); or a MISSING
     benchmark (unless --allow-missing; one the build no longer registers, removed or
     renamed, fails nothing); or an ERROR (unless --allow-errors)
  2  bad input or usage, no baseline for this GPU, a binary refused its arguments:
     one line on stderr, "kernelwatch: error: ..."
  3  a benchmark binary crashed, hung or lost its CUDA context (what finished is written);
     or a confirming re-run did (the report is written, the first run's verdicts kept)
  4  no CUDA GPU is visible: nothing to measure (one line on stderr)

examples:
  kernelwatch run                                   # the suite against this GPU's baseline
  kernelwatch run --gpus all                        # every GPU of the host at once
  kernelwatch run --shard 2/4 --no-compare --out s2.json   # then: kernelwatch merge s*.json
  kernelwatch run --filter '^matmul/' --confirm 2
  kernelwatch run --no-compare --out new.json       # then: kernelwatch baseline update new.json
  kernelwatch run --bench ./my_gbench_binary --baseline old.json
  kernelwatch run --anchor always --anchor-max-age 0   # measure the baseline's commit here too
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "run",
        help="run the benchmarks and compare with this GPU's baseline",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    options.add_suite_options(
        parser, "a Google Benchmark binary to run instead (repeatable; any project's)"
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        type=options.output_file,
        help="where the merged result goes (default: results/kernelwatch-run-<gpu>-<time>.json)",
    )
    parser.add_argument(
        "--confirm",
        type=int,
        default=1,
        metavar="N",
        help="re-run each REGRESSION N times in a fresh process; it fails only if it regresses "
        "every time, else it is SLOWER, not failing (default 1; 0: no re-run)",
    )
    parser.add_argument(
        "--no-compare",
        action="store_true",
        help="only run and write the result (for a new baseline)",
    )
    options.add_baselines_option(parser)
    parser.add_argument(
        "--baseline",
        type=options.non_empty,
        metavar="PATH",
        help="compare with this result file or folder instead of the GPU's baseline",
    )
    options.add_gpus_option(parser)
    parser.add_argument(
        "--host-bound-on",
        choices=defaults.HOST_BOUND_ON,
        default="first",
        help="with --gpus: measure the host-bound benchmarks (the transfers) on the first GPU "
        "of each model only, the others' results leaving them out (first, the default: they "
        "time the host more than the card), or on every GPU in turn (each)",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="with --gpus: share the benchmarks among the GPUs instead of measuring all of them "
        "on each: each GPU takes the next binary's benchmarks when it is free (the host-bound "
        "ones all on GPU 1 of N), and its result is judged as shard k/N; join the results with "
        "kernelwatch merge",
    )
    options.add_process_timeout_option(parser)
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="run part K of N of the benchmarks, split by the baselines' durations into parts "
        "of about equal time (the same split on every machine); join the N results with "
        "kernelwatch merge",
    )
    options.add_anchor_options(parser)
    options.add_compare_options(parser)
    options.keep_defaults(parser, _COMPARE_ONLY)
    parser.set_defaults(handler=main)


# Options that only act on the comparison, refused with --no-compare: taken and ignored, a
# report a CI step reads next was silently not written (exit 0).
_COMPARE_ONLY = {
    "baseline": "--baseline",
    "confirm": "--confirm",
    "format": "--format",
    "junit": "--junit",
    "markdown": "--markdown",
    "json": "--json",
    "color": "--color",
    "metric": "--metric",
    "higher_is_better": "--higher-is-better/--lower-is-better",
    "threshold": "--threshold",
    "alpha": "--alpha",
    "min_repetitions": "--min-repetitions",
    "noise_multiplier": "--noise-multiplier",
    "allow_missing": "--allow-missing",
    "allow_errors": "--allow-errors",
    "strict": "--strict",
}


@dataclass(frozen=True)
class RunCommand:
    """What `kernelwatch run` was asked to do."""

    settings: runner.RunSettings
    filter: str | None
    build_dir: str | None
    bench: tuple[str, ...]
    out: Path | None
    confirm: int
    judging: Judging | None  # None: --no-compare
    config: Config  # --config, else the suite's kernelwatch.toml
    root: Path | None  # the baselines folder (None: outside any project, and not needed)
    baseline: Path | None  # --baseline
    shard: str | None
    gpus: str | None
    host_bound_on: str  # defaults.HOST_BOUND_ON
    split: bool  # --split: the GPUs share the benchmarks, each result shard k/N
    outputs: Outputs
    command_line: str
    anchor: anchors.Request | None = None  # None: --anchor never, or ruled out
    interleave: bool | None = None  # --interleave / --no-interleave; None: as the baseline


def main(args: argparse.Namespace) -> int:
    from kernelwatch import verdict
    from kernelwatch.verdict import Judging

    ignored = options.first_given(args, _COMPARE_ONLY)
    if args.no_compare and ignored:
        raise InputError(f"--no-compare runs and writes the result only: {ignored} does not apply")
    settings = options.suite_run_settings(args, process_timeout=args.process_timeout)
    if args.confirm < 0:
        raise InputError(f"--confirm {args.confirm}: must be 0 or more")
    # Comparing with this GPU's baseline needs the project's baselines: refused before any run.
    needs_root = not args.no_compare and args.baseline is None
    root = options.baselines_root(args) if needs_root else options.baselines_root_if_any(args)
    config = verdict.suite_config(args.config, root)
    judging = None
    if not args.no_compare:  # bad options fail before any run
        judging = Judging(
            options.metric(args),
            options.settings(args, config, **options.gates(args)),
        )
        settings = options.judged_by(settings, judging.settings)
    return run(
        RunCommand(
            settings=settings,
            filter=args.filter,
            build_dir=args.build_dir,
            bench=tuple(args.bench),
            out=Path(args.out) if args.out else None,
            confirm=args.confirm,
            judging=judging,
            config=config,
            root=root,
            baseline=Path(args.baseline) if args.baseline else None,
            shard=args.shard,
            gpus=args.gpus,
            host_bound_on=args.host_bound_on,
            split=args.split,
            outputs=options.outputs(args),
            command_line=args.command_line,
            anchor=options.anchoring(args, root),
            interleave=args.interleave,
        )
    )


def run(command: RunCommand) -> int:
    from kernelwatch import locks
    from kernelwatch.verdict import report_outputs

    # A second command told to write one of these paths is refused before it measures.
    named = [("--out", command.out), *((o.option, o.path) for o in report_outputs(command.outputs))]
    with locks.writing(named):
        return _run(command)


def _run(command: RunCommand) -> int:
    from kernelwatch import anchor as anchors
    from kernelwatch import baseline as baselines
    from kernelwatch import completeness, gpus, runner
    from kernelwatch import merge as shards
    from kernelwatch.binaries import find_binaries, planning_documents, usable_binaries
    from kernelwatch.merge import SHARD_KEY

    settings = command.settings
    if command.out and command.out.is_dir():
        raise InputError(f"--out {command.out}: is a directory; name the result file")
    if command.baseline and not command.baseline.exists():
        raise InputError(f"--baseline {command.baseline}: no such file or directory")
    # (--shard '' is a bad K/N, not "no shard")
    shard = shards.parse(command.shard) if command.shard is not None else None
    if command.split and (not command.gpus or shard):
        raise InputError("--split shares the benchmarks among --gpus: give --gpus, not --shard")
    chosen_gpus = gpus.select(gpus.discover(), command.gpus) if command.gpus else None
    if command.split and chosen_gpus:
        gpus.one_model(chosen_gpus)
    # Before anything is measured: a bad path would lose the whole run at its end.
    check_outputs(outputs_of(command, chosen_gpus), inputs_of(command))

    progress = runner.Progress(enabled=None if not settings.verbose else False)
    if chosen_gpus:
        binaries = find_binaries(command.build_dir, command.bench)
    else:
        binaries = usable_binaries(command.build_dir, command.bench, settings.extra_args)
    if not binaries:
        usable_binaries(command.build_dir, command.bench, settings.extra_args)  # says why
    if chosen_gpus is None:  # the card's lock, as `ab` and --gpus hold it while they measure
        settings = dataclasses.replace(settings, gpu_uuid=gpus.visible_uuid(settings.extra_args))
        said = _interleaving(command, gpus.slug_of(settings.gpu_uuid))
        settings = _as_baseline(settings, said, progress)
    else:
        said_for = {slug: _interleaving(command, slug) for slug in {g.slug for g in chosen_gpus}}
        each_settings = {
            gpu: _as_baseline(gpus.settings_for(settings, gpu), said_for[gpu.slug], progress, gpu)
            for gpu in chosen_gpus
        }
    planned = runner.plan(binaries, command.filter, settings.extra_args)
    plan = shards.plan_key((n for job in planned for n in job.names), shard.count) if shard else ""
    several = bool(chosen_gpus and len(chosen_gpus) > 1)
    documents = []  # the baselines, for the durations of a split and the host-bound benchmarks
    if shard or several or command.config.serial:
        documents = planning_documents(command.baseline, command.root)
    jobs = schedule(command, planned, shard, progress, documents, several=several)
    context = {
        "kernelwatch_run_command": command.command_line,
        "kernelwatch_run_purpose": "run",
        "kernelwatch_filter": command.filter or "",
        **({SHARD_KEY: str(shard), shards.PLAN_KEY: plan} if shard else {}),
        # Every benchmark the binaries list runs: one the baseline has that this result lacks
        # is not in this build (removed or renamed), not failing; or the --bench binaries, whose
        # result is judged on what they ran (completeness.py).
        **completeness.coverage(command.filter, shard, command.bench),
    }
    if chosen_gpus is None:
        try:
            result, anchoring = _measure(command, jobs, settings, context, progress)
        except runner.IncompleteRun as exc:
            keep = lambda slug: command.out or default_out(slug)  # noqa: E731
            completeness.keep_partial(exc, keep, progress, new=not command.out)
            raise
        return _finish(command, settings, result, command.out, progress, command.outputs, anchoring)

    progress.say(
        f"kernelwatch: measuring on {len(chosen_gpus)} GPU(s) at once, one process per GPU: "
        + "; ".join(gpu.label for gpu in chosen_gpus)
    )
    if command.split:
        each = _split(command, jobs, chosen_gpus, context, documents)
    else:
        each = gpus.shares(chosen_gpus, jobs, context, command.host_bound_on)

    def on_gpu(gpu: gpus.Gpu) -> tuple[runner.SuiteRun, anchors.Ahead | None]:
        """One thread (and one benchmark process at a time) per GPU; the host-bound jobs take
        the host to themselves (locks), and each GPU is anchored on its own card."""
        quiet = runner.Progress(stream=progress.stream, enabled=False)
        share, own = each[gpu], each_settings[gpu]
        label = f"GPU {gpu.index}"
        measured = _measure(
            command, list(share.jobs), own, share.context, quiet, label, share.claim
        )
        count = sum(len(job.names) for job in measured[0].jobs)
        progress.say(
            f"kernelwatch: {gpu.label}: measured {count} benchmark(s) in {measured[0].seconds:.0f} s"
        )
        return measured

    measured = gpus.on_each(chosen_gpus, on_gpu)
    stamp = runner.timestamp()
    statuses: list[tuple[gpus.Gpu, int, str]] = []
    for gpu, outcome in measured:
        out_for = _gpu_out(command.out, gpu, stamp)
        if isinstance(outcome, InputError):
            kept = None
            if isinstance(outcome, runner.IncompleteRun):
                kept = completeness.keep_partial(outcome, out_for, progress)
            print(f"kernelwatch: {gpu.label}: {outcome.prefix}{outcome}", file=sys.stderr)
            statuses.append((gpu, outcome.exit_status, str(kept or "no result")))
            continue
        result, anchoring = outcome
        out = out_for(baselines.context_slug(result.document["context"]))
        print(f"== {gpu.label} ==", flush=True)
        try:
            status = _finish(
                command,
                each_settings[gpu],
                result,
                out,
                progress,
                gpus.outputs_for(command.outputs, gpu),
                anchoring,
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
    3: "a benchmark binary crashed or hung",
    4: "no usable GPU",
}


def schedule(
    command: RunCommand,
    jobs: list[runner.Job],
    shard: shards.Shard | None,
    progress: runner.Progress,
    documents: list[Any],
    *,
    several: bool,
) -> list[runner.Job]:
    """The jobs of this shard, the host-bound benchmarks in jobs of their own (serial)."""
    from kernelwatch import hostbound, runner
    from kernelwatch.results import HOST_BOUND_COUNTER
    from kernelwatch import merge as shards
    from kernelwatch.verdict import SUITE_CONFIG

    names = [name for job in jobs for name in job.names]
    serial = hostbound.select(names, command.config.serial, documents)
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
        serial = [name for name in serial if name in chosen]
    if serial:
        jobs = runner.split_serial(jobs, serial)
        if several:
            if command.split:
                where = "measure on GPU 1 of the split only"
            elif command.host_bound_on == "first":
                where = (
                    "measure on the first GPU of each model only (--host-bound-on each: on "
                    "every GPU)"
                )
            else:
                where = "measure one GPU at a time"
            progress.say(
                f"kernelwatch: {len(serial)} host-bound benchmark(s) (counter "
                f"{HOST_BOUND_COUNTER}, or [run] serial in {SUITE_CONFIG}) {where}, with no build "
                "and no other host-bound benchmark running on this host (the GPU-bound ones of "
                "other GPUs measure on)"
            )
    return jobs


def _split(
    command: RunCommand,
    jobs: list[runner.Job],
    chosen: list[gpus.Gpu],
    context: Mapping[str, Any],
    documents: list[Any],
) -> dict[gpus.Gpu, gpus.Share]:
    """--split: the GPUs share the jobs at run time (runner.sharing), GPU k of N taking the
    k-th part first (GPU 1 the host-bound part), and each GPU's result is shard k/N of a plan
    that only this run's parts have. A split fixed before the run left two H200s' shards 68
    and 88 s apart, one card taking 1.49x the other's samples; shared at run time, four H200s
    took 0.46x the time of one (docs/running.md)."""
    import functools
    import secrets

    from kernelwatch import completeness, gpus
    from kernelwatch import merge as shards
    from kernelwatch.runner import sharing

    names = [name for job in jobs for name in job.names]
    parts = sharing.parts(jobs, shards.durations(documents), len(chosen))
    claims = sharing.Claims(parts, len(chosen))
    plan = shards.plan_key(names, len(chosen), shared=secrets.token_hex(8))
    mine = {key: v for key, v in context.items() if key != completeness.WHOLE_BUILD_KEY}
    return {
        gpu: gpus.Share(
            (),
            mine
            | {
                shards.SHARD_KEY: str(shards.Shard(k, len(chosen))),
                shards.PLAN_KEY: plan,
                shards.GPU_INDEX_KEY: str(gpu.index),
            },
            functools.partial(claims.take, k),
        )
        for k, gpu in enumerate(chosen, start=1)
    }


def _gpu_out(out: Path | None, gpu: gpus.Gpu, stamp: str) -> Callable[[str | None], Path]:
    """Where one GPU's result goes, given its GPU slug: beside --out, else in results/."""
    from kernelwatch import gpus

    return lambda slug: (
        gpus.out_for(out, gpu) if out else default_out(slug, f"gpu{gpu.index}-{stamp}")
    )


def _as_baseline(
    settings: runner.RunSettings,
    said: bool | None,
    progress: runner.Progress,
    gpu: gpus.Gpu | None = None,
) -> runner.RunSettings:
    """The settings with random interleaving as the baseline the run is judged by was measured
    (`said`: _interleaving; None where --interleave or --no-interleave was given): off,
    warp_shuffle double 64 Mi ran 1.1-1.3 % slower on four H200 cards (docs/measurement.md,
    "An anchor's two processes"), so a baseline and its runs share it. Where no baseline says
    (none yet, or nvidia-smi cannot name the GPU), on."""
    if said is None or said == settings.interleave:
        return settings
    where = f"{gpu.label}: " if gpu is not None else ""
    progress.say(
        f"kernelwatch: {where}random interleaving {'on' if said else 'off'}, as the baseline was "
        "measured (--interleave or --no-interleave chooses)"
    )
    return dataclasses.replace(settings, interleave=said)


def _interleaving(command: RunCommand, slug: str | None) -> bool | None:
    """Whether the baseline of the run was measured with random interleaving; None where none
    says: --baseline's context, else the manifest of the project's baseline for `slug` (the
    GPU's, as nvidia-smi names it)."""
    from kernelwatch import baseline as baselines

    if command.interleave is not None:
        return None  # (chosen: nothing to read)
    if command.baseline is not None:
        context = baselines.result_documents(command.baseline)[0].get("context") or {}
        said = context.get("kernelwatch_random_interleaving")
    elif command.root is not None and slug is not None:
        try:
            entry = baselines.find(command.root, slug)
        except InputError:  # judged, it is refused then (exit 2, naming it); --no-compare may
            entry = None  # be measuring the baseline that replaces it
        said = entry.manifest.get("random_interleaving") if entry is not None else None
    else:
        said = None
    return {"true": True, "false": False}.get(str(said).lower())


def _measure(
    command: RunCommand,
    jobs: list[runner.Job],
    settings: runner.RunSettings,
    context: Mapping[str, Any],
    progress: runner.Progress,
    label: str = "",
    claim: Callable[[], Sequence[runner.Job]] | None = None,
) -> tuple[runner.SuiteRun, anchors.Ahead | None]:
    """The run's process rounds on one GPU, with its anchor's between them where the run is
    anchored (decided after the first round, once it has said which card this is and, with
    `claim`, which parts of a shared suite it took). A shared suite that cannot be anchored
    is measured a part at a time (Measuring.by_part): no anchor's rounds come between."""
    from kernelwatch import anchor as anchors
    from kernelwatch import runner

    with runner.Measuring(
        jobs, settings, progress=progress, label=label, context=context, keep_going=True,
        claim=claim,
    ) as current:  # fmt: skip
        if claim is not None and current.first_part():
            if _surely_unanchored(command, current.jobs, current.first_context()):
                current.by_part()
                return current.finish(), None
        current.round(0)
        jobs = current.jobs
        context = current.first_context()
        found = _anchor_baseline(command, jobs, context) if command.anchor is not None else None
        anchoring = None
        if command.anchor is not None and found is not None:
            base, against = found
            anchoring = anchors.ahead(
                command.anchor, settings, jobs, command, base, against, context, progress
            )
        anchoring = anchors.measure_beside(current, anchoring, settings, progress)
        return current.finish(), anchoring


def _surely_unanchored(
    command: RunCommand, jobs: list[runner.Job], context: dict[str, Any]
) -> bool:
    """Whether a run whose first part has run (`context`) cannot be anchored: it is not
    judged, or not with --anchor, or its baseline holds this card (anchor.wanted). Where the
    baseline is not found yet, it may be."""
    from kernelwatch import anchor as anchors

    if command.anchor is None or command.judging is None:
        return True
    found = _anchor_baseline(command, jobs, context)
    return (
        found is not None and anchors.wanted(command.anchor.mode, found[0].context, context) is None
    )


def _anchor_baseline(
    command: RunCommand, jobs: list[runner.Job], context: dict[str, Any]
) -> tuple[ResultSet, baselines.Against] | None:
    """After the first round (`context`: what the result will say of its card and host): the
    baseline an anchor would be measured for. None where the run is not judged, or where the
    baseline cannot be found yet: judging says why, once the result is written."""
    from kernelwatch import baseline as baselines
    from kernelwatch import verdict

    if command.judging is None:
        return None
    names = {name for job in jobs for name in job.names}
    label = str(command.out or default_out(baselines.context_slug(context)))
    try:
        found = verdict.find_baseline(command.root, context, label, names, given=command.baseline)
        return verdict.baseline_side(found, f"holds none of the {len(names)} benchmarks"), found
    except InputError:
        return None


def _finish(
    command: RunCommand,
    settings: runner.RunSettings,
    result: runner.SuiteRun,
    out: Path | None,
    progress: runner.Progress,
    outputs: Outputs,
    plan: anchors.Ahead | None = None,
) -> int:
    """Write the result; judge it against its GPU's baseline, or the anchor `plan` measured
    beside it (verdict: compare, confirm)."""
    from kernelwatch import anchor as anchors
    from kernelwatch import baseline as baselines
    from kernelwatch import noise as noises
    from kernelwatch import reruns, verdict
    from kernelwatch.loading import from_documents
    from kernelwatch.results import UNCONFIRMED_KEY
    from kernelwatch.verdict import write_report

    document, jobs = result.document, list(result.jobs)
    context = document["context"]
    slug = baselines.context_slug(context)
    # A default name is the second the run ended: another run's result of that second is kept.
    out = write_json_atomic(out or default_out(slug), document, make_parents=True, new=not out)
    count = sum(len(job.names) for job in jobs)
    each = f", {settings.processes} processes each," if settings.processes > 1 else ""
    progress.say(
        f"kernelwatch: wrote {out} ({count} benchmarks from "
        f"{len({job.binary for job in jobs})} binaries{each} in {result.seconds:.0f} s)"
    )
    judging = command.judging
    if judging is None:
        return 0

    found = verdict.find_baseline(
        command.root,
        context,
        str(out),
        {name for job in jobs for name in job.names},
        given=command.baseline,  # --filter, --shard and --bench are in the context
    )
    base = verdict.baseline_side(found, f"holds none of the {count} benchmarks that ran")
    contender = from_documents(str(out), [document])
    report = verdict.judge_result(base, contender, judging, found)  # as compare and report do
    committed = anchors.Committed(base, found, report)
    floor = noises.process_floor(base, found.noise) if plan is not None else None
    judged = anchors.judge(plan, committed, judging, document, progress, floor)
    if command.confirm and command.anchor is not None:
        judged = anchors.again(
            plan,
            command.anchor,
            judged,
            committed,
            settings,
            jobs,
            command,
            anchor_again_path(out),
            progress,
            floor,
            document,
            judging,
        )
    if anchors.CONTEXT_KEY in context:
        write_json_atomic(out, document, make_parents=True)  # with the anchor's context key

    rerun = reruns.Reruns(
        jobs, settings, progress, command.confirm, out, confirm_path, command.command_line
    )
    report = anchors.confirm(judged, committed, judging, rerun, command.confirm)
    unconfirmed = sorted(c.name for c in report.comparisons if c.confirmed is False)
    if unconfirmed:  # (as compare and report are to read them: verdict.as_run_judged)
        commit = base.context.get("kernelwatch_git_commit")
        context[UNCONFIRMED_KEY] = {"commit": commit, "benchmarks": unconfirmed}
        write_json_atomic(out, document, make_parents=True)
    status = write_report(report, outputs, command="run")
    return max([status, *rerun.statuses])  # a re-run that failed: 3 (4: the GPU went away)


def outputs_of(command: RunCommand, chosen: list[gpus.Gpu] | None) -> list[Output]:
    """Every path the run writes, for files.check_outputs: the result (per GPU with --gpus;
    by default in results/, made when missing), its confirming re-runs and the anchor measured
    again for them, the report files."""
    from kernelwatch import gpus
    from kernelwatch.verdict import report_outputs

    found = []
    if command.out is None:
        found.append(Output("--out", default_out(None).parent, folder=True, make_parents=True))
    for gpu in chosen if chosen is not None else [None]:
        out = command.out if gpu is None or command.out is None else gpus.out_for(command.out, gpu)
        if out is not None:
            found.append(Output("--out", out, make_parents=True))
        if command.judging is None:
            continue  # --no-compare: the result only
        if out is not None:
            found += [
                Output(f"--out's re-run {k}", confirm_path(out, k), make_parents=True)
                for k in range(1, command.confirm + 1)
            ]
            if command.confirm and command.anchor is not None:
                found.append(
                    Output(
                        "--out's anchor measured again", anchor_again_path(out), make_parents=True
                    )
                )
        found += report_outputs(
            command.outputs if gpu is None else gpus.outputs_for(command.outputs, gpu)
        )
    return found


def inputs_of(command: RunCommand) -> list[Input]:
    """What the run reads: the binaries named, the baselines folder (a committed baseline is
    changed only by `baseline update`), the settings file, the baseline named and its stored
    noise."""
    from kernelwatch import noise

    found = [Input("--bench", bench) for bench in command.bench]
    found.append(Input("the baselines folder", command.root))
    found.append(command.config.read())
    if command.baseline is not None:
        found.append(Input("--baseline", command.baseline))
        found.append(Input("the baseline's noise.json", noise.beside(command.baseline)))
    return found


def confirm_path(out: Path, k: int) -> Path:
    """Where the k-th confirming re-run of the result `out` goes."""
    return tagged(out, f".confirm-{k}")


def anchor_again_path(out: Path) -> Path:
    """Where the baseline's commit measured again for the re-runs of `out` goes (anchor.again)."""
    return tagged(out, ".anchor-again")


def default_out(slug: str | None, tail: str | None = None) -> Path:
    from kernelwatch import runner

    return (
        Path("results")
        / f"kernelwatch-run-{slug or 'unknown-gpu'}-{tail or runner.timestamp()}.json"
    )
