"""Joining the results of shards (`run --shard K/N`) of one GPU model into one result, which
`compare`, `baseline update` and `history ingest` take like any other.

The rows are joined by runner.join_outputs (the same code that joins a run's binaries); here only
what makes the shards one measurement is checked: one commit, one GPU model, one driver, CUDA
runtime and build (environment.MEASURING_KEYS), no empty part, the same harness and run
settings (every `kernelwatch_*` context key except those that describe one process or one
job), one N, one plan (the same benchmarks before sharding: shard.plan_key), each part once.
Shards may have run on different cards of the model: the merged gpu_uuid then names them all,
so that compare treats the result as another card than any baseline's (the wider other-card
limit applies).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kernelwatch import runner, shard
from kernelwatch.environment import MEASURING_KEYS
from kernelwatch.errors import InputError
from kernelwatch.results import gpu_model
from kernelwatch.runner.precision import TOPPED_UP_KEY
from kernelwatch.shard import Shard

SHARD_KEY = "kernelwatch_shard"  # "K/N", in the context of a sharded run
SHARDS_KEY = "kernelwatch_shards"  # in a merged result: "K/N on GPU-…" for each part
GPU_INDEX_KEY = "kernelwatch_gpu_index"  # `run --gpus`: nvidia-smi's index of the GPU
PURPOSE_KEY = "kernelwatch_run_purpose"
# `run` writes a flagged benchmark's re-run beside its result (s2.json: s2.confirm-1.json), with
# this purpose: a glob over the shards' results (s*.json) also names it, but it is no part.
CONFIRM_PURPOSE = "confirm "

# Context keys that describe one job, one process or one card rather than how it measured:
# allowed to differ between the parts.
PER_JOB_KEYS = frozenset(
    {
        SHARD_KEY,
        GPU_INDEX_KEY,
        "kernelwatch_run_started",
        "kernelwatch_run_seconds",
        "kernelwatch_run_command",
        PURPOSE_KEY,
        "kernelwatch_benchmark_commands",
        "kernelwatch_serial",
        TOPPED_UP_KEY,  # each part tops up its own imprecise benchmarks
        # measured at each process start: differs between cards of one model by a few %
        "kernelwatch_copy_ceiling_bytes_per_second",
    }
)


def _shard_of(label: str, context: Mapping[str, Any]) -> Shard | None:
    text = context.get(SHARD_KEY)
    if text is None:
        return None
    return shard.parse(str(text), f"{label}: {SHARD_KEY}")


def _settings(context: Mapping[str, Any]) -> dict[str, str]:
    return {
        key: str(value)
        for key, value in context.items()
        if key.startswith("kernelwatch_") and key not in PER_JOB_KEYS and key != shard.PLAN_KEY
    }


def is_confirming_rerun(document: Mapping[str, Any]) -> bool:
    """A regression's re-run by `run --confirm`, not a result of its own."""
    return str((document.get("context") or {}).get(PURPOSE_KEY, "")).startswith(CONFIRM_PURPOSE)


