"""`kernelwatch compare BASELINE CONTENDER`: the CLI side of compare (arguments, output, exit)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.config import Config
from kernelwatch.errors import InputError
from kernelwatch.files import Input, check_input_file, check_outputs

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import baseline as baselines
    from kernelwatch import noise as noises
    from kernelwatch import verdict
    from kernelwatch.loading import load_all
    from kernelwatch.verdict import Judging, Outputs, report_outputs, write_report

DESCRIPTION = """\
Compare two Google Benchmark or nvbench results, benchmark by benchmark, and say what got
slower.

BASELINE and CONTENDER are Google Benchmark JSON files or nvbench JSON files (--json, or
--jsonbin with its sample files; docs/results.md), or directories whose *.json files are
merged (a benchmark found in several files pools their repetitions, one file per process).
For each benchmark in both, the change of the metric is the ratio of medians, with a
Hodges-Lehmann confidence interval and a Mann-Whitney U p-value over the repetitions,
Benjamini-Hochberg-corrected across all benchmarks; an nvbench state without --jsonbin
samples is judged from its summaries (the ratio of means, Welch's t on them), each such row
marked "from summaries". A REGRESSION needs significance AND a
change beyond the limit: the larger of the threshold and a noise floor, --noise-multiplier x
the benchmark's noise (stored by `baseline update` in noise.json beside a baseline's
result.json, else measured from the baseline's processes and repetitions). Where the test
cannot decide (too few repetitions, or too few to reach alpha after the correction), a change
past the limit is unverified: it fails when its whole interval is 2x worse. The suite fails
too when the confidence interval of its geometric-mean change lies past its limits.
Verdicts: REGRESSION (a slowdown that fails), SLOWER (one that does not: unverified under 2x,
host-bound against another host), IMPROVEMENT, SAME, UNSURE, NEW, MISSING, ERROR.
See docs/compare.md for the exact rules and the JSON schema, docs/measurement.md for the
noise."""

EPILOG = """\
exit status:
  0  no regression
  1  at least one REGRESSION (one unverified, the test unable to decide: from 2x worse, or
     any with --strict); or a regression of the suite (its geomean's interval past its
     limits); or a MISSING benchmark (unless --allow-missing); or an ERROR in the contender
     (unless --allow-errors)
  2  bad input or usage: one line on stderr, "kernelwatch: error: ..."

config file (TOML): --config FILE, else the suite's kernelwatch.toml in the baselines folder
(that BASELINE stands in where it is a GPU's baseline folder or its result, else
baselines/kernelwatch.toml in the project) when there is one, as run, report and ab read it:
  [compare]
  threshold = "1%"              # also alpha, min_repetitions, noise_multiplier
  [[compare.thresholds]]        # first regex found in the name wins
  match = "^BM_Transfer/"
  threshold = "10%"
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "compare",
        help="compare two benchmark results and flag regressions",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument(
        "baseline",
        metavar="BASELINE",
        type=options.non_empty,
        help="result file or directory (reference)",
    )
    parser.add_argument(
        "contender",
        metavar="CONTENDER",
        type=options.non_empty,
        help="result file or directory (judged)",
    )
    options.add_compare_options(parser)
    stored = parser.add_mutually_exclusive_group()
    stored.add_argument(
        "--noise-file",
        metavar="FILE",
        type=options.non_empty,
        help="the baseline's stored noise (a baseline's noise.json; default: the noise.json "
        "beside BASELINE when there is one)",
    )
    stored.add_argument(
        "--no-noise-file",
        action="store_true",
        help="ignore a stored noise.json: measure the baseline's noise from its values",
    )
    options.add_gpu_mismatch_option(
        parser, "compare results from different GPU models (only a warning)"
    )
    parser.set_defaults(handler=main)


@dataclass(frozen=True)
class CompareCommand:
    """What `kernelwatch compare` was asked to do; `judging` holds the settings, resolved once."""

    baseline: str
    contender: str
    judging: Judging
    outputs: Outputs
    noise_file: Path | None  # the baseline's stored noise, named
    no_noise_file: bool  # measure the noise from the baseline's values
    config: Config  # --config, else the suite's kernelwatch.toml: read, so never written


def main(args: argparse.Namespace) -> int:
    # --config, else the suite's kernelwatch.toml, as run, report and ab read it: that of the
    # baselines folder BASELINE stands in, as `run --baselines` and `report --baselines` read it.
    from kernelwatch import verdict
    from kernelwatch.verdict import Judging

    config = verdict.suite_config(args.config, verdict.baselines_root_of(args.baseline))
    compare_with = options.settings(
        args, config, **options.gates(args, allow_gpu_mismatch=args.allow_gpu_mismatch)
    )
    return run(
        CompareCommand(
            baseline=args.baseline,
            contender=args.contender,
            judging=Judging(options.metric(args), compare_with),
            outputs=options.outputs(args),
            noise_file=Path(args.noise_file) if args.noise_file else None,
            no_noise_file=args.no_noise_file,
            config=config,
        )
    )


def run(command: CompareCommand) -> int:
    from kernelwatch import baseline as baselines
    from kernelwatch import noise as noises
    from kernelwatch import verdict
    from kernelwatch.loading import load_all
    from kernelwatch.verdict import report_outputs, write_report

    check_outputs(  # before the work: a bad path fails fast
        report_outputs(command.outputs),
        [
            Input("the baseline", command.baseline),
            Input("the contender", command.contender),
            Input("--noise-file", command.noise_file),
            Input("the baseline's noise.json", noises.beside(Path(command.baseline))),
            command.config.read(),
        ],
    )
    if command.noise_file:
        # A device is there, but no file: named, not "no such file" (is_file says only no).
        check_input_file(command.noise_file, "a kernelwatch noise file")
        # A pipe, `<(zcat noise.json.gz)`, is read as a file, as BASELINE is.
        if command.noise_file.is_dir():
            raise InputError(f"--noise-file {command.noise_file}: a folder; name its noise.json")
        if not command.noise_file.exists():
            raise InputError(f"--noise-file {command.noise_file}: no such file")
    baseline, contender = load_all([command.baseline, command.contender])
    found = baselines.read_as_given(
        command.baseline, baseline, command.noise_file, stored=not command.no_noise_file
    )
    # The path `run` and `report` take: the same two files get the same verdicts.
    report = verdict.judge_result(baseline, contender, command.judging, found)
    return write_report(report, command.outputs)
