"""`baseline update`: check a result (or pooled runs), build the new result, noise and
manifest (prepare_update, which writes nothing), then write the folder as a whole (write).
Last, what it refuses, each in one line: a file or run given twice (with distinct_cards, a card
measured twice), a part of the suite taken for the whole, benchmarks dropped unasked, a run with
errors or too few repetitions, a run measured while other processes computed on its GPU, and a
partial update from another measuring environment."""

from __future__ import annotations

import datetime
import functools
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwatch import defaults, levels
from kernelwatch import noise as noises
from kernelwatch.baseline import (
    MANIFEST_FILE,
    MANIFEST_SCHEMA,
    NO_GPU,
    Entry,
    check_same_gpu,
    context_slug,
    groups,
    ran_a_part,
    read_manifest,
    refuse_other_model,
    restrict,
)
from kernelwatch.baseline.pool import listing_held, pool
from kernelwatch.errors import InputError, compile_regex, shortened
from kernelwatch.files import strict_json, write_folder, write_json, write_json_gz
from kernelwatch.gbench import FileColumns, read_document, read_json
from kernelwatch.loading import from_columns, from_documents
from kernelwatch.results import (
    HOST_BOUND_ON_KEY,
    BASELINE_RESULT,
    BASELINE_RESULT_PACKED,
    FAILED_KEY,
    MEASURING_KEYS,
    RECORD_KEYS,
    check_times,
    gpu_model,
    occupied,
    slowed_on_purpose,
)

DEFAULT_MIN_REPETITIONS = defaults.BASELINE_MIN_REPETITIONS


class TooFewRepetitions(InputError):
    """A benchmark with fewer repetitions than the minimum (--min-repetitions)."""


@dataclass(frozen=True)
class Update:
    """What `baseline update` decided: the files' new contents, and what they replace."""

    entry: Entry
    document: dict[str, Any]  # the new result.json
    noise: dict[str, Any]  # the new noise.json
    manifest: dict[str, Any]  # the new manifest.json
    previous: dict[str, Any] | None  # the old result.json, if there was one
    replaced: dict[str, Any]  # the part of the new result that was taken (for "what moved")
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    packed: bool = False  # the result written compressed (result.json.gz)
    units: str = ""  # the runs' cards and hosts, in words (cards_and_hosts)


def prepare_update(
    root: Path,
    result_paths: Sequence[Path],
    *,
    filter: str | None = None,
    min_repetitions: int = DEFAULT_MIN_REPETITIONS,
    command: str = "",
    drop_missing: bool = False,
    compress: bool = False,
    distinct_cards: bool = False,
) -> Update:
    """Check a result (or several runs of one build on other cards and hosts, pooled) and build
    the new baseline from it; writes nothing (see `write`). Without `filter` the result must
    cover the whole suite, and (unless `drop_missing`) every benchmark the baseline holds. The
    result is written compressed with `compress`, or where the baseline already is. With
    `distinct_cards` every run must name its card, each another one."""
    if drop_missing and filter:
        raise InputError(
            "--drop-missing: only for a whole update; with --filter the other benchmarks are kept"
        )
    if (root / MANIFEST_FILE).is_file():  # a model's folder, given for the folder of them all
        raise InputError(
            f"--baselines {root}: is one GPU model's baseline; give the folder that holds them "
            f"({root.parent})"
        )
    runs = _read_runs(result_paths, filter)
    if distinct_cards:
        one_card_twice(runs)
    units = cards_and_hosts(runs)
    pooled = _pooled(runs)
    pattern, chosen = _choose(pooled, filter, min_repetitions)
    entry, previous = _previous(root, pooled)

    chosen_set = set(chosen)
    taken = restrict(pooled.document, chosen_set)
    notes: list[str] = []
    new_document = _new_document(pooled, previous, taken, pattern, drop_missing, notes)
    whole = read_document(str(entry.result), new_document)
    noise, processes = _noise(entry, new_document, whole, chosen_set, bool(filter), notes)
    warnings = [
        *pooled.warnings,
        *_build_warnings(pooled.label, pooled.context),
        *_one_process_warning(pooled.label, processes, chosen),
        *_fewer_units_warning(pooled.label, previous, pooled.context),
    ]
    manifest = _manifest(
        entry, pooled.context, pooled.parsed, chosen, filter, command, whole, result_paths[0]
    )
    manifest["processes"] = min(processes.values()) if processes else 0
    manifest["noise_file"] = noises.NOISE_FILE
    return Update(
        entry,
        new_document,
        noise,
        manifest,
        previous,
        taken,
        tuple(notes),
        tuple(warnings),
        packed=compress or entry.packed,
        units=units,
    )


