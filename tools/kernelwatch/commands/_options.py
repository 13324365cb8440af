"""The options that several commands share, and the typed values each command builds from
them at its edge (asv's common_args). A command module adds the groups it has and turns its
namespace into its own settings right away; nothing past the edge sees argparse.

The leading underscore keeps this module out of command discovery.

Every option that two commands share lives here, in one place.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.config import Config, parse_fraction
from kernelwatch.errors import InputError, compile_regex
from kernelwatch.files import json_text, write_output

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import ab
    from kernelwatch import anchor as anchors
    from kernelwatch import baseline as baselines
    from kernelwatch import runner
    from kernelwatch.results import Metric, resolve_metric
    from kernelwatch.compare import Settings
    from kernelwatch.verdict import Outputs


def add_compare_options(parser: argparse.ArgumentParser, reports: bool = True) -> None:
    """The options that decide and show verdicts; `run` and `ab` share them. Without `reports`
    (bisect: it writes each step's compare.txt, no report of its own) not --format, --junit,
    --markdown, --json and --color, which would be taken and never written."""
    add_metric_options(parser)
    add_decision_options(parser)
    if reports:
        add_report_options(parser)
    add_gate_options(parser)


def add_metric_options(parser: argparse.ArgumentParser, what: str = "compare") -> None:
    """--metric and its direction; `report` and `export` share them (what: "compare and plot")."""
    add_metric_option(
        parser,
        f"what to {what}: time (= real_time, the manual/GPU time; default), cpu_time, "
        "or a counter such as bytes_per_second, or ceiling_fraction (bandwidth as a fraction "
        "of the run's own measured copy ceiling: compares two cards of one model evenly)",
    )
    direction = parser.add_mutually_exclusive_group()
    direction.add_argument(
        "--higher-is-better",
        dest="higher_is_better",
        action="store_true",
        default=None,
        help="the counter is better when larger (default for *_per_second and *_fraction)",
    )
    direction.add_argument(
        "--lower-is-better",
        dest="higher_is_better",
        action="store_false",
        default=None,  # not store_false's True: parser.get_default says None, as parsing does
        help="the counter is better when smaller (default for times)",
    )


def add_metric_option(parser: argparse.ArgumentParser, help: str) -> None:
    """--metric alone (`history`: the direction follows from the name)."""
    parser.add_argument("--metric", default="time", type=non_empty, help=help)


def add_decision_options(parser: argparse.ArgumentParser) -> None:
    """The options that set each benchmark's limit and the test; `report` and `selftest` share
    them."""
    add_threshold_options(parser)
    parser.add_argument(
        "--min-repetitions",
        type=int,
        metavar="N",
        help="fewer values on a side gives UNSURE (default 3)",
    )
    parser.add_argument(
        "--noise-multiplier",
        type=float,
        metavar="K",
        help=f"noise floor = K x the benchmark's relative noise (default "
        f"{defaults.DEFAULT_NOISE_MULTIPLIER:g})",
    )
    add_config_option(parser)


def add_threshold_options(
    parser: argparse.ArgumentParser,
    threshold_help: str = "smallest change that counts, as 0.01 or 1%% (default "
    f"{defaults.DEFAULT_THRESHOLD * 100:g}%%); config rules override it per benchmark; never "
    "below the noise floor",
    alpha_help: str = f"false discovery rate (default {defaults.DEFAULT_ALPHA:g})",
) -> None:
    """--threshold and --alpha; `history changes` has them with its own defaults."""
    parser.add_argument("--threshold", metavar="T", type=non_empty, help=threshold_help)
    parser.add_argument("--alpha", type=float, help=alpha_help)


def add_config_option(
    parser: argparse.ArgumentParser,
    help: str = "TOML settings file, in place of the suite's kernelwatch.toml in the baselines "
    "folder (read by default, when there is one); format: docs/compare.md",
) -> None:
    """--config; read with verdict.suite_config (default: the suite's kernelwatch.toml)."""
    parser.add_argument("--config", metavar="FILE", type=non_empty, help=help)


def add_gpu_mismatch_option(parser: argparse.ArgumentParser, help: str) -> None:
    """--allow-gpu-mismatch (`compare`, `report`); `run` never compares across models."""
    parser.add_argument("--allow-gpu-mismatch", action="store_true", help=help)


# Where a default path lies (kernelwatch.project; docs/running.md, "The project").
IN_PROJECT = "in the project: the nearest folder, from here up, holding baselines/ or .git"


def add_baselines_option(
    parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup,
    help: str = f"the baselines folder (default: baselines, {IN_PROJECT})",
) -> None:
    """--baselines; read with baselines_root (`run`, `report`, `selftest`, `baseline`)."""
    parser.add_argument("--baselines", metavar="DIR", type=non_empty, help=help)


def baselines_root(args: argparse.Namespace) -> Path:
    """--baselines, else baselines/ in the project (refused where there is none)."""
    from kernelwatch import baseline as baselines

    return Path(args.baselines) if args.baselines else baselines.default_root()


def baselines_root_if_any(args: argparse.Namespace) -> Path | None:
    """--baselines, else baselines/ in the project, or None outside any project (for what
    reads the folder only when it is there: the suite's kernelwatch.toml)."""
    from kernelwatch import baseline as baselines

    return Path(args.baselines) if args.baselines else baselines.found_root()


def non_empty(value: str) -> str:
    """argparse's type of a value that may not be empty: `--config "$UNSET"` was taken as not
    given, and the suite's own file was read instead."""
    if not value:
        raise argparse.ArgumentTypeError("an empty value")
    return value


def output_file(value: str) -> str:
    """argparse's type of every output FILE: a trailing slash names a folder, which Path drops
    (`-o pages/` wrote a file named pages, `--json out/` one named out), `-` no file (`export
    -o -` wrote a file named -, where the convention is stdout: the option left out), and not
    empty."""
    if value.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{value}: a folder (it ends with /); name the file")
    if value == "-":
        raise argparse.ArgumentTypeError(
            "-: names no file (what a command prints goes to stdout without this option)"
        )
    return non_empty(value)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """What is printed and which report files are written."""
    parser.add_argument(
        "--format",
        choices=("table", "markdown", "json"),
        default="table",
        help="what to print on stdout (default table)",
    )
    parser.add_argument(
        "--junit", metavar="FILE", type=output_file, help="also write a JUnit XML report to FILE"
    )
    parser.add_argument(
        "--markdown",
        metavar="FILE",
        type=output_file,
        help="also write the Markdown report to FILE (for $GITHUB_STEP_SUMMARY)",
    )
    parser.add_argument(
        "--json",
        metavar="FILE",
        type=output_file,
        help="also write the JSON report to FILE (docs/compare.md)",
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the table (auto: only on a terminal, and not with NO_COLOR set)",
    )


def add_gate_options(parser: argparse.ArgumentParser) -> None:
    """What may fail without failing the command (gates)."""
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="a benchmark missing from the contender does not fail",
    )
    parser.add_argument(
        "--allow-errors",
        action="store_true",
        help="a benchmark erroring in the contender does not fail",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="an unverified slowdown (too few repetitions for the test to decide) fails at any "
        "size, not only from 2x slower",
    )


def add_list_format_option(parser: argparse.ArgumentParser, schema: str) -> None:
    """`--format table|json` of what lists or shows stored things (baseline and history list
    and show); compare's --format without markdown."""
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help=f"what to print on stdout (default table; json: one document, schema in {schema})",
    )


