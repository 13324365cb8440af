"""`kernelwatch baseline update|list|show`: the committed results, one per GPU model."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_actions, add_parser
from kernelwatch.errors import InputError
from kernelwatch.files import one_writer
from kernelwatch.names import short_commit

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import baseline as baselines
    from kernelwatch.compare import DEFAULT_NOISE_MULTIPLIER, Settings, Verdict, compare
    from kernelwatch.gbench import read_json
    from kernelwatch.loading import from_documents
    from kernelwatch.render import aligned, summary_line
    from kernelwatch.results import resolve_metric

DESCRIPTION = """\
The baselines: one result per GPU model in baselines/<gpu-slug>/ (result.json with the
repetitions, noise.json with each benchmark's measured noise, manifest.json with commit, date,
driver, CUDA runtime, the producing command and the history of updates). `kernelwatch run`
compares with the baseline of its exact GPU model, never with another one. See
baselines/README.md and docs/running.md."""

EPILOG = """\
exit status:
  0  done
  2  bad input or refused (errors or skipped benchmarks, no GPU in the context, another GPU
     model than the folder's, too few repetitions, a part of the suite or benchmarks dropped
     without --filter or --drop-missing, a run given twice, with --distinct-cards a card
     measured twice, unknown baseline, no such --baselines folder): one line on stderr,
     "kernelwatch: error: ..."
