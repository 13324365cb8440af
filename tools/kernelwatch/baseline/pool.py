"""Pooling runs of one build on several cards or hosts of one GPU model into one baseline
result, each run's card, host and processes listed so that the spread between them can be
measured (noise.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kernelwatch import levels
from kernelwatch.baseline import ran_a_part, row_identity
from kernelwatch.errors import InputError
from kernelwatch.results import PROCESS_KEY, gpu_model

# Settings that must agree between the runs pooled into one baseline: they move medians. The
# commit may differ (a warning names each run's): a change outside the timed code does not.
POOLED_KEYS = {
    "kernelwatch_build_type": "build type",
    "kernelwatch_cache_mode": "cache mode",
    "kernelwatch_max_time": "max time",
    "kernelwatch_noise_target": "noise target",
    "kernelwatch_blocking_kernel": "blocking kernel",
    "kernelwatch_random_interleaving": "random interleaving",
}


def pool(runs: Sequence[tuple[str, Any]], warnings: list[str] | None = None) -> Any:
    """One result from runs of one build on several cards or hosts of one GPU model, each a
    document read_document has checked (update._read_runs does: a second check cost a 23-run
    pool 0.7 s of 4.2): every run's rows, their processes numbered anew (1..P over all runs),
    and each run's card, host, host configuration and processes listed in the context
    (levels.RUNS_KEY), so that the spread between cards and between hosts can be measured
    (noise.py). Runs of other commits are pooled with a warning in `warnings`: say in the review
    why their timed code is the same. The runs' rows become the pooled result's: they are
    changed in place."""
    if len(runs) == 1:
        return runs[0][1]
    first_label, first = runs[0]
    first_context = first.get("context") or {}
    for label, document in runs:  # (all checked before any run's rows are renumbered)
        context = document.get("context") or {}
        if gpu_model(context) != gpu_model(first_context):
            raise InputError(
                f"{label}: measured on {gpu_model(context)}, {first_label} on "
                f"{gpu_model(first_context)}; a baseline is one GPU model"
            )
        for key, what in POOLED_KEYS.items():
            if str(context.get(key)) != str(first_context.get(key)):
                raise InputError(
                    f"{label}: {what} {context.get(key)}, {first_label}: "
                    f"{first_context.get(key)}; the runs of one baseline must agree"
                )
        if levels.RUNS_KEY in context:
            raise InputError(f"{label}: already a pooled baseline; pool the runs it came from")
        _check_processes(label, document.get("benchmarks", []))
    pooled_rows: list[Mapping[str, Any]] = []
    listed: list[dict[str, Any]] = []
    offsets: dict[str, int] = {}  # repetition_index moves past earlier runs', as runner.merge
    for label, document in runs:
        context = document.get("context") or {}
        numbers: dict[Any, int] = {}
        counts: dict[str, int] = {}
        for row in document.get("benchmarks", []):
            # Changed in place, not copied: a copy of 8 runs of 35,600 rows was 0.35 GB more.
            process = row.get(PROCESS_KEY, 1)
            if process not in numbers:
                numbers[process] = 1 + sum(len(r["processes"]) for r in listed) + len(numbers)
            row[PROCESS_KEY] = numbers[process]
            name = row_identity(row)
            if isinstance(row.get("repetition_index"), int):
                counts[name] = max(counts.get(name, 0), row["repetition_index"] + 1)
                row["repetition_index"] += offsets.get(name, 0)
            pooled_rows.append(row)
        for name, count in counts.items():
            offsets[name] = offsets.get(name, 0) + count
        listed.append(
            {
                **levels.unit_of(context).as_dict(),
                "commit": context.get("kernelwatch_git_commit"),
                "processes": sorted(numbers.values()),
                "source": Path(label).name,
                "date": context.get("date"),
            }
        )
    commits = sorted({str(r["commit"]) for r in listed})
    if len(commits) > 1 and warnings is not None:
        warnings.append(
            f"the runs were built from {len(commits)} commits ({', '.join(c[:12] for c in commits)}): "
            "pool only runs whose benchmarks and harness did not change between them"
        )
    # The pooled context is a whole run's: a GPU that left the host-bound benchmarks to another
    # (run --gpus) is pooled beside it, and the pool holds them.
    whole = next((c for _, d in runs if not ran_a_part(c := d.get("context") or {})), first_context)
    context = {**whole, levels.RUNS_KEY: listed}
    return {"context": context, "benchmarks": pooled_rows}


def listing_held(context: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A pooled `context` whose runs list only the processes that `rows` carry, the runs that
    none carries left out: restricted to some benchmarks (update --filter), a pool listed a run
    that measured none of them, and the baseline counted it among its cards and hosts."""
    runs = context.get(levels.RUNS_KEY)
    if not isinstance(runs, list):
        return dict(context)
    carried = {row.get(PROCESS_KEY, 1) for row in rows}
    held = [{**run, "processes": [p for p in run["processes"] if p in carried]} for run in runs]
    return {**context, levels.RUNS_KEY: [run for run in held if run["processes"]]}


def _check_processes(label: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Each row's process, which pooling numbers anew, is a whole number as run writes it: a
    list there stopped the update with a TypeError, and text was pooled as a process no run
    had."""
    for row in rows:
        process = row.get(PROCESS_KEY, 1)
        whole = isinstance(process, int) or (isinstance(process, float) and process.is_integer())
        if isinstance(process, bool) or not whole:
            raise InputError(
                f"{label}: {row_identity(row)}: {PROCESS_KEY} is {process!r}, not a process "
                "number; give the result as kernelwatch run wrote it"
            )
