#!/usr/bin/env python3
"""Leave one host out: each host's runs judged against a baseline pooled from the other hosts'
runs, as a card of a host the baseline never saw is judged without an anchor. This is how
docs/measurement.md and baselines/README.md measured how often such a runner fails unchanged
code, and how sensitive its verdicts are.

    PYTHONPATH=tools python3 scripts/leave_one_host_out.py [--config FILE]
        [--upper-bound-confidence C] [--class-hosts K [--as-is] | --by KEY] RUN.json ...

Each file is one `kernelwatch run` of one build (`run --gpus all`: one file per GPU), as
`baseline update` pools them; the hosts are told apart by their GPUs (levels.host_identity).
The pool is built and written by `baseline update`'s own code into a temporary folder, and each
run is judged by the path `compare` and `run` share (verdict.judge_result), with the suite's
kernelwatch.toml unless --config names another. Printed per run: exit status, failing rows,
the median sensitivity of its GPU-bound benchmarks of 50 us or more, and of the shorter ones;
then the totals.

--class-hosts K: how many hosts of a runner's class of host (levels.HostClass) a pool needs.
The pool holds every host of the class with more hosts and K of the other, each choice of K in
turn, and the other class's remaining hosts are judged against it. --as-is judges them against
the pool as it is, not centred on their class (compare._of_host_class), for comparison.

--by KEY: a configuration key (levels.HOST_CONFIG_KEYS, `host_os_kernel`, say) left out in
turn: the runs of each of its values judged against a pool of the others' runs, with KEY taken
out of the configuration, so that its spread is judged, not held to the host prior. This is
how docs/measurement.md, "Host kernels", measured whether a value the pool never held moves
times beyond the spread between hosts.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from kernelwatch import baseline as baselines
from kernelwatch import levels, verdict
from kernelwatch import noise as noises
from kernelwatch.compare import Report
from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json
from kernelwatch.loading import load
from kernelwatch.results import IDENTICAL_KEY, resolve_metric

LONG_NS = 50_000.0  # sensitivity is quoted for GPU kernels of 50 us or more (issue #31's bar)


def by_host(paths: list[Path]) -> dict[str, list[Path]]:
    """The runs per host, in the order given."""
    hosts: dict[str, list[Path]] = defaultdict(list)
    for path in paths:
        document = read_json(str(path))
        context = document.get("context") if isinstance(document, dict) else None
        if not isinstance(context, dict) or not isinstance(document.get("benchmarks"), list):
            sys.exit(f"leave_one_host_out: {path}: not a Google Benchmark result with a context")
        host = levels.host_identity(context)
        if host is None:
            sys.exit(f"leave_one_host_out: {path}: its context does not name its host")
        hosts[host].append(path)
    if len(hosts) < 2:
        sys.exit("leave_one_host_out: the runs come from one host: nothing to leave out")
    return hosts


def trials(
    runs: list[Path], hosts: dict[str, list[Path]], class_hosts: int | None, by: str | None
) -> Iterator[tuple[list[Path], list[Path]]]:
    """(the runs pooled, the runs judged against them): each host left out in turn; with
    `class_hosts` K, the hosts of the larger class and each choice of K of the other's, the
    other's remaining hosts judged; `by` KEY: the runs of each of its values in turn."""
    if by is not None:
        values: dict[str, list[Path]] = defaultdict(list)
        for path in runs:
            values[str(read_json(str(path))["context"].get(by))].append(path)
        if len(values) < 2:
            sys.exit(f"leave_one_host_out: --by {by}: the runs hold one value of it")
        for left_out in values.values():
            yield [p for p in runs if p not in left_out], left_out
        return
    if class_hosts is None:
        for left_out in hosts.values():
            yield [p for p in runs if p not in left_out], left_out
        return
    classes: dict[levels.HostClass | None, list[str]] = defaultdict(list)
    for host, paths in hosts.items():
        count = read_json(str(paths[0]))["context"].get("host_gpu_count")
        classes[levels.host_class(count)].append(host)
    if set(classes) != set(levels.HostClass):
        sys.exit("leave_one_host_out: --class-hosts: the runs must come from hosts of both classes")
    larger, smaller = sorted(classes.values(), key=len, reverse=True)
    if not 1 <= class_hosts < len(smaller):
        sys.exit(
            f"leave_one_host_out: --class-hosts: 1 to {len(smaller) - 1} (hosts of the smaller class)"
        )
    for chosen in itertools.combinations(smaller, class_hosts):
        pooled = [p for host in (*larger, *chosen) for p in hosts[host]]
        yield pooled, [p for host in smaller if host not in chosen for p in hosts[host]]


