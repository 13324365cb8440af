"""`kernelwatch comment REPORT.md --result RESULT.json`: the body of the pull-request comment."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.errors import InputError, shortened
from kernelwatch.files import Input, Output, check_input_file, check_outputs, write_atomic

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch.baseline import context_slug
    from kernelwatch.comment import body, json_instead, marker, marker_key
    from kernelwatch.gbench import check_envelope, read_json
    from kernelwatch.results import gpu_model

DESCRIPTION = """\
Print the body of kernelwatch's pull-request comment: a hidden marker on the first line,
<!-- kernelwatch:<gpu> --> (the GPU model's baseline slug, from RESULT's context, or --gpu),
a heading naming the GPU, the Markdown report of compare/run (REPORT.md, as --markdown wrote
it), and a line with the commit and the workflow run. The GPU workflow posts one such comment
per pull request and GPU model and updates it in place on every push, finding it by the
marker (docs/ci.md). Past GitHub's limit of 65,536 characters (UTF-16 units) the report is
shortened: its folded SAME rows left out, the last first, then cut at a line; a GPU name over
200 characters is cut, a run URL over 2,000 left out; each saying so in the body."""

EPILOG = """\
exit status:
  0  written
  2  bad input or usage: one line on stderr, "kernelwatch: error: ..."; also where no comment
     can hold the body (the marker alone, of --gpu or RESULT's GPU, passes GitHub's limit):
     nothing is written

examples:
  kernelwatch comment results/h200.md --result results/h200.json --commit "$SHA" -o body.md
  kernelwatch comment results/h200.md --gpu nvidia-h200-sm90 --marker-only
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "comment",
        help="print the body of the pull-request comment for one GPU model",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument(
        "report",
        metavar="REPORT.md",
        type=options.non_empty,
        help="the Markdown report (--markdown); not read with --marker-only",
    )
    gpu = parser.add_mutually_exclusive_group()
    gpu.add_argument(
        "--result", metavar="RESULT.json", type=options.non_empty, help="the run's result: its GPU"
    )
    gpu.add_argument(
        "--gpu",
        metavar="SLUG",
        help="the GPU model's baseline slug, as `kernelwatch baseline list` prints it "
        "(nvidia-h200-sm90): the marker --result gives for that model",
    )
    parser.add_argument(
        "--commit", metavar="SHA", help="the commit the report is about (its first 12 characters)"
    )
    parser.add_argument("--run-url", metavar="URL", help="the workflow run to link to")
    parser.add_argument(
        "-o", "--out", metavar="FILE", type=options.output_file, help="write here (default: stdout)"
    )
    parser.add_argument(
        "--marker-only", action="store_true", help="print only the marker line (to find it)"
    )
    parser.set_defaults(handler=main)


@dataclass(frozen=True)
class CommentCommand:
    report: str
    result: str | None
    gpu: str | None
    commit: str | None
    run_url: str | None
    out: str | None
    marker_only: bool


def main(args: argparse.Namespace) -> int:
    return run(
        CommentCommand(
            args.report,
            args.result,
            args.gpu,
            args.commit,
            args.run_url,
            args.out,
            args.marker_only,
        )
    )


def run(command: CommentCommand) -> int:
    from kernelwatch.comment import body, json_instead, marker

    check_outputs(
        [Output("-o", command.out)],
        [Input("the report", command.report), Input("--result", command.result)],
    )
    key, title = _gpu(command)
    if command.marker_only:
        text = marker(key) + "\n"
    else:
        check_input_file(command.report, "the Markdown report")
        try:
            markdown = Path(command.report).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{command.report}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise InputError(f"{command.report}: not a UTF-8 text file") from None
        if not markdown.strip():  # (a report never written: a comment of a heading alone)
            raise InputError(
                f"{command.report}: empty: give the file that compare or run wrote with --markdown"
            )
        if json_instead(markdown):
            raise InputError(
                f"{command.report}: a JSON file, not the Markdown report: give the file that "
                "compare or run wrote with --markdown"
            )
        text = body(markdown, key, title, command.commit, command.run_url)
    if command.out:
        write_atomic(command.out, text)
    else:
        sys.stdout.write(text)
    return 0


def _gpu(command: CommentCommand) -> tuple[str, str]:
    """(marker key, heading) of the GPU model."""
    from kernelwatch.baseline import context_slug
    from kernelwatch.comment import marker, marker_key
    from kernelwatch.gbench import check_envelope, read_json
    from kernelwatch.results import gpu_model

    if command.result:
        # (checked as every result is: a context key not a string named no GPU but 5-sm5)
        context = check_envelope(command.result, read_json(command.result)).get("context", {})
        if not gpu_model(context):
            raise InputError(f"{command.result}: its context names no GPU; pass --gpu SLUG")
        return context_slug(context) or str(context["gpu_name"]), str(gpu_model(context))
    if command.gpu:
        if marker_key(command.gpu) != command.gpu:
            # "NVIDIA H200" gave nvidia-h200, which no comment made with --result carries
            # (nvidia-h200-sm90): a marker-only lookup would never find the comment.
            tag = marker(command.gpu)
            print(
                f"kernelwatch: warning: --gpu {shortened(repr(command.gpu), 120)} is not a "
                "baseline slug (as `kernelwatch baseline list` prints it); the marker is "
                f"{shortened(tag, 120)}, unlike that of a comment made with --result",
                file=sys.stderr,
            )
        return command.gpu, command.gpu
    raise InputError("comment: name the GPU: --result RESULT.json or --gpu SLUG")
