"""`kernelwatch report RESULT.json -o report.html`: one self-contained HTML page about a run."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.config import Config
from kernelwatch.errors import InputError
from kernelwatch.files import Input, Output, check_outputs

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch import baseline as baselines
    from kernelwatch import history, noise, verdict
    from kernelwatch.report import Options, write_report
    from kernelwatch.verdict import Judging

DESCRIPTION = """\
Write one self-contained HTML page about a run (works offline: inline CSS and SVG figures, no
script, no external URL):

  * the run's context: GPU, driver, CUDA, commit, date, how it was run;
  * the comparison with the baseline, as kernelwatch compare/run decide it: this GPU's baseline
    (baselines/<gpu-slug>/, as kernelwatch run finds it) unless --baseline names one; the page
    says so when there is none;
  * trend plots from the results history (--db) with change points marked: benchmarks with a
    change point, those that regressed, and each family's reference, at most --max-trends;
  * the classic figures of the CUDA memory lessons redrawn from the run (coalescing, transpose,
    matrix multiply, reductions, transfers, bank conflicts, occupancy, local memory); a figure
    whose benchmarks are not in the run is left out with a note.

Needs matplotlib: pip install 'kernelwatch[report]'. See docs/report.md."""

EPILOG = """\
exit status:
  0  the report was written (whatever the verdicts: the page shows them)
  2  bad input or usage (no such or an invalid result file, a --baseline or --db that does not
     exist or is not usable, matplotlib missing): one line on stderr, "kernelwatch: error: ..."

examples:
  kernelwatch report results/kernelwatch-run-nvidia-h200-sm90-....json -o report.html
  kernelwatch report new.json --baseline old.json --db results/history.sqlite -o report.html
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "report",
        help="write a self-contained HTML report of a run (comparison, trends, lesson figures)",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    # Paths not empty: "" was taken as not given (--baseline, --db: the project's own baseline
    # and history were read instead) or as the current folder (RESULT.json).
    parser.add_argument(
        "result", metavar="RESULT.json", type=options.non_empty, help="the run's result file"
    )
    parser.add_argument(
        "-o",
        "--out",
        metavar="FILE",
        required=True,
        type=options.output_file,
        help="the HTML file to write",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--baseline",
        metavar="PATH",
        type=options.non_empty,
        help="compare with this result file or folder of result files",
    )
    options.add_baselines_option(
        where,
        "the baselines folder where this GPU's baseline is found (default: baselines, "
        f"{options.IN_PROJECT})",
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        type=options.non_empty,
        help="the history database for the trends (default: results/history.sqlite, "
        f"{options.IN_PROJECT}, when it exists)",
    )
    parser.add_argument(
        "--max-trends",
        type=int,
        default=defaults.TREND_PLOTS,
        metavar="N",
        help=f"draw at most N trend plots (default {defaults.TREND_PLOTS})",
    )
    parser.add_argument(
        "--explanations",
        metavar="FILE",
        type=options.non_empty,
        help="the explanations.json that kernelwatch ab wrote beside its runs: ncu counters and "
        "SASS diffs shown next to the verdicts",
    )
    options.add_metric_options(parser, "compare and plot over time")
    # --config defaults to kernelwatch.toml in the baselines folder, as kernelwatch run reads it.
    options.add_decision_options(parser)
    options.add_gate_options(parser)  # (what fails decides REGRESSION or SLOWER: compare's)
    options.add_gpu_mismatch_option(
        parser, "compare with a --baseline from another GPU model (only a warning)"
    )
    parser.set_defaults(handler=main)


@dataclass(frozen=True)
class ReportCommand:
    options: Options  # what the page is built from
    out: Path
    config: Config  # --config, else the suite's kernelwatch.toml: read, so never written


def main(args: argparse.Namespace) -> int:
    from kernelwatch import verdict
    from kernelwatch.report import Options
    from kernelwatch.verdict import Judging

    if args.max_trends < 0:
        raise InputError(f"--max-trends {args.max_trends}: must be 0 or more")
    out = Path(args.out)
    if out.is_dir():
        raise InputError(f"-o {out}: is a directory; name the HTML file")
    if args.explanations and Path(args.explanations).is_dir():
        raise InputError(
            f"--explanations {args.explanations}: a folder; name the explanations.json in it"
        )
    if args.explanations and not Path(args.explanations).exists():
        raise InputError(f"--explanations {args.explanations}: no such file")
    # --config defaults to kernelwatch.toml in the baselines folder, as `run` reads it.
    config = verdict.suite_config(args.config, options.baselines_root_if_any(args))
    judging = Judging(
        options.metric(args),
        options.settings(args, config, **options.gates(args, args.allow_gpu_mismatch)),
    )
    return run(
        ReportCommand(
            Options(
                result=Path(args.result),
                judging=judging,
                baseline=Path(args.baseline) if args.baseline else None,
                baselines=Path(args.baselines) if args.baselines else None,
                db=Path(args.db) if args.db else None,
                max_trends=args.max_trends,
                explanations=Path(args.explanations) if args.explanations else None,
                changes_threshold=config.threshold,  # as `history changes` reads the config
            ),
            out,
            config,
        )
    )


def run(command: ReportCommand) -> int:
    from kernelwatch.report import write_report

    out = command.out
    check_outputs([Output("-o", out)], [*inputs(command.options), command.config.read()])
    page = write_report(command.options, out)
    report = page.comparison
    verdicts = ""
    if report is not None:
        counts = ", ".join(f"{n} {v.value}" for v, n in report.counts().items() if n)
        verdicts = f"; against {page.baseline.label if page.baseline else 'the baseline'}: {counts}"
    else:
        verdicts = "; no baseline"
    figures = sum(1 for lesson in page.lessons if hasattr(lesson, "svg"))
    print(
        f"wrote {out}: {page.benchmarks} benchmarks{verdicts}; {len(page.trends.plots)} trend "
        f"plot(s), {figures} lesson figure(s)",
        file=sys.stdout,
    )
    return 0


def inputs(given: Options) -> list[Input]:
    """What the page is built from: the result, the baseline (named, else the baselines root
    where it is found), the history database (named, else the default one), explanations."""
    from kernelwatch import baseline as baselines
    from kernelwatch import history, noise

    found = [Input("the result", given.result), Input("--explanations", given.explanations)]
    if given.baseline is not None:
        found.append(Input("--baseline", given.baseline))
        found.append(Input("the baseline's noise.json", noise.beside(given.baseline)))
    else:
        root = given.baselines if given.baselines is not None else baselines.found_root()
        found.append(Input("the baselines folder", root))
    found.append(Input("--db", given.db if given.db is not None else history.found_path()))
    return found