def judged(path: Path, root: Path, judging: verdict.Judging) -> tuple[Report, Mapping[str, Any]]:
    """The run at `path` against the baseline under `root`, as `compare` judges it, unanchored:
    an anchored run's benchmarks built as the baseline commit's (IDENTICAL_KEY) by their
    numbers too; its context."""
    run = load(str(path))
    run = replace(run, context={k: v for k, v in run.context.items() if k != IDENTICAL_KEY})
    found = baselines.against(root, run.context, str(path))
    return verdict.judge_result(verdict.baseline_side(found), run, judging, found), run.context


def median_sensitivity(report: Report, long: bool = True) -> float:
    """Of the GPU-bound benchmarks of LONG_NS or more (`long`), else of those shorter."""
    found = [
        c.sensitivity
        for c in report.comparisons
        if c.sensitivity
        and not c.host_bound
        and c.baseline
        and ((c.baseline.median or 0) >= LONG_NS) == long
    ]
    return statistics.median(found) if found else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN.json")
    parser.add_argument("--config", type=Path, help="default: the suite's kernelwatch.toml")
    parser.add_argument(
        "--upper-bound-confidence",
        type=float,
        help=f"of a wider level's spread (default {levels.UPPER_BOUND_CONFIDENCE}): what "
        "docs/measurement.md's figures for 0.95 and 0.975 came from",
    )
    parser.add_argument(
        "--class-hosts",
        type=int,
        metavar="K",
        help="pools of the larger class of host and K hosts of the other (module doc)",
    )
    parser.add_argument(
        "--by",
        metavar="KEY",
        # (not the GPU count: it makes the class of host, --class-hosts)
        choices=[key for key in levels.HOST_CONFIG_KEYS if key != "host_gpu_count"],
        help="leave out the runs of each value of this configuration key in turn (module doc)",
    )
    parser.add_argument(
        "--as-is",
        action="store_true",
        help="judge against the pool as it is, not centred on the runner's class of host",
    )
    args = parser.parse_intermixed_args()  # (runs after the options too)
    if args.as_is:
        noises.to_host_class = lambda *_: None  # (compare reads it through the module)
    if args.by is not None:
        if args.class_hosts is not None:
            sys.exit("leave_one_host_out: --by and --class-hosts: one of them")
        levels.HOST_CONFIG_KEYS = tuple(k for k in levels.HOST_CONFIG_KEYS if k != args.by)
    if args.upper_bound_confidence is not None:
        if not 0.5 < args.upper_bound_confidence < 1:
            sys.exit("leave_one_host_out: --upper-bound-confidence: between 0.5 and 1")
        levels.UPPER_BOUND_CONFIDENCE = args.upper_bound_confidence
    judging = verdict.Judging(
        resolve_metric("time"), verdict.settings(verdict.suite_config(args.config))
    )
    hosts = by_host(args.runs)
    judged_runs = passed = failing = compared = 0
    sensitivities, short = [], []
    print(
        "| card | GPUs of its host | exit | failing | median sensitivity >= 50 us | < 50 us "
        "| run |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for pooled, left_out in trials(args.runs, hosts, args.class_hosts, args.by):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            baselines.write(baselines.prepare_update(root, pooled))
            for path in left_out:
                report, context = judged(path, root, judging)
                judged_runs += 1
                failed = [c for c in report.comparisons if c.failed]
                passed += report.exit_status == 0
                failing += len(failed)
                compared += sum(c.ratio is not None for c in report.comparisons)
                sensitivities.append(median_sensitivity(report))
                short.append(median_sensitivity(report, long=False))
                rows = ", ".join(f"`{c.name}` {c.change}" for c in failed) or "-"
                print(
                    f"| {str(context.get('gpu_uuid'))[:12]} | {context.get('host_gpu_count')} "
                    f"| {report.exit_status} | {rows} | {sensitivities[-1] * 100:.2f} % "
                    f"| {short[-1] * 100:.1f} % | {path} |"
                )
    how = (
        f"the values of {args.by} left out in turn"
        if args.by is not None
        else (
            f"{len(hosts)} hosts left out in turn"
            if args.class_hosts is None
            else f"pools of {args.class_hosts} host(s) of the smaller class"
        )
    )
    print(
        f"\n{passed} of {judged_runs} runs exit 0; {failing} failing of {compared} "
        f"comparisons; median sensitivity {min(sensitivities) * 100:.1f}-"
        f"{max(sensitivities) * 100:.1f} % (>= 50 us), {min(short) * 100:.1f}-"
        f"{max(short) * 100:.1f} % (< 50 us) over {how}"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except InputError as exc:  # a file that is not a run, or runs baseline update refuses
        sys.exit(f"leave_one_host_out: {exc}")