def print_document(document: Any) -> int:
    """--format json: the document on stdout, strict JSON, one document; exit status 0."""
    write_output(json_text(document))
    return 0


def add_gpus_option(parser: argparse.ArgumentParser) -> None:
    """--gpus; `selftest` shares it."""
    parser.add_argument(
        "--gpus",
        type=non_empty,  # (`--gpus "$UNSET"` measured on the default GPU alone)
        metavar="all|LIST",
        help="measure on these GPUs at once (all, or nvidia-smi indices or UUIDs, comma-"
        "separated), one process per GPU, each with its own result file (OUT-gpu<index>.json) "
        "and report; host-bound benchmarks measure one GPU at a time (run: on the first GPU of "
        "each model only, --host-bound-on); the exit status is the worst GPU's",
    )


def add_process_timeout_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--process-timeout",
        type=float,
        metavar="S",
        help="kill a benchmark process (its whole process group) that runs longer than S "
        "seconds and report it as hung (default: never; binaries on kernelwatch's harness end "
        "themselves when a benchmark makes no progress, --kernelwatch_hang_timeout, 120 s); "
        "for plain Google Benchmark binaries (--bench)",
    )


def add_anchor_options(parser: argparse.ArgumentParser) -> None:
    """`run`'s anchoring (anchor.py; docs/running.md, "Anchoring")."""
    parser.add_argument(
        "--anchor",
        choices=defaults.ANCHOR_MODES,
        default="auto",
        help="also measure the baseline's commit (its manifest's) on this card and judge "
        "against that: auto, when the baseline holds no run on this card; the committed "
        "baseline against it is a finding about the runner, never failing (default auto; "
        "docs/running.md, Anchoring)",
    )
    parser.add_argument(
        "--anchor-max-age",
        metavar="HOURS",
        default=f"{defaults.ANCHOR_MAX_AGE_HOURS:g}",
        help="reuse an anchor measured on this card, host and settings while younger than this "
        "(hours, or 90m, 2d; default %(default)s, a prior: a card's drift was measured over "
        f"{defaults.ANCHOR_AGE_MEASURED_HOURS:g} h at the most; a regression against a reused "
        "anchor is confirmed against the commit measured again)",
    )