"""

UPDATE_DESCRIPTION = """\
Write or update the baseline of the GPU named in RESULT's context (baselines/<gpu-slug>/):
result.json, noise.json (each benchmark's noise: the spread between the result's processes,
the robust CV of its repetitions, the harness's noise counter, its group's median; the floor
of its limit in every later comparison) and manifest.json, as a whole: the new folder is
written beside the old one and swapped in with one atomic rename, so a reader or a killed
update finds the old baseline or the new one, never a mix (what a killed update left beside it
is removed by the next one; a second update of the folder waits for the first). Refuses runs
slowed down on purpose (--kernelwatch_inject, the selftest's), results with errors or skipped
benchmarks or whose benchmark processes failed (run's partial result), without GPU context,
from another GPU model than the folder's, or with fewer repetitions than --min-repetitions.
With --filter, only the matching benchmarks are replaced (or added); the others are kept.
Without it the result must be a whole run: one that ran a part of the suite (run --filter, a
shard) is refused, and so is one that lacks benchmarks the baseline holds, unless
--drop-missing. The same file or run given twice is refused. Prints how many cards and hosts
the runs were measured on (the spreads between cards and hosts come from distinct ones: runs
of one card pool as more processes of it) and what moved against the previous baseline."""

SHOWN_CHANGES = 40


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "baseline",
        help="write, list and show the per-GPU baselines",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    actions = add_actions(parser)

    update = add_parser(
        actions,
        "update",
        help="write or update this GPU's baseline from a result file",
        description=UPDATE_DESCRIPTION,
        epilog=EPILOG,
    )
    update.add_argument(
        "result",
        metavar="RESULT.json",
        nargs="+",
        type=options.non_empty,
        help="a result of kernelwatch run (or a Google Benchmark or nvbench result that names "
        "its GPU); several runs of one build on other cards or hosts are pooled, and the "
        "spread between them is stored per level (docs/measurement.md)",
    )
    update.add_argument(
        "--filter",
        metavar="REGEX",
        # (an empty one, `--filter "$UNSET"`, was taken as none: a whole update instead)
        type=options.non_empty,
        help="replace only the benchmarks whose name matches (Python regex, searched)",
    )
    update.add_argument(
        "--min-repetitions",
        type=int,
        metavar="N",
        help=f"refuse benchmarks with fewer repetitions (default "
        f"{defaults.BASELINE_MIN_REPETITIONS}, not derived from a measurement)",
    )
    update.add_argument(
        "--drop-missing",
        action="store_true",
        help="a whole update: remove the baseline's benchmarks that the result lacks (default: "
        "refuse, naming them)",
    )
    update.add_argument(
        "--compress",
        action="store_true",
        help="write the result gzip-compressed (result.json.gz, about a ninth of the size: a "
        "pooled baseline of several cards); a compressed baseline stays so at later updates",
    )
    update.add_argument(
        "--distinct-cards",
        action="store_true",
        help="refuse runs of one card (or that name none) pooled as runs of several: each run "
        "must be a card of its own, as the baseline workflow's are meant to be",
    )
    update.add_argument(
        "--dry-run", action="store_true", help="check and show what would move; write nothing"
    )
    options.add_baselines_option(
        update,
        f"the baselines folder (default: baselines, {options.IN_PROJECT}); update refuses "
        "one that does not exist",
    )
    update.set_defaults(handler=update_main)

    listing = add_parser(
        actions,
        "list",
        help="the baselines there are",
        description="One line per baseline: slug, GPU, benchmarks, commit, date.",
        epilog=EPILOG,
    )
    options.add_list_format_option(listing, "docs/running.md")
    options.add_baselines_option(listing)
    listing.set_defaults(handler=lambda args: run_list(options.baselines_root(args), args.format))

    show = add_parser(
        actions,
        "show",
        help="one baseline's manifest and summary",
        description="Show a baseline, named by its slug or by a result file measured on its GPU:\n"
        "its manifest, its benchmarks per family, its stored noise per family (and the noisiest\n"
        "benchmarks), and its history.",
        epilog=EPILOG,
    )
    show.add_argument(
        "which", metavar="SLUG|RESULT", type=options.non_empty, help="a slug, or a result file"
    )
    show.add_argument(
        "--noise",
        action="store_true",
        help="list the stored noise of every benchmark, noisiest first",
    )
    options.add_list_format_option(show, "docs/running.md; every benchmark's noise, as --noise")
    options.add_baselines_option(show)
    show.set_defaults(
        handler=lambda args: run_show(
            args.which, args.noise, options.baselines_root(args), args.format
        )
    )


@dataclass(frozen=True)
class UpdateCommand:
    """What `kernelwatch baseline update` was asked to do."""

    results: tuple[str, ...]
    root: Path
    filter: str | None
    min_repetitions: int | None  # None: the default, defaults.BASELINE_MIN_REPETITIONS
    dry_run: bool
    command_line: str
    drop_missing: bool = False
    root_may_create: bool = True  # False for a --baselines other than the checkout's
    compress: bool = False
    distinct_cards: bool = False


def update_main(args: argparse.Namespace) -> int:
    from kernelwatch import baseline as baselines

    return run_update(
        UpdateCommand(
            tuple(args.result),
            options.baselines_root(args),
            args.filter,
            args.min_repetitions,
            args.dry_run,
            args.command_line,
            args.drop_missing,
            baselines.may_create_root(args.baselines),
            args.compress,
            args.distinct_cards,
        )
    )


# Said once by every update the default minimum applies to: no measurement set it (it is what
# one `kernelwatch run` gives a benchmark; docs/compare.md, "Power", says what fewer cost).
NOT_MEASURED = (
    "the minimum of {n} repetitions a benchmark (--min-repetitions) is not derived from a "
    "measurement: it is what one `kernelwatch run` gives each benchmark"
)


def run_update(command: UpdateCommand) -> int:
    from kernelwatch import baseline as baselines

    if command.min_repetitions is not None and command.min_repetitions < 1:
        raise InputError(f"--min-repetitions {command.min_repetitions}: must be at least 1")
    baselines.check_root(command.root, may_create=command.root_may_create)
    if not command.dry_run:
        command.root.mkdir(exist_ok=True)  # (the checkout's own: its parent is there)
    with one_writer(command.root):  # each update builds on the baseline it replaces
        return _update(command)


def _update(command: UpdateCommand) -> int:
    from kernelwatch import baseline as baselines
    from kernelwatch import render

    given = command.min_repetitions
    default = given is None
    minimum = defaults.BASELINE_MIN_REPETITIONS if given is None else given
    try:
        update = baselines.prepare_update(
            command.root,
            [Path(r) for r in command.results],
            filter=command.filter,
            min_repetitions=minimum,
            command=command.command_line,
            drop_missing=command.drop_missing,
            compress=command.compress,
            distinct_cards=command.distinct_cards,
        )
    except baselines.TooFewRepetitions as exc:
        if not default:
            raise
        raise InputError(f"{exc}; {NOT_MEASURED.format(n=minimum)}") from None
    for warning in update.warnings:  # (they quote result files: an escape stays text)
        print(f"kernelwatch: warning: {render.visible(warning)}", file=sys.stderr)
    manifest = update.manifest
    taken = len(baselines.groups(update.replaced["benchmarks"]))
    gpu = baselines.Entry(update.entry.slug, update.entry.directory, manifest).gpu
    print(
        f"baseline {update.entry.slug} ({gpu}): "
        f"{taken} benchmark(s) from {', '.join(command.results)} (commit {short_commit(manifest['commit'])}, "
        f"{manifest['history'][-1]['repetitions']} repetitions); {manifest['benchmarks']} in all"
    )
    print(f"runs: {update.units}")
    if default:
        print(f"note: {NOT_MEASURED.format(n=minimum)}")
    _print_moves(update, command)
    for note in update.notes:
        print(f"note: {note}")
    if command.dry_run:
        print("dry run: nothing written")
        return 0
    for note in baselines.write(update):
        print(f"note: {note}")
    print(
        f"wrote {update.entry.result}, {update.entry.noise_path.name} and "
        f"{update.entry.manifest_path.name}"
    )
    return 0


def _print_moves(update: baselines.Update, command: UpdateCommand) -> None:
    from kernelwatch import baseline as baselines
    from kernelwatch.compare import Settings, Verdict, compare
    from kernelwatch.loading import from_documents
    from kernelwatch.render import summary_line
    from kernelwatch.results import resolve_metric

    if update.previous is None:
        print("new baseline: there was none for this GPU")
        return
    old_commit = short_commit((update.previous.get("context") or {}).get("kernelwatch_git_commit"))
    previous = update.previous
    if command.filter:
        names = set(baselines.groups(update.replaced["benchmarks"]))
        previous = baselines.restrict(previous, names)
        if not previous["benchmarks"]:
            print("nothing to compare: the previous baseline has none of these benchmarks")
            return
    report = compare(
        from_documents(str(update.entry.result), [previous]),
        from_documents(str(list(command.results)), [update.replaced]),
        resolve_metric("time"),
        Settings(allow_missing=True, allow_errors=True, allow_gpu_mismatch=True),
    )
    moved = [c for c in report.comparisons if c.verdict is not Verdict.SAME]
    print(f"against the previous baseline (commit {old_commit}):")
    width = max((len(c.name) for c in moved[:SHOWN_CHANGES]), default=0)
    for c in moved[:SHOWN_CHANGES]:
        change = "" if c.ratio is None else f"{(c.ratio - 1) * 100:+.1f}%"
        what = c.verdict.value if c.verdict is not Verdict.MISSING else "REMOVED"
        print(f"  {what:<11}  {c.name:<{width}}  {change}")
    if len(moved) > SHOWN_CHANGES:
        print(
            f"  ... and {len(moved) - SHOWN_CHANGES} more (kernelwatch compare OLD NEW shows all)"
        )
    print(f"  {summary_line(report)}")
    for warning in report.warnings:
        print(f"  note: {warning}")


def run_list(root: Path, format: str = "table") -> int:
    from kernelwatch import baseline as baselines
    from kernelwatch.render import aligned

    if not root.is_dir():
        what = "not a folder" if root.exists() else "no such folder"
        raise InputError(f"{root}: {what}, so no baselines; {baselines.HOW_TO_CREATE}")
    found = baselines.entries(root)
    if format == "json":
        return options.print_document(baselines.list_document(root, found))
    if not found:
        print(f"no baselines in {root}; {baselines.HOW_TO_CREATE}")
        return 0
    rows = [("SLUG", "GPU", "BENCHMARKS", "COMMIT", "DATE")]
    for entry in found:
        m = entry.manifest
        rows.append(
            (
                entry.slug,
                entry.gpu,
                str(m.get("benchmarks", "?")),
                short_commit(m.get("commit")) if m else "(no manifest)",
                str(m.get("date") or "?"),
            )
        )
    print("\n".join(aligned(rows)))
    return 0


def run_show(name: str, every_noise: bool, root: Path, format: str = "table") -> int:
    from kernelwatch import baseline as baselines
    from kernelwatch.gbench import read_json

    which = Path(name)
    try:
        a_file = which.is_file()
    except OSError:  # a name too long to be a path (ENAMETOOLONG): taken as a slug
        a_file = False
    if a_file:
        document = read_json(which)
        context = document.get("context") if isinstance(document, dict) else None
        slug = baselines.context_slug(context) if isinstance(context, dict) else None
        if slug is None:
            raise InputError(f"{which}: {baselines.NO_GPU}, so it has no baseline")
    else:
        slug = name
    entry = baselines.find(root, slug)
    if entry is None:
        raise InputError(f"no baseline {slug}: {baselines.available_text(root)}")
    if format == "json":
        return options.print_document(baselines.show_document(entry))
    print("\n".join(baselines.describe(entry, every_noise, defaults.DEFAULT_NOISE_MULTIPLIER)))
    return 0