def _read_runs(result_paths: Sequence[Path], filter: str | None) -> list[tuple[str, Any]]:
    """Each result file read and checked as compare checks it, and the files as a set: no file
    or run given twice, and (without `filter`) no run of a part of the suite."""
    for path in result_paths:
        if path.is_dir():
            raise InputError(f"{path}: a baseline is made from result files, not a directory")
        if not path.exists():
            raise InputError(f"{path}: no such file")
    same_file(result_paths)
    runs = [(str(p), read_json(p)) for p in result_paths]
    for run_label, run in runs:
        check_times(from_documents(run_label, [run]))  # compare's checks, file by file
    same_run(runs)
    failed_processes(runs)
    if not filter:
        partial_runs(runs)
    return runs


@dataclass(frozen=True)
class _Pooled:
    """The result a baseline is made from: one run, or several pooled."""

    label: str  # names it in messages
    document: dict[str, Any]
    parsed: FileColumns
    context: dict[str, Any]
    slug: str  # its GPU model's baseline folder
    warnings: tuple[str, ...]  # pooling's


def _pooled(runs: Sequence[tuple[str, Any]]) -> _Pooled:
    """The runs pooled into one result, checked to be measured as a baseline is: not slowed on
    purpose, nor beside another process on its GPU (runner/occupants.py), on a GPU it
    records."""
    for run_label, run in runs:
        context = run.get("context") if isinstance(run, dict) else None
        said = occupied(context) if isinstance(context, dict) else None
        if said is not None:
            raise InputError(
                f"{run_label}: {said}; a baseline is measured with the GPU to itself: "
                "measure it again"
            )
    pool_warnings: list[str] = []
    document = pool(runs, pool_warnings)
    label = runs[0][0] if len(runs) == 1 else f"{len(runs)} pooled runs"
    parsed = read_document(label, document)
    context = document.get("context") or {}
    if not isinstance(context, dict):
        context = {}
    # What one run established against its baseline says nothing of a baseline's own runs (a
    # result judged against one, verdict.as_run_judged, is read for it).
    for key in RECORD_KEYS:
        context.pop(key, None)
    slowed = slowed_on_purpose(context)
    if slowed:
        raise InputError(
            f"{label}: {slowed}, a run slowed down on purpose for the selftest; a baseline is "
            "measured without it"
        )
    slug = context_slug(context)
    if slug is None:
        raise InputError(f"{label}: {NO_GPU}; a baseline belongs to one GPU model")
    return _Pooled(label, document, parsed, context, slug, tuple(pool_warnings))


def _choose(
    pooled: _Pooled, filter: str | None, min_repetitions: int
) -> tuple[re.Pattern[str] | None, list[str]]:
    """The benchmarks taken from the result (those `filter` matches, or all), each checked to be
    a clean run with enough repetitions; and the compiled filter."""
    label, parsed = pooled.label, pooled.parsed
    pattern = _compile(filter)
    chosen = [n for n in parsed.names if pattern is None or pattern.search(n)]
    if not chosen:
        raise InputError(
            f"{label}: --filter {shortened(repr(filter))} matches no benchmark in the result"
        )
    errors(label, parsed, set(chosen))
    few_repetitions(label, parsed, set(chosen), min_repetitions)
    return pattern, chosen


