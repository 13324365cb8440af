"""Which benchmarks are host-bound: measured with the host to themselves (runner.split_serial
and locks.host_exclusive) when other GPUs measure at the same time, and by default on one GPU
of a `run --gpus` host only (results.HOST_BOUND_ON_KEY in the others' results: gpus.shares says why).

A benchmark is host-bound when the baseline's rows carry the harness's counter `host_bound`
equal to 1, or when its name matches a regex of `[run] serial` in the suite's kernelwatch.toml
(the declaration for harness builds without the counter).

`flag` is the one reading of the counter, for every command: the harness writes exactly 1 (a
double, 1.0, in Google Benchmark's file) and nothing where a benchmark is not host-bound, so
1 is host-bound, 0 or absent is not, and anything else ("1", 2, NaN, true, -1) is a damaged
result, refused: read as "not host-bound", such a copy was measured beside other GPUs' work
and judged by a GPU-bound benchmark's sharp limits, and a `true` read otherwise in each command.
ResultSet.host_bound refuses the same values of a result read as columns."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kernelwatch.errors import InputError, shortened
from kernelwatch.gbench import show
from kernelwatch.names import row_name
from kernelwatch.results import HOST_BOUND_COUNTER


def flag(value: Any, where: str, name: Any) -> bool:
    """Whether a row's HOST_BOUND_COUNTER `value` (None: absent) says host-bound; refused in
    one line naming the file (`where`), the benchmark and the value unless 1, 0 or absent."""
    if value is None:
        return False
    # type(): a JSON true is a bool, which == 1 in Python; NaN equals nothing.
    if type(value) in (int, float) and value in (0, 1):
        return bool(value == 1)
    raise InputError(
        f"{where}: {shortened(str(name))}: counter {HOST_BOUND_COUNTER} is "
        f"{shortened(show(value))} (the harness writes 1 for a host-bound benchmark, "
        "nothing for another; 0 is read as not host-bound)"
    )


def bound_in(document: Mapping[str, Any], where: str) -> set[str]:
    """The benchmarks of one result document whose rows say host-bound (`flag`)."""
    found = set()
    for row in document.get("benchmarks", []):
        if isinstance(row, Mapping) and flag(row.get(HOST_BOUND_COUNTER), where, row_name(row)):
            found.add(row_name(row))
    return found


def from_baseline(documents: Iterable[Mapping[str, Any]], where: str = "a baseline") -> set[str]:
    """Benchmarks whose rows say host_bound = 1 (binaries.planning_documents has checked
    each document under its own file's name)."""
    found: set[str] = set()
    for document in documents:
        found |= bound_in(document, where)
    return found


def select(
    names: Sequence[str],
    patterns: Sequence[re.Pattern[str]],
    baseline_documents: Iterable[Mapping[str, Any]] = (),
) -> list[str]:
    """The host-bound ones among `names`, in their order."""
    counted = from_baseline(baseline_documents)
    return [n for n in names if n in counted or any(p.search(n) for p in patterns)]
