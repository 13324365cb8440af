"""What `baseline update` refuses, each in one line: a file or run given twice, a part of the
suite taken for the whole, benchmarks dropped unasked, a run with errors or too few repetitions,
and a partial update from another measuring environment."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kernelwatch import hostbound, levels
from kernelwatch.baseline.against import ran_a_part
from kernelwatch.baseline.rows import groups
from kernelwatch.environment import MEASURING_KEYS
from kernelwatch.errors import InputError
from kernelwatch.files import strict_json
from kernelwatch.gbench import FileColumns
from kernelwatch.results import FAILED_KEY


def same_file(paths: Sequence[Path]) -> None:
    """One file named twice (or by two paths) would be pooled as two runs with no spread
    between them: the stored noise would be understated."""
    seen: dict[tuple[int, int], Path] = {}
    for path in paths:
        try:
            info = os.stat(path)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
        first = seen.setdefault((info.st_dev, info.st_ino), path)
        if first is not path:
            same = "" if str(first) == str(path) else f" (the same file as {first})"
            raise InputError(f"{path}: given twice{same}; pool the runs of other cards or hosts")


# A run's identity in its context: the moment `run` started and the card(s) it measured. Two
# files that agree on both are copies of one run, however formatted.
RUN_IDENTITY_KEYS = ("kernelwatch_run_started", "gpu_uuid")


def same_run(runs: Sequence[tuple[str, Any]]) -> None:
    """Copies of one run (the same identity, or the same content) pooled as two."""
    if len(runs) < 2:
        return
    seen: dict[Any, str] = {}
    for label, document in runs:
        context = document.get("context") if isinstance(document, dict) else None
        context = context if isinstance(context, dict) else {}
        identity = tuple(str(context.get(k) or "") for k in RUN_IDENTITY_KEYS)
        if not all(identity):
            identity = (
                "content",
                hashlib.sha256(
                    strict_json(document, indent=None, sort_keys=True).encode()
                ).hexdigest(),
            )
        first = seen.setdefault(identity, label)
        if first != label:
            raise InputError(
                f"{label}: given twice (the same run as {first}); pool the runs of other cards "
                "or hosts"
            )


def failed_processes(runs: Sequence[tuple[str, Any]]) -> None:
    """A run that kept going past crashed, hung or GPU-less processes (run's partial result):
    what they would have measured is absent, and a whole update would drop it or a pooled one
    hold it from fewer runs; nor is a card that just crashed a kernel one to measure on."""
    for label, document in runs:
        context = document.get("context") if isinstance(document, dict) else None
        failed = context.get(FAILED_KEY) if isinstance(context, dict) else None
        if failed:
            raise InputError(
                f"{label}: {len(failed)} of its benchmark processes failed ({FAILED_KEY}: "
                f"{failed[0]}); a baseline is made from runs that finished, so measure it again"
            )


def partial_runs(runs: Sequence[tuple[str, Any]]) -> None:
    """A run of a part of the suite (run --filter, --shard) taken as a whole would drop every
    other benchmark of the baseline. A GPU of `run --gpus` that left the host-bound benchmarks
    to another GPU of its host is pooled beside a run that measured them."""
    contexts = [(label, _context(document)) for label, document in runs]
    whole = any(not ran_a_part(context) for _, context in contexts)
    for label, context in contexts:
        if not ran_a_part(context):
            continue
        if context.get("kernelwatch_filter"):
            part = f"run --filter {context['kernelwatch_filter']!r}"
            instead = "update with --filter REGEX to replace only its benchmarks"
        elif context.get("kernelwatch_shard"):
            part = f"shard {context.get('kernelwatch_shard')}"
            instead = "merge the shards first (kernelwatch merge), or update with --filter REGEX"
        elif whole:
            continue  # its host-bound benchmarks come from the runs that measured them
        else:
            part = f"the host-bound benchmarks left to {context[hostbound.ON_KEY]}"
            instead = "pool it with a run that measured them, or update with --filter REGEX"
        raise InputError(f"{label}: ran a part of the suite ({part}); {instead}")


def _context(document: Any) -> Mapping[str, Any]:
    context = document.get("context") if isinstance(document, dict) else None
    return context if isinstance(context, dict) else {}


SHOWN_DROPPED = 3


def dropping(label: str, previous: Mapping[str, Any], kept: set[str]) -> None:
    """A whole update replaces the baseline: benchmarks it lacks would be gone unnoticed."""
    dropped = [n for n in groups(previous.get("benchmarks", [])) if n not in kept]
    if dropped:
        shown = ", ".join(dropped[:SHOWN_DROPPED]) + (
            ", ..." if len(dropped) > SHOWN_DROPPED else ""
        )
        raise InputError(
            f"{label}: would drop {len(dropped)} benchmark(s) the baseline holds ({shown}); "
            "--drop-missing removes them, --filter REGEX replaces only the matching ones"
        )


def errors(label: str, parsed: FileColumns, chosen: set[str]) -> None:
    bad = [(n, m) for n, m in parsed.errors.items() if n in chosen]
    bad += [(n, f"skipped: {m}") for n, m in parsed.skipped.items() if n in chosen]
    if bad:
        name, message = bad[0]
        raise InputError(
            f"{label}: {len(bad)} benchmark(s) have errors or were skipped (first: {name}: "
            f"{message}); a baseline needs a clean run"
        )


def few_repetitions(label: str, parsed: FileColumns, chosen: set[str], need: int) -> None:
    for name, count, aggregated in zip(parsed.names, parsed.counts, parsed.from_aggregates):
        if name not in chosen:
            continue
        if aggregated:
            raise InputError(
                f"{label}: {name} has only aggregates (mean/median), no repetitions; "
                "a baseline keeps the repetitions"
            )
        if count < need:
            raise InputError(
                f"{label}: {name} has {count} repetition(s); a baseline needs at least {need} "
                "(--min-repetitions)"
            )


def other_environment(label: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    # (one baseline file is one measuring environment)
    for key, what in MEASURING_KEYS.items():
        if key in old and key in new and str(old[key]) != str(new[key]):
            raise InputError(
                f"{label}: different {what} (baseline {old[key]}, result {new[key]}): a partial "
                "update (--filter) must keep the baseline's environment; update it whole"
            )


def other_units(label: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """A partial update keeps the result's context, and the benchmarks it keeps would be taken
    for this result's cards and processes: kept from a pool of seven H200 cards under one card's
    context, an unchanged run on that card got 86 false REGRESSIONs (its own run's values mixed
    with six other cards', judged at the process level)."""
    before, after = levels.units_of(old), levels.units_of(new)
    if before == after:
        return
    raise InputError(
        f"{label}: {levels.describe(after)}, the baseline "
        f"{levels.describe(before)}: a partial update (--filter) would take the benchmarks it "
        "keeps for this result's; update it whole, from runs on the baseline's cards pooled "
        "(the baseline workflow, docs/ci.md)"
    )
