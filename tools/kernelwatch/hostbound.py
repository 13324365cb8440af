"""Which benchmarks are host-bound: measured with the host to themselves (runner.split_serial
and locks.host_exclusive) when other GPUs measure at the same time, and by default on one GPU
of a `run --gpus` host only (ON_KEY in the others' results: gpus.shares says why).

A benchmark is host-bound when the baseline's rows carry the harness's counter `host_bound`
equal to 1, or when its name matches a regex of `[run] serial` in the suite's kernelwatch.toml
(the declaration for harness builds without the counter)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kernelwatch.names import row_name
from kernelwatch.results import ResultSet

COUNTER = "host_bound"
# Context key of a `run --gpus` result that left the host-bound benchmarks to another GPU of
# its host: its value names that GPU. The result covers a part of the suite (baseline.against).
ON_KEY = "kernelwatch_host_bound_on"


def from_baseline(documents: Iterable[Mapping[str, Any]]) -> set[str]:
    """Benchmarks whose rows say host_bound = 1."""
    found = set()
    for document in documents:
        for row in document.get("benchmarks", []):
            if isinstance(row, dict) and row.get(COUNTER) == 1:
                found.add(row_name(row))
    return found


def select(
    names: Sequence[str],
    patterns: Sequence[re.Pattern[str]],
    baseline_documents: Iterable[Mapping[str, Any]] = (),
) -> list[str]:
    """The host-bound ones among `names`, in their order."""
    counted = from_baseline(baseline_documents)
    return [n for n in names if n in counted or any(p.search(n) for p in patterns)]


def in_result(result: ResultSet, k: np.ndarray) -> np.ndarray:
    """Which of the benchmarks `k` (indices into result) have a row with host_bound = 1."""
    column = result.columns.get(COUNTER)
    if column is None or not len(k):
        return np.zeros(len(k), dtype=bool)
    flagged = np.nan_to_num(column) == 1
    cumulative = np.concatenate([[0], np.cumsum(flagged)])
    found: np.ndarray = (
        cumulative[result.starts[k] + result.counts[k]] - cumulative[result.starts[k]]
    ) > 0
    return found
