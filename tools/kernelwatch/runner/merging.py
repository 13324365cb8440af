"""Joining outputs into one result: one binary's processes (join_processes), then a run's
binaries (merge). Each result comes from one GPU: a run's processes and binaries are checked
here for one card; the shards of `kernelwatch merge` (merge.py) are checked there for one
model, and joined by join_outputs, which checks no GPU."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kernelwatch.errors import InputError
from kernelwatch.names import row_name
from kernelwatch.results import PROCESS_KEY, gpu_model


def join_processes(binary: Path, documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One binary's outputs from several processes as one document: the first one's context,
    every repetition row marked with its process (`kernelwatch_process`, 1-based), and, with
    several processes, its repetition_index moved past the earlier processes' repetitions (so
    that each stays unique) and `repetitions` the total. With several processes the aggregate
    rows are dropped: each describes one process only, and compare computes its own statistics
    from the repetitions."""
    first = documents[0]
    uuid = (first.get("context") or {}).get("gpu_uuid")
    several = len(documents) > 1
    counted = [Counter(_repetition_names(d)) for d in documents]
    totals = sum(counted, Counter())
    offsets: Counter[str] = Counter()
    rows: list[Any] = []
    for process, document in enumerate(documents, 1):
        other = document.get("context") or {}
        if other.get("gpu_uuid") != uuid:
            raise InputError(
                f"{binary}: process {process} ran on {other.get('gpu_uuid') or 'an unnamed GPU'},"
                f" process 1 on {uuid or 'an unnamed GPU'}: one result must come from one GPU"
            )
        for row in document.get("benchmarks", []):
            if not isinstance(row, dict):
                rows.append(row)  # the reader refuses it with its message
                continue
            if row.get("run_type") == "aggregate":
                if not several:
                    rows.append(row)
                continue
            marked = {**row, PROCESS_KEY: process}
            name = row_name(row)
            if several:
                if isinstance(row.get("repetition_index"), int):
                    marked["repetition_index"] = offsets[name] + row["repetition_index"]
                if isinstance(row.get("repetitions"), int):
                    marked["repetitions"] = totals[name]
            rows.append(marked)
        offsets.update(counted[process - 1])
    return {**first, "benchmarks": rows}


def _repetition_names(document: Mapping[str, Any]) -> Iterable[str]:
    for row in document.get("benchmarks", []):
        if isinstance(row, dict) and row.get("run_type") != "aggregate":
            yield row_name(row)


def merge(
    outputs: Sequence[tuple[Path, Mapping[str, Any]]], extra_context: Mapping[str, Any]
) -> dict[str, Any]:
    """One result from a run's binaries' outputs (join_outputs), all from the same card."""
    if outputs:
        first_binary, first = outputs[0]
        context = first.get("context") or {}
        model, uuid = gpu_model(context), context.get("gpu_uuid")
        for binary, document in outputs:
            other = document.get("context") or {}
            if gpu_model(other) != model or other.get("gpu_uuid") != uuid:
                raise InputError(
                    f"{binary} ran on "
                    f"{other.get('gpu_uuid') or gpu_model(other) or 'an unnamed GPU'}, "
                    f"{first_binary} on {uuid or model or 'an unnamed GPU'}: one result must "
                    "come from one GPU (set CUDA_VISIBLE_DEVICES, or "
                    "--bench-arg=--kernelwatch_device=N)"
                )
    return join_outputs(outputs, extra_context)


def claim(owner: dict[str, Path], name: str, binary: Path) -> None:
    """Record that `binary` holds benchmark `name`; refuses a name two binaries hold."""
    previous = owner.setdefault(name, binary)
    if previous != binary:
        raise InputError(
            f"benchmark {name!r} is in both {previous} and {binary}: one result needs unique names"
        )


def join_outputs(
    outputs: Sequence[tuple[Path, Mapping[str, Any]]], extra_context: Mapping[str, Any]
) -> dict[str, Any]:
    """One result from several outputs (a run's binaries, or shards' results): the first one's
    context (plus `extra_context`), every benchmark row, each benchmark from one output only.
    Which GPUs may be joined is the caller's to check (merge, merge.merge_results)."""
    if not outputs:
        raise InputError("nothing to merge: no benchmark binary ran")
    context = dict(outputs[0][1].get("context") or {})
    rows: list[Any] = []
    owner: dict[str, Path] = {}
    for binary, document in outputs:
        names = set()
        for row in document.get("benchmarks", []):
            names.add(row_name(row))
            rows.append(row)
        for name in names:
            claim(owner, name, binary)
    context.update(extra_context)
    return {"context": context, "benchmarks": rows}
