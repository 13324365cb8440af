"""Which benchmarks are host-bound: measured with the host to themselves (runner.split_serial
and locks.host_exclusive) when other GPUs measure at the same time, and by default on one GPU
of a `run --gpus` host only (results.HOST_BOUND_ON_KEY in the others' results: gpus.shares says why).

A benchmark is host-bound when the baseline's rows carry the harness's counter `host_bound`
equal to 1, or when its name matches a regex of `[run] serial` in the suite's kernelwatch.toml
(the declaration for harness builds without the counter)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kernelwatch.names import row_name
from kernelwatch.results import HOST_BOUND_COUNTER


def from_baseline(documents: Iterable[Mapping[str, Any]]) -> set[str]:
    """Benchmarks whose rows say host_bound = 1."""
    found = set()
    for document in documents:
        for row in document.get("benchmarks", []):
            if isinstance(row, dict) and row.get(HOST_BOUND_COUNTER) == 1:
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