def anchoring(args: argparse.Namespace, root: Path | None) -> anchors.Request | None:
    """`run`'s --anchor and --anchor-max-age; None where nothing is anchored."""
    from kernelwatch import anchor as anchors

    ruled_out = {"--no-compare": args.no_compare, "--baseline": args.baseline}
    ruled_out["--bench"] = args.bench
    mode = anchors.mode(args.anchor, ruled_out)
    max_age_s = anchors.max_age(args.anchor_max_age)
    if mode == "never" or root is None:
        return None
    return anchors.Request(mode, max_age_s, root)


def add_suite_options(parser: argparse.ArgumentParser, bench_help: str) -> None:
    """How the suite's binaries run here: the run options, the process options (--processes,
    --precision, --top-ups), --build-dir and --bench; `run` and `selftest` share them."""
    add_run_options(parser, repetitions=defaults.RUN_REPETITIONS)
    add_process_options(parser)
    add_binary_options(parser, bench_help)


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
        action=_Typed,
        metavar="N",
        help=f"{repetitions_help} (default {repetitions})",
    )
    parser.add_argument(
        "--max-time",
        type=float,
        default=defaults.MAX_TIME,
        metavar="S",
        help="seconds of sampling per repetition at most (--kernelwatch_max_time; default "
        f"{defaults.MAX_TIME:g})",
    )
    interleaving = parser.add_mutually_exclusive_group()
    interleaving.add_argument(
        "--interleave",
        dest="interleave",
        action="store_const",
        const=True,
        help="--benchmark_enable_random_interleaving on (the default; `run`'s default: as "
        "this GPU's baseline was measured)",
    )
    interleaving.add_argument(
        "--no-interleave",
        dest="interleave",
        action="store_const",
        const=False,
        help="--benchmark_enable_random_interleaving off",
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
        type=non_empty,
        metavar="DIR",
        help="the CMake build folder whose bench/kernelwatch_bench_* binaries run "
        f"(default: build, {IN_PROJECT})",
    )
    parser.add_argument(
        "--bench", type=non_empty, metavar="PATH", action="append", default=[], help=bench_help
    )


