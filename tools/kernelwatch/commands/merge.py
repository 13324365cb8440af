"""`kernelwatch merge`: join the shard results of one GPU model into one result."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch.commands import _options as options
from kernelwatch.commands._options import add_parser
from kernelwatch.errors import InputError
from kernelwatch.files import Input, Output, check_outputs, write_json_atomic

if TYPE_CHECKING:  # the work is imported where it runs: --help loads none of it
    from kernelwatch.gbench import read_document, read_json
    from kernelwatch.loading import from_documents
    from kernelwatch.merge import is_confirming_rerun, merge_results
    from kernelwatch.results import check_time_values

DESCRIPTION = """\
Join the results of `kernelwatch run --shard K/N` (one file per part, any cards of one GPU
model) into one result file, which compare, baseline update and history ingest take like an
unsharded run. Refuses results of different commits, GPU models, drivers, CUDA runtimes,
library build types or harness and run settings (the kernelwatch_* context keys), a part that
holds no benchmark, parts of different plans (kernelwatch_shard_plan: another project's or
another build's benchmarks; old shards without it merge only when every part lacks it), a part
given twice, a benchmark in two parts, every part given that together lack a benchmark of
their plan (parts of two splits: other baselines' durations), and a missing part (unless
--allow-partial). The parts of a whole-suite run, all given, say so (kernelwatch_whole_build). A
regression's re-run that `run` wrote beside a part (K.confirm-1.json, which a glob over the
parts also names) is set aside with a note. How each part was judged (its kernelwatch_anchor,
where `run` anchored it or tried to) is kept, per part, in the merged result's kernelwatch_anchor,
which report and history show. A part whose process crashed is merged with its crash (the
parts' kernelwatch_failed_processes and kernelwatch_no_result joined). Parts of several hosts
make a result of no one host (the host and fingerprint keys they disagree on are unknown), which
compare judges as measured on another host. See docs/running.md."""

EPILOG = """\
exit status:
  0  the merged result was written
  2  bad input: one line on stderr, "kernelwatch: error: ..."

examples:
  kernelwatch merge results/h200-shard-*.json -o results/h200.json
  kernelwatch compare baselines/nvidia-h200-sm90 results/h200.json
"""


def register(subparsers: Any) -> None:
    parser = add_parser(
        subparsers,
        "merge",
        help="join shard results of one GPU model into one result",
        description=DESCRIPTION,
        epilog=EPILOG,
    )
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULT.json",
        type=options.non_empty,
        help="the shards' results",
    )
    parser.add_argument(
        "-o",
        "--out",
        required=True,
        metavar="FILE",
        type=options.output_file,
        help="the merged result (gzip-compressed where FILE ends in .gz)",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge the parts given even when some of the N are missing",
    )
    parser.set_defaults(
        handler=lambda args: run(
            MergeCommand(tuple(args.results), Path(args.out), args.allow_partial)
        )
    )


@dataclass(frozen=True)
class MergeCommand:
    results: tuple[str, ...]
    out: Path
    allow_partial: bool


def run(command: MergeCommand) -> int:
    from kernelwatch.gbench import read_document, read_json
    from kernelwatch.loading import from_documents
    from kernelwatch.merge import is_confirming_rerun, merge_results
    from kernelwatch.results import check_time_values

    out = command.out
    if out.is_dir():
        raise InputError(f"--out {out}: is a directory; name the merged result file")
    check_outputs(
        [Output("-o", out)], [Input("a shard's result", name) for name in command.results]
    )
    inputs = []
    for name in command.results:
        document = read_json(name)
        read_document(name, document)  # validates; one line
        if document["benchmarks"]:  # (an empty part is refused as no shard, below)
            check_time_values(from_documents(name, [document]))
        if is_confirming_rerun(document):
            print(
                f"kernelwatch: {name}: a regression's re-run, not a shard: left out",
                file=sys.stderr,
            )
            continue
        inputs.append((name, document))
    if command.results and not inputs:
        names = ", ".join(Path(name).name for name in command.results)
        raise InputError(
            f"every file given is a regression's re-run ({names}), none a part: name the "
            "parts, the files `run --shard K/N --out` wrote"
        )
    merged = merge_results(inputs, allow_partial=command.allow_partial)
    write_json_atomic(out, merged)
    print(
        f"kernelwatch: merged {len(inputs)} result(s), {len(merged['benchmarks'])} rows, into {out}",
        file=sys.stderr,
    )
    return 0