def _previous(root: Path, pooled: _Pooled) -> tuple[Entry, dict[str, Any] | None]:
    """The baseline folder of the result's GPU model, and the result it holds (None if none),
    checked to be of the same GPU model. A folder whose manifest records a baseline holds its
    result: one missing or damaged there was read as none, and the update wrote a new baseline
    of what it was given over the manifest's 356 benchmarks."""
    entry = Entry(pooled.slug, root / pooled.slug, read_manifest(root / pooled.slug))
    check_same_gpu(entry, pooled.context, pooled.label)
    result = entry.result
    if not (result.exists() or result.is_symlink()):
        if entry.manifest:
            raise InputError(
                f"{entry.directory}: its {MANIFEST_FILE} records a baseline, but there is no "
                f"{BASELINE_RESULT_PACKED} or {BASELINE_RESULT} beside it: restore it (git "
                "checkout), or remove the folder to start the baseline anew"
            )
        return entry, None
    previous = read_json(result)  # (refuses a folder, a FIFO, a device, damaged JSON)
    read_document(str(result), previous)  # a damaged baseline is not built upon
    old_model = gpu_model(previous.get("context") or {})
    if old_model:
        refuse_other_model(pooled.label, pooled.context, str(result), old_model)
    return entry, previous


def _build_warnings(label: str, context: Mapping[str, Any]) -> list[str]:
    """What of the build makes a doubtful baseline (uncommitted changes, not Release)."""
    warnings: list[str] = []
    commit = str(context.get("kernelwatch_git_commit", ""))
    if commit.endswith("-dirty"):
        warnings.append(f"{label}: built from a tree with uncommitted changes ({commit})")
    build_type = context.get("kernelwatch_build_type")
    if build_type and build_type != "Release":
        warnings.append(f"{label}: a {build_type} build, not Release")
    return warnings


def _new_document(
    pooled: _Pooled,
    previous: Mapping[str, Any] | None,
    taken: Mapping[str, Any],
    pattern: re.Pattern[str] | None,
    drop_missing: bool,
    notes: list[str],
) -> dict[str, Any]:
    """The new result.json: a partial update (--filter) replaces the benchmarks `taken` in the
    baseline and keeps the others; a whole update is `taken`."""
    if pattern is not None and previous is not None:
        other_environment(pooled.label, previous.get("context") or {}, pooled.context)
        other_units(pooled.label, previous.get("context") or {}, pooled.context)
        rows = _replaced_rows(previous, taken, pattern, notes)
    else:
        if previous is not None and not drop_missing:
            dropping(pooled.label, previous, set(groups(taken["benchmarks"])))
        rows = taken["benchmarks"]
    return {"context": listing_held(pooled.context, rows), "benchmarks": rows}


def _replaced_rows(
    previous: Mapping[str, Any],
    taken: Mapping[str, Any],
    pattern: re.Pattern[str],
    notes: list[str],
) -> list[Mapping[str, Any]]:
    """The baseline's rows in their order, each benchmark's replaced by the result's where it
    has it, then the result's new benchmarks."""
    old_groups = groups(previous.get("benchmarks", []))
    new_groups = groups(taken["benchmarks"])
    rows: list[Mapping[str, Any]] = []
    for name, group in old_groups.items():
        rows += new_groups.get(name, group)
    rows += [r for name, group in new_groups.items() if name not in old_groups for r in group]
    pattern_kept = [n for n in old_groups if pattern.search(n) and n not in new_groups]
    if pattern_kept:
        notes.append(
            f"{len(pattern_kept)} benchmark(s) of the baseline match the filter but are not "
            f"in the result; kept as they were (first: {pattern_kept[0]})"
        )
    return rows


def _one_process_warning(
    label: str, processes: Mapping[str, int], chosen: Sequence[str]
) -> list[str]:
    if min(processes.get(name, 1) for name in chosen) < 2:
        return [
            f"{label}: some benchmarks come from one process only, so their stored noise "
            "covers only the spread inside that process; measure baselines with "
            "`kernelwatch run --processes 2` (the default) or more, or give two files of "
            "separate runs (nvbench's, Google Benchmark's)"
        ]
    return []