def add_process_options(parser: argparse.ArgumentParser) -> None:
    """--processes, --precision and --top-ups: how many processes measure each benchmark."""
    parser.add_argument(
        "--processes",
        type=int,
        default=defaults.PROCESSES,
        metavar="K",
        help="run each binary as K separate processes, interleaved across binaries, the "
        f"repetitions split between them (default {defaults.PROCESSES}): the spread "
        "between processes is the noise that matters",
    )
    parser.add_argument(
        "--precision",
        type=float,
        default=defaults.PRECISION,
        metavar="F",
        help="the relative standard error of each benchmark's median to aim for (default "
        f"{defaults.PRECISION:g}): a benchmark above it after the processes runs again "
        "in as many fresh processes, with as many repetitions (a top-up)",
    )
    parser.add_argument(
        "--top-ups",
        type=int,
        default=defaults.TOP_UPS,
        metavar="N",
        help=f"top-ups at most (default {defaults.TOP_UPS}; 0: none)",
    )


def add_ab_options(parser: argparse.ArgumentParser, out_help: str) -> None:
    """How two commits are built and run; `bisect` shares them."""
    add_run_options(
        parser,
        repetitions=defaults.AB_REPETITIONS,
        repetitions_help="--benchmark_repetitions of each round's process",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=defaults.AB_ROUNDS,
        action=_Typed,
        metavar="K",
        help=f"runs of each side, alternating A B B A ... (default {defaults.AB_ROUNDS})",
    )
    parser.add_argument(
        "--confirm",
        type=int,
        default=defaults.AB_CONFIRM_ROUNDS,
        metavar="K",
        help="measure each REGRESSION in K more rounds of each side (only those benchmarks) and "
        "judge all rounds again: it fails only if it still regresses "
        f"(default {defaults.AB_CONFIRM_ROUNDS}; 0: none)",
    )
    parser.add_argument(
        "--repo",
        type=non_empty,
        metavar="DIR",
        default=".",
        help="the git repository (default: the current one)",
    )
    parser.add_argument(
        "--bench",
        type=non_empty,
        metavar="PATH",
        action="append",
        default=[],
        help="a binary to run, relative to each side's build folder (repeatable; default: "
        "bench/kernelwatch_bench_*)",
    )
    parser.add_argument("--out", type=non_empty, metavar="DIR", help=out_help)
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


# ------------------------------------------------------------- typed values, at the edge


_DEFAULTS = "_kernelwatch_defaults"
_TYPED = "_kernelwatch_typed"