def merge_results(
    inputs: Sequence[tuple[str, Mapping[str, Any]]], *, allow_partial: bool = False
) -> dict[str, Any]:
    """One result from shard results [(label, document)]; refuses (one line) mixed commits,
    models or settings, a part given twice, and (unless `allow_partial`) a missing part."""
    if len(inputs) < 1:
        raise InputError("merge: name at least one result file")
    labels = [label for label, _ in inputs]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise InputError(f"{twice}: given twice")
    first_label, first = inputs[0]
    first_context = first.get("context") or {}
    model = gpu_model(first_context)
    settings = _settings(first_context)
    shards: dict[int, str] = {}
    counts: set[int | None] = set()
    for label, document in inputs:
        context = document.get("context") or {}
        if gpu_model(context) != model:
            raise InputError(
                f"{label} ran on {gpu_model(context) or 'an unnamed GPU'}, {first_label} on "
                f"{model or 'an unnamed GPU'}: merge joins the shards of one GPU model"
            )
        _same_software(label, context, first_label, first_context)
        if not document.get("benchmarks"):
            # run never writes one: a shard that no benchmark falls in is refused (exit 2)
            raise InputError(f"{label}: holds no benchmark results: not a shard of a run")
        other = _settings(context)
        for key in sorted(set(settings) | set(other)):
            if settings.get(key) != other.get(key):
                what = "commit" if key == "kernelwatch_git_commit" else f"setting {key}"
                raise InputError(
                    f"{label} and {first_label} differ in {what} ({other.get(key, 'unset')} vs "
                    f"{settings.get(key, 'unset')}): not parts of one run"
                )
        part = _shard_of(label, context)
        counts.add(part.count if part else None)
        if len(counts) > 1:
            raise InputError(
                f"{label}: {'shard ' + str(part) if part else 'not a shard'}, unlike "
                f"{first_label} ({first_context.get(SHARD_KEY, 'not a shard')}): merge the "
                "shards of one split"
            )
        _same_plan(label, context, first_label, first_context)
        if part:
            if part.index in shards:
                raise InputError(f"{label} and {shards[part.index]} are both shard {part}")
            shards[part.index] = label
    count = next(iter(counts))
    if count is not None and len(shards) != count and not allow_partial:
        missing = sorted(set(range(1, count + 1)) - set(shards))
        raise InputError(
            f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} not given: the merged "
            "result would miss their benchmarks (--allow-partial merges what there is)"
        )
    if count is not None:  # in shard order, whatever the order on the command line
        order = {label: index for index, label in shards.items()}
        inputs = sorted(inputs, key=lambda item: order[item[0]])
    contexts = [document.get("context") or {} for _, document in inputs]
    outputs = [(Path(label), document) for label, document in inputs]
    document = runner.join_outputs(outputs, _merged_context(contexts))
    if count is not None:
        document["context"].pop(SHARD_KEY, None)
        document["context"].pop(shard.PLAN_KEY, None)
    return document


def _same_plan(
    label: str, context: Mapping[str, Any], first_label: str, first: Mapping[str, Any]
) -> None:
    """Shards of one split of one list of benchmarks (shard.plan_key): the same commit may
    build other binaries (another project's, another build's). Shards from before the key are
    merged only when every part lacks it."""
    theirs, ours = context.get(shard.PLAN_KEY), first.get(shard.PLAN_KEY)
    if theirs == ours:
        return
    if theirs is None or ours is None:
        older = label if theirs is None else first_label
        raise InputError(
            f"{older} records no {shard.PLAN_KEY} (a shard of an older kernelwatch), "
            f"{label if older == first_label else first_label} does: not parts of one run; "
            "run every shard with one kernelwatch"
        )
    raise InputError(
        f"{label} and {first_label} are shards of different plans ({shard.PLAN_KEY} {theirs} vs "
        f"{ours}): another project's or another build's benchmarks, not parts of one run"
    )


def _same_software(
    label: str, context: Mapping[str, Any], first_label: str, first: Mapping[str, Any]
) -> None:
    """One run is measured with one driver, CUDA runtime and build (environment.MEASURING_KEYS);
    a key one part records and another lacks differs too."""
    for key, what in MEASURING_KEYS.items():
        theirs, ours = context.get(key), first.get(key)
        if str(theirs) != str(ours):
            raise InputError(
                f"{label} and {first_label} differ in {what}, {key} ({theirs or 'unset'} vs "
                f"{ours or 'unset'}): not parts of one run"
            )


def _merged_context(contexts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    uuids = list(dict.fromkeys(str(c.get("gpu_uuid")) for c in contexts if c.get("gpu_uuid")))
    merged: dict[str, Any] = {
        SHARDS_KEY: [
            f"{c.get(SHARD_KEY, '-')} on {c.get('gpu_uuid', 'an unnamed GPU')}" for c in contexts
        ],
        "kernelwatch_benchmark_commands": [
            command for c in contexts for command in c.get("kernelwatch_benchmark_commands", [])
        ],
    }
    if any(TOPPED_UP_KEY in c for c in contexts):
        merged[TOPPED_UP_KEY] = sorted(
            {name for c in contexts for name in c.get(TOPPED_UP_KEY, [])}
        )
    if uuids:
        merged["gpu_uuid"] = ",".join(uuids)
    for key in ("date", "kernelwatch_run_started"):
        values = [str(c[key]) for c in contexts if c.get(key)]
        if values:
            merged[key] = min(values)  # ISO 8601 times sort as text
    seconds = [c.get("kernelwatch_run_seconds") for c in contexts]
    try:
        merged["kernelwatch_run_seconds"] = f"{sum(float(s) for s in seconds if s):.1f}"
    except (TypeError, ValueError):
        pass
    return merged
