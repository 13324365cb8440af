"""`kernelwatch export RESULT --format bmf|github-action-benchmark`: a result for dashboards."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kernelwatch import defaults
from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.errors import shortened
from kernelwatch.files import Input, Output, check_outputs, json_text, write_atomic

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch.export import export, github_tool
    from kernelwatch.loading import load
    from kernelwatch.results import Metric

DESCRIPTION = """\
Write a result (a Google Benchmark or nvbench JSON file, or a folder of them, merged) as the
JSON a dashboard reads, one entry per benchmark: the median of the metric over its repetitions,
with the 95 % interval of the median where the format has room for it.

  bmf                      Bencher Metric Format: {name: {measure: {value, lower_value,
                           upper_value}}}; times go to the measure `latency` (ns), a counter
                           to a measure of its own name ("latency (counter)" for a counter
                           named like a built-in measure, latency or throughput).
                           `bencher run --adapter json --file F`
  github-action-benchmark  [{name, unit, value, range, extra}] for github-action-benchmark's
                           `tool: customSmallerIsBetter` (times), or `customBiggerIsBetter`
                           (--metric with a higher-is-better counter); the tool is printed on
                           stderr

Strict JSON (no NaN). See docs/results.md."""

EPILOG = """\
exit status:
  0  written
  2  bad input or usage: one line on stderr, "kernelwatch: error: ..."

examples:
  kernelwatch export results/run.json --format bmf -o bmf.json
  kernelwatch export results/run.json --format github-action-benchmark --metric bytes_per_second
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "export",
        help="write a result as Bencher (BMF) or github-action-benchmark JSON",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    # (not empty: "" is the current folder, whose files no one named)
    parser.add_argument(
        "result", metavar="RESULT", type=options.non_empty, help="result file or directory"
    )
    parser.add_argument(
        "--format", required=True, choices=defaults.EXPORT_FORMATS, help="the format to write"
    )
    parser.add_argument(
        "-o", "--out", metavar="FILE", type=options.output_file, help="write here (default: stdout)"
    )
    options.add_metric_options(parser, "export")
    parser.set_defaults(handler=main)


@dataclass(frozen=True)
class ExportCommand:
    result: str
    format: str
    out: str | None
    metric: Metric


def main(args: argparse.Namespace) -> int:
    return run(ExportCommand(args.result, args.format, args.out, options.metric(args)))


def run(command: ExportCommand) -> int:
    from kernelwatch.export import BMF_MAX_NAME, bmf_measure, export, github_tool
    from kernelwatch.loading import load
    from kernelwatch.results import NO_RESULT_KEY, check_measured, crash_list

    metric = command.metric
    check_outputs([Output("-o", command.out)], [Input("the result", command.result)])
    result = load(command.result)
    check_measured(result)
    document, too_long = export(result, metric, command.format)
    crashed = crash_list(result.context)
    if crashed is not None:
        # A partial result (`run` after a crash): a dashboard missing them should know why.
        print(
            f"kernelwatch: note: {len(crashed[1])} benchmark(s) of its run have no result, "
            f"their process having failed ({NO_RESULT_KEY}): not exported",
            file=sys.stderr,
        )
    # one entry per benchmark in either format
    left_out = len(result.names) - len(document) - too_long
    if left_out:
        # As compare says it: a dashboard fed 289 of 356 benchmarks should know why.
        print(
            f"kernelwatch: note: {left_out} of {len(result.names)} benchmark(s) have no values "
            f"of {shortened(metric.key)} (not a counter of theirs, or a skipped row) or failed "
            "in a repetition (compare's ERROR): left out",
            file=sys.stderr,
        )
    if too_long:
        # Bencher refuses the whole report for one such name: the others still get there.
        print(
            f"kernelwatch: note: {too_long} of {len(result.names)} benchmark(s) have names "
            f"longer than Bencher takes ({BMF_MAX_NAME:,} bytes of UTF-8): left out",
            file=sys.stderr,
        )
    measure = bmf_measure(metric)
    if command.format == "bmf" and not metric.is_time and measure != metric.key:
        print(
            f"kernelwatch: note: the counter {metric.key} goes to the measure '{measure}': "
            f"Bencher's own {metric.key.casefold()} measure is not this counter's unit",
            file=sys.stderr,
        )
    text = json_text(document)
    if command.format == "github-action-benchmark":
        print(f"kernelwatch: github-action-benchmark tool: {github_tool(metric)}", file=sys.stderr)
    if command.out:
        write_atomic(command.out, text)
    else:
        sys.stdout.write(text)
    return 0
