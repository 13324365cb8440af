"""Shards: the suite's benchmarks split into N parts of about equal time, for N machines.

`kernelwatch run --shard K/N` runs part K. The split is a pure function of the benchmark
names (as --benchmark_list_tests gives them, with the same --filter) and the estimated time of
each, so every shard job of one GPU model computes the same split, and the N parts together
hold every benchmark exactly once. The times come from a baseline result when there is one
(greedy longest-processing-time: the longest benchmark first, onto the least-loaded part);
otherwise every benchmark counts the same and the parts get equal counts.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernelwatch.errors import InputError
from kernelwatch.gbench import TIME_UNITS
from kernelwatch.levels import RUNS_KEY
from kernelwatch.names import row_name

# Seconds a repetition costs outside its timed samples (warm-up, L2 flush, sampling set-up,
# process start, the transfers' host buffers): two H200 runs of the suite took 417 s and
# 419 s for 3560 repetition rows holding 144.3 s and 140.1 s of cpu_time, about 0.077 s each
# beyond the timed loop.
OVERHEAD_PER_REPETITION_S = 0.077
# The most parts a suite splits into: beyond that a part holds one benchmark or none (the
# suite has a few hundred), and the split's per-part lists must stay small.
MAX_COUNT = 1000
# ASCII digits only: \d (and int()) take full-width and Arabic-Indic digits too, which no
# shard job writes; spaces around the numbers are kept (" 2 / 4 ", as a shell line may quote).
_SPEC = re.compile(r"[ \t]*([0-9]+)[ \t]*/[ \t]*([0-9]+)[ \t]*")
# In the context of a sharded run: which split it is a part of (plan_key); merge joins only
# parts of one plan.
PLAN_KEY = "kernelwatch_shard_plan"


@dataclass(frozen=True)
class Shard:
    """Part `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str, what: str = "--shard") -> Shard:
    """K/N in ASCII digits with 1 <= K <= N <= MAX_COUNT; `what` names the source in the error
    (an option, or a result file's context key for `merge`). Every other value, "" and "-1/2"
    too, gets the one line that says what is expected."""
    match = _SPEC.fullmatch(text)
    # more digits than any valid N: no int() of a huge string (Python refuses > 4300 digits)
    index, count = (
        (int(g) if len(g) <= 9 else MAX_COUNT + 1 for g in match.groups()) if match else (0, 0)
    )
    if not 1 <= index <= count <= MAX_COUNT:
        raise InputError(
            f"{what} {text!r}: write K/N in ASCII digits with 1 <= K <= N <= {MAX_COUNT}, e.g. 2/4 "
            "(part 2 of 4)"
        )
    return Shard(index, count)


def plan_key(names: Iterable[str], count: int) -> str:
    """The plan a shard is a part of: the sha256 of the sorted names of every benchmark of the
    whole run before sharding (one a line), and N. Shards of another project's or another
    build's benchmarks (same commit, other binaries) have another key."""
    digest = hashlib.sha256("\n".join(sorted(set(names))).encode("utf-8")).hexdigest()
    return f"sha256:{digest} of {count}"


def durations(documents: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Estimated wall seconds of each benchmark in a result: per repetition row, its cpu_time
    (the timed loop as the host saw it) plus the fixed overhead of a repetition."""
    seconds: dict[str, float] = defaultdict(float)
    for document in documents:
        # a baseline pooled from several runs (levels.RUNS_KEY) holds each run's repetitions
        runs = (document.get("context") or {}).get(RUNS_KEY)
        share = 1.0 / len(runs) if isinstance(runs, list) and runs else 1.0
        for row in document.get("benchmarks", []):
            if not isinstance(row, dict) or row.get("run_type") == "aggregate":
                continue
            name = row_name(row)
            unit = TIME_UNITS.get(str(row.get("time_unit", "ns")), 1.0) * 1e-9
            cpu = row.get("cpu_time")
            cpu_s = float(cpu) * unit if isinstance(cpu, (int, float)) and cpu > 0 else 0.0
            seconds[name] += share * (cpu_s + OVERHEAD_PER_REPETITION_S)
    return dict(seconds)


def split(
    names: Sequence[str], count: int, seconds: Mapping[str, float] | None = None
) -> list[list[str]]:
    """`names` in `count` parts of about equal estimated time, each part in the order of
    `names`. A benchmark the times do not know counts as their median (1 without times).
    Ties are broken by name and part number, so the split is deterministic."""
    known = sorted(v for n, v in (seconds or {}).items() if v > 0)
    typical = known[len(known) // 2] if known else 1.0
    weight = {n: (seconds or {}).get(n) or typical for n in names}
    load = [0.0] * count
    part_of: dict[str, int] = {}
    for name in sorted(set(names), key=lambda n: (-weight[n], n)):
        part = min(range(count), key=lambda k: (load[k], k))
        part_of[name] = part
        load[part] += weight[name]
    parts: list[list[str]] = [[] for _ in range(count)]
    for name in dict.fromkeys(names):  # once each, in the given order
        parts[part_of[name]].append(name)
    return parts


def select(
    names: Sequence[str], shard: Shard, seconds: Mapping[str, float] | None = None
) -> list[str]:
    """The benchmarks of part `shard`."""
    return split(names, shard.count, seconds)[shard.index - 1]