def _fewer_units_warning(
    label: str, previous: Mapping[str, Any] | None, context: Mapping[str, Any]
) -> list[str]:
    """A baseline pooled from several cards or hosts replaced by runs on fewer: the spreads it
    measured between them are gone (a pool of seven H200 cards by one run: every later
    comparison at the card, kind or host level falls back on the priors, docs/measurement.md)."""
    if previous is None:
        return []
    old = levels.units_of(previous.get("context") or {})
    new = levels.units_of(context)
    old_cards, new_cards = ({u.card for u in units} for units in (old, new))
    old_hosts, new_hosts = ({u.host for u in units} for units in (old, new))
    if len(new_cards) >= len(old_cards) and len(new_hosts) >= len(old_hosts):
        return []
    return [
        f"{label}: the baseline was pooled from {levels.describe(old)}, this update from "
        f"{levels.describe(new)}: the spreads between cards, kinds and hosts are measured from "
        "fewer of them, or not at all (then the priors); pool runs of several cards "
        "(baseline update RUN1 RUN2 ..., docs/ci.md)"
    ]


def _noise(
    entry: Entry,
    document: dict[str, Any],
    whole: FileColumns,
    chosen: set[str],
    partial: bool,
    notes: list[str],
) -> tuple[dict[str, Any], dict[str, int]]:
    """noise.json for the new result, and each benchmark's number of processes. A partial
    update measures the noise of the benchmarks it replaces and keeps the stored noise of the
    others (measured with the processes they were measured with). `whole`: `document` read."""
    result = from_columns(str(entry.result), whole)
    measured = noises.measure(result)
    processes = dict(zip(measured.names, measured.processes.tolist()))
    keep: dict[str, Any] = {}
    stored = entry.stored_noise if partial else None
    if stored is not None:
        try:
            old = noises.read_noise_file(stored)["benchmarks"]
        except InputError as exc:
            notes.append(f"the previous noise is measured again: {exc}")
        else:
            keep = {n: e for n, e in old.items() if n not in chosen and n in result.index}
            for name, e in keep.items():
                if isinstance(e.get("processes"), int):
                    processes[name] = e["processes"]
    return noises.noise_document(measured, document["context"], keep=keep), processes


def write(update: Update) -> list[str]:
    """Write the folder as a whole (files.write_folder): a reader, or a later update after a
    kill, finds the old result, noise and manifest or the new ones, never a mix. Returns notes
    on what an interrupted earlier update left (cleaned up)."""
    result, other = (
        (BASELINE_RESULT_PACKED, BASELINE_RESULT)
        if update.packed
        else (BASELINE_RESULT, BASELINE_RESULT_PACKED)
    )
    files = {
        result: functools.partial(
            write_json_gz if update.packed else write_json, document=update.document
        ),
        noises.NOISE_FILE: functools.partial(write_json, document=update.noise),
        MANIFEST_FILE: functools.partial(write_json, document=update.manifest),
    }
    return write_folder(update.entry.directory, files, drop=[other])


def _compile(filter: str | None) -> re.Pattern[str] | None:
    return compile_regex(filter, "--filter") if filter else None


# The context's values the manifest keeps as text: a number there made a manifest that every
# later update, show and report refused.
_CONTEXT_TEXT = ("kernelwatch_git_commit", "date", "gpu_name", "gpu_compute_capability")


