"""`kernelwatch compare BASELINE CONTENDER`: the CLI side of compare (arguments, output, exit)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from kernelwatch.commands._parsers import add_parser
from kernelwatch import noise as noises
from kernelwatch import render
from kernelwatch.compare import (
    DEFAULT_ALPHA,
    DEFAULT_NOISE_MULTIPLIER,
    DEFAULT_THRESHOLD,
    Report,
    Settings,
    compare,
)
from kernelwatch.config import Config, load_config, parse_fraction
from kernelwatch import explain
from kernelwatch.errors import InputError
from kernelwatch.files import check_writable, write_atomic, write_output
from kernelwatch.results import load_all, resolve_metric

DESCRIPTION = """\
Compare two Google Benchmark results, benchmark by benchmark, and say what got slower.

BASELINE and CONTENDER are Google Benchmark JSON files, or directories whose *.json files are
merged (a benchmark found in several files pools their repetitions, one file per process).
For each benchmark in both, the change of the metric is the ratio of medians, with a
Hodges-Lehmann confidence interval and a Mann-Whitney U p-value over the repetitions,
Benjamini-Hochberg-corrected across all benchmarks. A REGRESSION needs significance AND a
change beyond the limit: the larger of the threshold and a noise floor, --noise-multiplier x
the benchmark's noise (stored by `baseline update` in noise.json beside a baseline's
result.json, else measured from the baseline's processes and repetitions).
Verdicts: REGRESSION, IMPROVEMENT, SAME, UNSURE, NEW, MISSING, ERROR.
See docs/compare.md for the exact rules and the JSON schema, docs/measurement.md for the
noise."""

EPILOG = """\
exit status:
  0  no regression
  1  at least one REGRESSION (one unverified for too few repetitions: from 2x worse, or any
     with --strict); or a MISSING benchmark (unless --allow-missing); or an ERROR in
     the contender (unless --allow-errors)
  2  bad input or usage: one line on stderr, "kernelwatch: error: ..."

config file (TOML, --config):
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
    parser.add_argument("baseline", metavar="BASELINE", help="result file or directory (reference)")
    parser.add_argument("contender", metavar="CONTENDER", help="result file or directory (judged)")
    add_compare_options(parser)
    stored = parser.add_mutually_exclusive_group()
    stored.add_argument(
        "--noise-file",
        metavar="FILE",
        help="the baseline's stored noise (a baseline's noise.json; default: the noise.json "
        "beside BASELINE when there is one)",
    )
    stored.add_argument(
        "--no-noise-file",
        action="store_true",
        help="ignore a stored noise.json: measure the baseline's noise from its values",
    )
    parser.add_argument(
        "--allow-gpu-mismatch",
        action="store_true",
        help="compare results from different GPU models (only a warning)",
    )
    parser.set_defaults(handler=run)


def add_compare_options(parser: argparse.ArgumentParser) -> None:
    """The options that decide and show verdicts; `run` and `ab` share them."""
    add_metric_options(parser)
    add_decision_options(parser)
    add_output_options(parser)


def add_metric_options(parser: argparse.ArgumentParser, what: str = "compare") -> None:
    """--metric and its direction; `report` shares them (what: "compare and plot")."""
    parser.add_argument(
        "--metric",
        default="time",
        help=f"what to {what}: time (= real_time, the manual/GPU time; default), cpu_time, "
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
        help="the counter is better when smaller (default for times)",
    )


def add_decision_options(parser: argparse.ArgumentParser) -> None:
    """The options that set each benchmark's limit and the test; `selftest` shares them."""
    parser.add_argument(
        "--threshold",
        metavar="T",
        help="smallest change that counts, as 0.01 or 1%% (default "
        f"{DEFAULT_THRESHOLD * 100:g}%%); "
        "config rules override it per benchmark; never below the noise floor",
    )
    parser.add_argument(
        "--alpha", type=float, help=f"false discovery rate (default {DEFAULT_ALPHA:g})"
    )
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
        f"{DEFAULT_NOISE_MULTIPLIER:g})",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="TOML settings file (format: docs/compare.md)"
    )


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "markdown", "json"),
        default="table",
        help="what to print on stdout (default table)",
    )
    parser.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    parser.add_argument(
        "--markdown",
        metavar="FILE",
        help="also write the Markdown report to FILE (for $GITHUB_STEP_SUMMARY)",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="also write the JSON report to FILE (docs/compare.md)"
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the table (auto: only on a terminal, and not with NO_COLOR set)",
    )
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
        help="an unverified REGRESSION (too few repetitions to test) fails at any size, not "
        "only from 2x slower",
    )


def settings_from(args: argparse.Namespace, config: Config) -> Settings:
    """Command line over config file over built-in defaults."""
    defaults = Settings()

    def pick(cli: Any, file: Any, default: Any) -> Any:
        return cli if cli is not None else file if file is not None else default

    threshold = parse_fraction(args.threshold, "--threshold") if args.threshold else None
    return Settings(
        alpha=pick(args.alpha, config.alpha, defaults.alpha),
        threshold=pick(threshold, config.threshold, defaults.threshold),
        min_repetitions=pick(
            args.min_repetitions, config.min_repetitions, defaults.min_repetitions
        ),
        noise_multiplier=pick(
            args.noise_multiplier, config.noise_multiplier, defaults.noise_multiplier
        ),
        rules=config.rules,
        allow_missing=getattr(args, "allow_missing", False),
        allow_errors=getattr(args, "allow_errors", False),
        allow_gpu_mismatch=getattr(args, "allow_gpu_mismatch", False),
        strict=getattr(args, "strict", False),
    )


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config) if args.config else Config()
    settings = settings_from(args, config)
    metric = resolve_metric(args.metric, args.higher_is_better)
    for path in (args.junit, args.markdown):
        if path:
            check_writable(path)  # before the work: a bad path fails fast
    if args.noise_file and not Path(args.noise_file).is_file():
        raise InputError(f"--noise-file {args.noise_file}: no such file")
    baseline, contender = load_all([args.baseline, args.contender])
    stored, warning = None, None
    if not args.no_noise_file:
        explicit = Path(args.noise_file) if args.noise_file else None
        stored, warning = noises.stored_beside(Path(args.baseline), baseline.context, explicit)
    report = compare(baseline, contender, metric, settings, stored)
    if warning:
        report = dataclasses.replace(report, warnings=report.warnings + (warning,))
    return write_report(report, args)


def write_report(report: Report, args: argparse.Namespace, command: str = "compare") -> int:
    """Warnings on stderr, the JUnit and Markdown files if asked, the report on stdout; the
    exit status. Kernel changes are classified here when the caller explained nothing (free:
    it reads the results' kernel records)."""
    if not report.explanations:
        report = explain.explain(report)
    for warning in report.warnings:
        print(f"kernelwatch: warning: {warning}", file=sys.stderr)
    files = [(args.junit, "--junit", render.render_junit)]
    files.append((args.markdown, "--markdown", render.render_markdown))
    files.append((getattr(args, "json", None), "--json", render.render_json))
    for path, option, view in files:
        if path:
            try:
                write_atomic(path, view(report, command=command))
            except InputError as exc:
                raise InputError(f"{option} {exc}") from None
    if args.format == "json":
        text = render.render_json(report, command=command)
    elif args.format == "markdown":
        text = render.render_markdown(report, command=command)
    else:
        text = render.render_table(report, color=_use_color(args.color), command=command)
    write_output(text)
    return report.exit_status


def _use_color(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
