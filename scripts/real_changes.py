"""Code changes of the kind a pull request makes, for judging the anchored verdict against the
truth on one card (issue #31's table; docs/measurement.md, "Anchored verdicts on real code
changes"). scripts/gpu/real_changes.sh runs the whole measurement; this holds the changes and
reads its reports.

    python3 scripts/real_changes.py commit BASE     the changes committed one by one on top of
                                                    BASE; prints the last commit's sha
    python3 scripts/real_changes.py filter          a --filter matching every changed benchmark
    python3 scripts/real_changes.py table AB.json RUN.json
                                                    the table: `ab BASE CHANGED --json` (the
                                                    truth) beside the anchored `run --json`

`commit` writes git objects and nothing else: no branch, no checkout, no index of the
repository's is touched. Its author and dates are fixed (the base's commit date), so one base
gives the same commits on every machine. A change whose line is not found exactly once in the
base is refused: the families moved on, and the change must be written again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn


@dataclass(frozen=True)
class Change:
    title: str  # the commit's subject and the table's row
    path: str
    old: str  # one whole line of the base, found exactly once
    new: str
    benchmarks: str  # a regex (re.match) of the benchmarks whose kernels it changes


CHANGES = (
    Change(
        "reduction: 128 threads a block (a launch configuration and a template argument)",
        "families/reduction/reduction.cuh",
        "inline constexpr int reduction_block_size = 256;  // threads per block, every variant",
        "inline constexpr int reduction_block_size = 128;  // threads per block, every variant",
        r"reduction/",
    ),
    Change(
        "transpose: the unrolled variants take 2 tiles a block (unrolling)",
        "families/transpose/transpose.cuh",
        "inline constexpr int transpose_unroll = 4;",
        "inline constexpr int transpose_unroll = 2;",
        r"transpose/unrolled_",
    ),
    Change(
        "matmul: sgemm's transposed A tile without its padding (memory access)",
        "families/matmul/matmul.cu",
        "constexpr int sgemm_a_stride = sgemm_bm + 4;",
        "constexpr int sgemm_a_stride = sgemm_bm;",
        r"matmul/sgemm_tiled/",
    ),
    Change(
        "coalescing: the vectorized copy unrolled 2 deep (unrolling)",
        "families/coalescing/coalescing.cu",
        "constexpr int vectorized_unroll = 4;  // 16-byte loads issued before the first store",
        "constexpr int vectorized_unroll = 2;  // 16-byte loads issued before the first store",
        r"coalescing/vectorized_copy/",
    ),
)

LONG_NS = 50_000.0  # issue #31's bars: >= 2 % caught on kernels of 50 us or more,
SHORT_NS = 5_000.0  # >= 3 % on kernels of 5-50 us
SLOWER = ("REGRESSION", "SLOWER")


def fail(message: str) -> NoReturn:
    print(f"real_changes: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def git(repo: Path, *args: str, stdin: str | None = None, env: Mapping[str, str] = {}) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["failed"])[-1]
        fail(f"git {args[0]}: {said}")
    return done.stdout


def commit(repo: Path, base: str) -> str:
    """The changes as a chain of commits on `base`; the last one's sha."""
    parent = git(repo, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").strip()
    date = git(repo, "log", "-1", "--format=%cI", parent).strip()
    who = {
        "GIT_AUTHOR_NAME": "kernelwatch real_changes.py",
        "GIT_AUTHOR_EMAIL": "real-changes@kernelwatch.invalid",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": "kernelwatch real_changes.py",
        "GIT_COMMITTER_EMAIL": "real-changes@kernelwatch.invalid",
        "GIT_COMMITTER_DATE": date,
    }
    with tempfile.TemporaryDirectory() as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        for change in CHANGES:
            mode = git(repo, "ls-tree", parent, "--", change.path).split(" ", 1)[0]
            lines = git(repo, "show", f"{parent}:{change.path}").split("\n")
            found = [i for i, line in enumerate(lines) if line == change.old]
            if len(found) != 1:
                fail(
                    f"{change.path}: the line {change.old!r} is found {len(found)} times at "
                    f"{parent[:12]}, not once: write the change '{change.title}' again"
                )
            lines[found[0]] = change.new
            blob = git(repo, "hash-object", "-w", "--stdin", stdin="\n".join(lines)).strip()
            git(repo, "read-tree", parent, env=index)
            git(repo, "update-index", "--cacheinfo", f"{mode},{blob},{change.path}", env=index)
            tree = git(repo, "write-tree", env=index).strip()
            parent = git(
                repo, "commit-tree", tree, "-p", parent, "-m", change.title, env=who
            ).strip()
    return parent


def benchmark_filter() -> str:
    return "^(" + "|".join(change.benchmarks for change in CHANGES) + ")"


def rows(path: Path) -> dict[str, dict[str, Any]]:
    """A kernelwatch JSON report's benchmarks by name."""
    try:
        found = {row["name"]: row for row in json.loads(path.read_text())["benchmarks"]}
        if all(
            isinstance(name, str) and isinstance(row["verdict"], str) for name, row in found.items()
        ):
            return found
    except (OSError, ValueError, KeyError, TypeError) as exc:
        fail(f"{path}: not a kernelwatch JSON report (--json): {exc}")
    fail(f"{path}: not a kernelwatch JSON report (--json): a benchmark without its verdict")


def kind(verdict: str) -> str:
    """What a verdict says of the change: slower, faster, same (or unsure)."""
    if verdict in SLOWER:
        return "slower"
    return {"IMPROVEMENT": "faster", "SAME": "same", "IDENTICAL": "same"}.get(verdict, "unsure")


def percent(row: Mapping[str, Any]) -> str:
    change = row.get("change")
    return f"{change * 100:+.1f} %" if isinstance(change, (int, float)) else "-"


def table(truth: Mapping[str, dict[str, Any]], anchored: Mapping[str, dict[str, Any]]) -> str:
    """A row per change, the targets, then a row per benchmark."""
    summary = [
        "| change | benchmarks | truth (ab): slower, faster, same | anchored: slower, faster, "
        "same | agree |",
        "| --- | --- | --- | --- | --- |",
    ]
    detail = [
        "| benchmark | A median | truth (ab) | anchored | agree |",
        "| --- | --- | --- | --- | --- |",
    ]
    for change in CHANGES:
        names = sorted(n for n in truth if re.match(change.benchmarks, n))
        told = [kind(truth[n]["verdict"]) for n in names]
        said = [kind(anchored.get(n, {}).get("verdict", "MISSING")) for n in names]
        for name, true, judged in zip(names, told, said):
            median = (truth[name].get("baseline") or {}).get("median")
            detail.append(
                f"| {name} | "
                + (f"{median / 1000:.1f} us" if isinstance(median, (int, float)) else "-")
                + f" | {percent(truth[name])} {truth[name]['verdict']} | "
                f"{percent(anchored.get(name, {}))} "
                f"{anchored.get(name, {}).get('verdict', 'MISSING')} | "
                f"{'yes' if true == judged else 'NO'} |"
            )
        agree = sum(true == judged for true, judged in zip(told, said))
        summary.append(
            f"| {change.title} | {len(names)} | "
            + ", ".join(str(told.count(k)) for k in ("slower", "faster", "same"))
            + " | "
            + ", ".join(str(said.count(k)) for k in ("slower", "faster", "same"))
            + f" | {agree} of {len(names)} |"
        )
    return "\n".join(summary + [""] + targets(truth, anchored) + [""] + detail)


def targets(
    truth: Mapping[str, dict[str, Any]], anchored: Mapping[str, dict[str, Any]]
) -> list[str]:
    """Issue #31's bars: true regressions caught by length of kernel, false alarms, and the
    anchored run's median sensitivity on GPU-bound kernels of 50 us or more."""

    def caught(low: float, high: float, at_least: float) -> str:
        true = [
            n
            for n, row in truth.items()
            if row["verdict"] in SLOWER
            and not row.get("host_bound")
            and (row.get("change") or 0.0) >= at_least
            and low <= ((row.get("baseline") or {}).get("median") or 0.0) < high
        ]
        hit = [n for n in true if anchored.get(n, {}).get("verdict") == "REGRESSION"]
        return f"{len(hit)} of {len(true)}"

    regressed = [n for n, row in anchored.items() if row.get("verdict") == "REGRESSION"]
    false = [n for n in regressed if truth.get(n, {}).get("verdict") not in SLOWER]
    sensitivities = [
        row["sensitivity"]
        for row in anchored.values()
        if isinstance(row.get("sensitivity"), (int, float))
        and not row.get("host_bound")
        and ((row.get("baseline") or {}).get("median") or 0.0) >= LONG_NS
    ]
    median = f"{statistics.median(sensitivities) * 100:.2f} %" if sensitivities else "-"
    return [
        f"- true regressions of 2 % or more on kernels of 50 us or more caught: "
        f"{caught(LONG_NS, float('inf'), 0.02)}",
        f"- true regressions of 3 % or more on kernels of 5-50 us caught: "
        f"{caught(SHORT_NS, LONG_NS, 0.03)}",
        f"- false alarms (REGRESSION where the truth is not slower): {len(false)} of "
        f"{len(anchored)} comparisons" + (f" ({', '.join(false)})" if false else ""),
        f"- median sensitivity of the anchored verdicts, GPU-bound, 50 us or more: {median} "
        f"(over {len(sensitivities)})",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("commit", help="commit the changes on BASE; print the last sha")
    made.add_argument("base", metavar="BASE")
    made.add_argument("--repo", type=Path, default=Path("."))
    commands.add_parser("filter", help="a --filter matching every changed benchmark")
    read = commands.add_parser("table", help="the table from ab's and run's --json reports")
    read.add_argument("truth", type=Path, metavar="AB.json")
    read.add_argument("anchored", type=Path, metavar="RUN.json")
    args = parser.parse_args(argv)
    if args.command == "commit":
        print(commit(args.repo, args.base))
    elif args.command == "filter":
        print(benchmark_filter())
    else:
        print(table(rows(args.truth), rows(args.anchored)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