def _manifest(
    entry: Entry,
    context: Mapping[str, Any],
    parsed: FileColumns,
    chosen: Sequence[str],
    filter: str | None,
    command: str,
    whole: FileColumns,
    source: Path,
) -> dict[str, Any]:
    for key in _CONTEXT_TEXT:  # what the manifest's reader requires as text (baseline/)
        value = context.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError(
                f"{source}: the context's {key} is {type(value).__name__}, not a string"
            )
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    taken = set(chosen)  # (in the condition it was built again for every name: quadratic)
    counts = [c for n, c in zip(parsed.names, parsed.counts) if n in taken]
    produced_by = str(
        context.get("kernelwatch_run_command") or context.get("executable") or "unknown"
    )
    record = {
        "updated": now,
        "commit": context.get("kernelwatch_git_commit"),
        "date": context.get("date"),
        "driver": context.get("gpu_driver_version"),
        "cuda_runtime": context.get("cuda_runtime_version"),
        "command": produced_by,
        "update_command": command,
        "filter": filter or None,
        "benchmarks": len(chosen),
        "repetitions": min(counts) if counts else 0,
        "source": source.name,
    }
    history = list(entry.manifest.get("history") or [])
    return {
        "schema_version": MANIFEST_SCHEMA,
        "slug": entry.slug,
        "gpu_name": context.get("gpu_name"),
        "gpu_compute_capability": context.get("gpu_compute_capability"),
        "commit": record["commit"],
        "date": record["date"],
        "driver": record["driver"],
        "cuda_runtime": record["cuda_runtime"],
        "cuda_driver_api": context.get("cuda_driver_api_version"),
        "build_type": context.get("kernelwatch_build_type"),
        "cache_mode": context.get("kernelwatch_cache_mode"),
        "command": produced_by,
        "repetitions": min(whole.counts) if whole.counts else 0,
        "max_time": context.get("kernelwatch_max_time"),
        "random_interleaving": context.get("kernelwatch_random_interleaving"),
        "benchmarks": len(whole.names),
        "updated": now,
        "history": history + [record],
    }


# What `baseline update` refuses, each in one line.


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


def _units(runs: Sequence[tuple[str, Any]]) -> list[tuple[str, levels.Unit]]:
    """Each run's card and host, named by its file (a pooled result's runs: by their own)."""
    return [
        (label if len(units) == 1 else f"{label}'s run {k + 1}", unit)
        for label, document in runs
        for units in [levels.units_of(_context(document))]
        for k, unit in enumerate(units)
    ]


def _first_of_each_card(
    units: Sequence[tuple[str, levels.Unit]],
) -> tuple[dict[str, str], list[tuple[str, str, str]], list[str]]:
    """Each card's first run, the runs of a card met before (run, first, card), and the runs
    that name no card."""
    first: dict[str, str] = {}
    again: list[tuple[str, str, str]] = []
    nameless: list[str] = []
    for label, unit in units:
        if unit.card is None:
            nameless.append(label)
        elif first.setdefault(unit.card, label) != label:
            again.append((label, first[unit.card], unit.card))
    return first, again, nameless


def cards_and_hosts(runs: Sequence[tuple[str, Any]]) -> str:
    """How many cards and hosts the runs were measured on, in words: the spreads between
    cards and between hosts are measured between distinct ones (noise.py), so runs of one card
    add processes of it, not a card, and a run that names none measures no spread."""
    units = _units(runs)
    cards, again, nameless = _first_of_each_card(units)
    hosts = {unit.host for _, unit in units} - {None}
    text = f"{len(units)} on {len(cards)} card(s) of {len(hosts)} host(s)"
    unhosted = sum(unit.host is None for _, unit in units)
    unnamed = [
        f"{n} naming no {what}" for n, what in ((len(nameless), "card"), (unhosted, "host")) if n
    ]
    if unnamed:
        text += f" ({', '.join(unnamed)}: no spread measured there)"
    for label, first, card in again:
        text += (
            f"; {label} is of {first}'s card ({card}): one card's runs pool as more processes "
            "of it, not as another card"
        )
    for label, unit in units:
        if unit.card is not None and "," in unit.card:  # (merge names every part's card)
            text += (
                f"; {label} was merged from the runs of {unit.card.count(',') + 1} cards and "
                "pools as one, the spread between them unmeasured: pool the files it was merged "
                "from instead"
            )
    return text