class _Typed(argparse.Action):
    """Stores the value and that it was typed (defaulted): `--rounds 3` is the user's choice
    even where 3 is the default."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, _TYPED, getattr(namespace, _TYPED, frozenset()) | {self.dest})


def defaulted(args: argparse.Namespace, *dests: str) -> frozenset[str]:
    """Those of `dests` (options stored by _Typed) that were not typed: at their defaults."""
    return frozenset(dests) - getattr(args, _TYPED, frozenset())


def keep_defaults(parser: argparse.ArgumentParser, flags: Mapping[str, str]) -> None:
    """What each of `flags` ({dest: flag}) is when not given, kept in the parsed namespace for
    first_given (a number for --confirm or --repetitions, not None); after the options."""
    parser.set_defaults(**{_DEFAULTS: {key: parser.get_default(key) for key in flags}})


def first_given(args: argparse.Namespace, flags: Mapping[str, str]) -> str | None:
    """The first of `flags` (kept with keep_defaults) given a value other than its default.
    Compared with the default alone: 0 and False are values (--confirm 0, --lower-is-better),
    not "not given"."""
    defaults = getattr(args, _DEFAULTS)
    return next((f for k, f in flags.items() if getattr(args, k) != defaults[k]), None)


def slowdowns(text: str | None, default: Sequence[float]) -> list[float]:
    """--slowdowns: fractions or percentages, comma-separated (selftest)."""
    if text is None:
        return list(default)
    levels: list[float] = []
    for part in text.split(","):
        if not part.strip():
            continue
        level = parse_fraction(part.strip(), "--slowdowns")
        if level <= 0:
            raise InputError(f"--slowdowns {part.strip()}: a slowdown must be above 0")
        if any(abs(level - other) < 1e-12 for other in levels):
            raise InputError(f"--slowdowns {part.strip()}: given twice")
        levels.append(level)
    if not levels:
        raise InputError(f"--slowdowns {text!r}: no level")
    return sorted(levels)


def rounds(args: argparse.Namespace) -> tuple[int, int]:
    """--rounds and --confirm (ab, bisect): the rounds of each side, and the confirming ones."""
    if args.rounds < 1:
        raise InputError(f"--rounds {args.rounds}: must be at least 1")
    if args.confirm < 0:
        raise InputError(f"--confirm {args.confirm}: must be 0 or more")
    return args.rounds, args.confirm


def metric(args: argparse.Namespace) -> Metric:
    """From add_metric_options."""
    from kernelwatch.results import resolve_metric

    return resolve_metric(args.metric, args.higher_is_better)


def settings(args: argparse.Namespace, config: Config, **gates: bool) -> Settings:
    """Compare's settings from add_decision_options over the suite's `config`; `gates` as the
    command has them (gates())."""
    from kernelwatch import verdict

    return verdict.settings(
        config,
        threshold=args.threshold,
        alpha=args.alpha,
        min_repetitions=args.min_repetitions,
        noise_multiplier=args.noise_multiplier,
        **gates,
    )


def gates(args: argparse.Namespace, allow_gpu_mismatch: bool = False) -> dict[str, bool]:
    """What may fail without failing the command, from add_gate_options."""
    return {
        "allow_missing": args.allow_missing,
        "allow_errors": args.allow_errors,
        "allow_gpu_mismatch": allow_gpu_mismatch,
        "strict": args.strict,
    }


def outputs(args: argparse.Namespace) -> Outputs:
    """From add_report_options."""
    from kernelwatch.verdict import Outputs

    return Outputs(
        format=args.format,
        junit=args.junit,
        markdown=args.markdown,
        json=args.json,
        color=args.color,
    )


def run_settings(args: argparse.Namespace, **more: Any) -> runner.RunSettings:
    """From add_run_options (one process, no top-ups); `more`: the fields the command adds.
    --filter is checked first (a bad one would otherwise meet the GPU check first)."""
    from kernelwatch import runner

    if args.filter is not None and not args.filter.strip():
        raise InputError("--filter: empty regex")
    if args.filter is not None:
        compile_regex(args.filter, "--filter")
    return runner.RunSettings(
        repetitions=args.repetitions,
        max_time=args.max_time,
        interleave=args.interleave is not False,  # (None: `run` may follow its baseline)
        extra_args=tuple(args.bench_arg),
        verbose=args.verbose,
        **more,
    )


def suite_run_settings(args: argparse.Namespace, **more: Any) -> runner.RunSettings:
    """From add_suite_options: the run options and add_process_options's."""
    return run_settings(
        args, processes=args.processes, precision=args.precision, top_ups=args.top_ups, **more
    )


def judged_by(settings: runner.RunSettings, compare: Settings) -> runner.RunSettings:
    """The run's settings once it is known how its result will be compared: the top-ups aim
    each median at the precision its threshold needs (runner/precision.target)."""
    return dataclasses.replace(settings, threshold=compare.threshold, thresholds=compare.rules)


# Parsers: every command's parser is made here (its text keeps its line breaks).


def add_parser(subparsers: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """A (sub)command parser whose description and epilog keep their own line breaks."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, formatter_class=argparse.RawDescriptionHelpFormatter, **options
    )
    return parser


def add_actions(parser: argparse.ArgumentParser) -> Any:
    """The actions of a command that does nothing alone (`baseline`, `history`): without one
    it says which there are, in one line, and exits 2."""
    actions = parser.add_subparsers(title="actions", metavar="ACTION")
    parser.set_defaults(handler=lambda args: _no_action(parser, list(actions.choices)))
    return actions


def _no_action(parser: argparse.ArgumentParser, actions: list[str]) -> int:
    try:
        parser.error(f"name an action: {', '.join(actions)}")  # (the cli's one-line usage error)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    return 2