def one_card_twice(runs: Sequence[tuple[str, Any]]) -> None:
    """Runs meant to be one card each (the baseline workflow's: one job per runner): a card
    measured twice, or a run that does not say its card, would leave the pool fewer cards than
    its runs, and its spread between cards measured from fewer (or none) unsaid."""
    _, again, nameless = _first_of_each_card(_units(runs))
    if nameless:
        raise InputError(
            f"{nameless[0]}: names no card (no gpu_uuid in its context); --distinct-cards: each "
            "run on a card of its own, which a run must name"
        )
    if again:
        label, first, card = again[0]
        raise InputError(
            f"{label}: measured on the card of {first} ({card}); --distinct-cards: each run on "
            "a card of its own (run the baseline workflow with at most as many runs as the model "
            "has runners, or pool them without --distinct-cards)"
        )


def failed_processes(runs: Sequence[tuple[str, Any]]) -> None:
    """A run that kept going past crashed, hung or GPU-less processes (run's partial result):
    what they would have measured is absent, and a whole update would drop it or a pooled one
    hold it from fewer runs; nor is a card that just crashed a kernel one to measure on."""
    for label, document in runs:
        context = document.get("context") if isinstance(document, dict) else None
        failed = context.get(FAILED_KEY) if isinstance(context, dict) else None
        if failed:
            # (run writes a list of lines; any other value still records a failure)
            lines = failed if isinstance(failed, list) else [failed]
            raise InputError(
                f"{label}: {len(lines)} of its benchmark processes failed ({FAILED_KEY}: "
                f"{lines[0]}); a baseline is made from runs that finished, so measure it again"
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
            part = f"the host-bound benchmarks left to {context[HOST_BOUND_ON_KEY]}"
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
            f"{label}: {len(bad)} benchmark(s) have errors or were skipped (first: "
            f"{shortened(name)}: {shortened(message)}); a baseline needs a clean run"
        )


def few_repetitions(label: str, parsed: FileColumns, chosen: set[str], need: int) -> None:
    for name, count, aggregated in zip(parsed.names, parsed.counts, parsed.from_aggregates):
        if name not in chosen:
            continue
        if aggregated:
            raise InputError(
                f"{label}: {shortened(name)} has only aggregates (mean/median), no repetitions; "
                "a baseline keeps the repetitions"
            )
        if count < need:
            raise TooFewRepetitions(
                f"{label}: {shortened(name)} has {count} repetition(s); a baseline needs at least "
                f"{need} (--min-repetitions)"
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
    if before != after:
        raise InputError(
            f"{label}: {levels.describe(after)}, the baseline "
            f"{levels.describe(before)}{_unlike(before, after)}: a partial update (--filter) "
            "would take the benchmarks it keeps for this result's; update it whole, from runs "
            "on the baseline's cards pooled (the baseline workflow, docs/ci.md)"
        )
    # The kept rows keep their process numbers, which the new list of runs assigns to its runs:
    # runs of other process counts would give kept rows to the wrong card and host.
    if _processes_per_run(old) != _processes_per_run(new):
        raise InputError(
            f"{label}: its runs have {_processes_per_run(new)} process(es), the baseline's "
            f"{_processes_per_run(old)}: a partial update (--filter) would give the benchmarks "
            "it keeps to other runs; measure with the baseline's --processes, or update it whole"
        )


def _unlike(before: Sequence[levels.Unit], after: Sequence[levels.Unit]) -> str:
    """What differs between runs that count alike (one card each, say): else the line read
    "1 run(s) on 1 card(s) of 1 host(s), the baseline 1 run(s) on 1 card(s) of 1 host(s)"."""
    if levels.describe(before) != levels.describe(after):
        return ""
    parts = (("card", "cards"), ("host", "hosts"), ("config", "host configurations"))
    unlike = [
        what
        for key, what in parts
        if [getattr(u, key) for u in before] != [getattr(u, key) for u in after]
    ]
    return f", but other {' and '.join(unlike)}" if unlike else ", in another order"


def _processes_per_run(context: Mapping[str, Any]) -> list[int] | None:
    """How many processes each run of a pooled result holds; None for a result of one run."""
    runs = context.get(levels.RUNS_KEY)
    if not isinstance(runs, list):
        return None
    return [len(r.get("processes") or []) if isinstance(r, Mapping) else 0 for r in runs]
