"""Reading a side of a comparison: a result file, a baseline folder, or every `*.json` (and
`*.json.gz`) result file of a directory, merged: a benchmark found in several files gets the
repetitions of all of them, and remembers which file (process) each came from
(results.ResultSet)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from kernelwatch.errors import InputError
from kernelwatch.gbench import FileColumns, read_document, read_file, read_streamed
from kernelwatch.levels import RUNS_KEY, measured_on, pooled_process_ids, unit_of
from kernelwatch.results import (
    BASELINE_RESULT,
    BASELINE_RESULT_PACKED,
    FAILED_KEY,
    NO_RESULT_KEY,
    PROCESS_KEY,
    RECORD_KEYS,
    TIME_KEYS,
    ResultSet,
    crash_list,
    gpu_model,
    joined_record,
)

_V = TypeVar("_V")


def load(path: str | Path) -> ResultSet:
    """Load a result file, or every `*.json` (`*.json.gz`) result file of a directory, merged."""
    return load_all([path])[0]


def load_all(paths: Sequence[str | Path]) -> list[ResultSet]:
    """Load several sides (files or directories), each merged as `load` does. Every path is
    checked to exist before any file is parsed (a typo fails at once, not after a big read)."""
    try:
        plans = [_expand(Path(p)) for p in paths]
    except OSError as exc:  # a folder that may not be read (is_file raises EACCES)
        raise InputError(f"{exc.filename}: cannot read: {exc.strerror or exc}") from None
    return [
        _merge(str(path), files, [read_file(str(f), in_directory) for f in files])
        for path, (files, in_directory) in zip(paths, plans)
    ]


def from_documents(label: str, documents: Sequence[Any]) -> ResultSet:
    """A side from already parsed result documents (merged as a directory's files are)."""
    names = [f"{label}[{i}]" if len(documents) > 1 else label for i in range(len(documents))]
    parsed: list[FileColumns | None] = [read_document(n, d) for n, d in zip(names, documents)]
    return _merge(label, [Path(n) for n in names], parsed)


def from_columns(label: str, columns: FileColumns) -> ResultSet:
    """A side from one document already read (gbench.read_document), as from_documents makes
    it: `baseline update` reads its new result once, for the manifest and the noise alike."""
    return _merge(label, [Path(label)], [columns])


def load_streamed(path: Path) -> ResultSet | None:
    """A usual result file as `load` reads it, a part of its rows at a time (never all of them
    as dicts); None for any other file (read it as it is read now)."""
    columns = read_streamed(str(path))
    return None if columns is None else _merge(str(path), [path], [columns])


def baseline_folder_result(root: Path) -> Path | None:
    """A baseline's folder (result.json or .json.gz, noise.json, manifest.json) given where a
    result is expected: its result (held_result); its stored noise is found beside it
    (noise.stored_beside). None for any other path."""
    return held_result(root) if (root / "manifest.json").is_file() else None


def held_result(root: Path) -> Path | None:
    """The result a baseline folder holds, the compressed one first: whatever is at that name.
    A folder or a FIFO there is refused by its reader; passed over, the folder read as one of
    no baseline, and `baseline update` wrote a new one over it."""
    for name in (BASELINE_RESULT_PACKED, BASELINE_RESULT):
        path = root / name
        if path.exists() or path.is_symlink():
            return path
    return None


def _expand(root: Path) -> tuple[list[Path], bool]:
    result = baseline_folder_result(root)
    if result is not None:
        return [result], False
    if root.is_dir():
        files = folder_files(root)
        if not files:
            raise InputError(f"{root}: directory holds no .json files")
        return files, True
    if not root.exists():
        raise InputError(f"{root}: no such file or directory")
    return [root], False


def numeric_order(path: Path) -> tuple[tuple[int, int | str], ...]:
    """A sort key reading a name's runs of digits as numbers: round-2 before round-10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(path.name)
    )


_DIGITS = re.compile(r"(\d+)")


def folder_files(root: Path) -> list[Path]:
    """The result files of a folder of runs: every `*.json`, and `*.json.gz` (folders of runs
    are archived that way: ab's rounds under tests/data); one run in both forms is refused, it
    would count as two processes. In numeric order: round-2 before round-10, as measured (a
    side's context is its first file's)."""
    found = [p for p in [*root.glob("*.json"), *root.glob("*.json.gz")] if p.is_file()]
    files = sorted(found, key=numeric_order)
    twice = sorted({p.name for p in files} & {p.name + ".gz" for p in files})
    if twice:
        raise InputError(
            f"{root}: holds {twice[0].removesuffix('.gz')} and {twice[0]}: keep one of them"
        )
    return files


def crash_only(p: FileColumns) -> bool:
    """Whether a file has no rows but the crash of its run (results.crash_list): a round of
    `ab` none of whose processes finished. It names no card nor host: it measured nothing."""
    return not p.names and crash_list(p.context) is not None


def _side_context(files: Sequence[FileColumns]) -> Mapping[str, Any]:
    """A side's context: its first measuring file's (not a crash-only one's, crash_only), with
    every file's crashes (FAILED_KEY, NO_RESULT_KEY). A folder of ab's rounds is one side, and
    ab marks a crash in any round an ERROR; compare of that folder saw the first round's only,
    and judged a benchmark that crashed later SAME. A value that is no list is kept as it is, for
    completeness.no_result to name. Files measured on several cards or hosts (the parts of a run
    sharded over cards) name them all, as `merge` of them does (levels.measured_on): judged as
    the first file's card, a card the baseline holds, the other cards' parts were held to that
    card's own run. What the parts of a run established beyond their numbers (built identically,
    not confirmed) is every part's, as `merge` joins it (results.joined_record)."""
    measuring = [f for f in files if not crash_only(f)] or list(files)
    first = measuring[0].context
    contexts = [f.context for f in measuring]
    several = len({(unit.card, unit.host) for unit in map(unit_of, contexts)}) > 1
    crashes = any(
        key in f.context
        for f in files
        if f is not measuring[0]
        for key in (FAILED_KEY, NO_RESULT_KEY)
    )
    records = {key: first.get(key) for key in RECORD_KEYS}
    if len(measuring) > 1:
        parts = [(str(f.path), f.context) for f in measuring]
        records = {key: joined_record(parts, key) for key in RECORD_KEYS}
    if not several and not crashes and all(records[k] == first.get(k) for k in RECORD_KEYS):
        return first
    context = {k: v for k, v in first.items() if k not in RECORD_KEYS}
    context.update({key: record for key, record in records.items() if record is not None})
    if several:
        context.update(measured_on(contexts))
    if not crashes:
        return context
    for key in (FAILED_KEY, NO_RESULT_KEY):
        values = [f.context[key] for f in files if key in f.context]
        damaged = [value for value in values if not isinstance(value, list)]
        context[key] = damaged[0] if damaged else [item for value in values for item in value]
    return context


def _merge(label: str, files: list[Path], parsed: list[FileColumns | None]) -> ResultSet:
    """One side from its files: a single file is used as is; several are merged by name."""
    notes = [f"{f}: skipped, not a benchmark result" for f, p in zip(files, parsed) if p is None]
    kept = [p for p in parsed if p is not None]
    notes += [note for p in kept for note in p.notes]
    if not kept:
        raise InputError(f"{label}: holds no benchmark results")
    # A crash-only file records no GPU (its binary never started one): not another model.
    _check_same_gpu([p for p in kept if not crash_only(p)] or kept)
    _check_pools(label, kept)
    _check_copies(label, kept)
    errors = _first_wins([p.errors for p in kept])
    skipped = _first_wins([p.skipped for p in kept])
    labels = _first_wins([p.labels for p in kept])
    registered = _first_wins([p.registered for p in kept])

    if len(kept) == 1:
        p = kept[0]
        counts = np.asarray(p.counts, dtype=np.int64)
        columns, gaps, process_keys = _numpy_columns(p)
        sources = np.zeros(int(counts.sum()), dtype=np.int64)
        pooled = pooled_process_ids(p.context, process_keys, str(p.path))
        result = ResultSet(
            label,
            (Path(p.path),),
            p.context,
            tuple(p.names),
            np.cumsum(counts) - counts,
            counts,
            np.asarray(p.from_aggregates, dtype=bool),
            sources,
            _process_ids(sources, process_keys) if pooled is None else pooled,
            columns,
            gaps,
            errors,
            skipped,
            tuple(notes),
        )
    else:
        result = _merge_files(label, kept, errors, skipped, notes)
    # No rows at all: a result only where every file records its run's crash (crash_only), so
    # that a round of `ab` that measured nothing still shows its crash.
    if not len(result) and not all(crash_only(p) for p in kept):
        raise InputError(f"{label}: holds no benchmark results")
    # The harness's host_bound counter, read once as the side is loaded: a value it never writes
    # (2, NaN: a hand edit) is refused for every command, where only those that asked refused
    # it (history ingest stored such a file, report drew it).
    result.host_bound(np.arange(len(result.names)))
    result.check_counters()
    return replace(result, labels=labels, registered=registered) if labels or registered else result


def _check_pools(label: str, files: Sequence[FileColumns]) -> None:
    """A baseline pooled from several runs (RUNS_KEY) is read alone: read with other results as
    one side, its runs were taken for one (the side's context its first file's: noise.row_units
    could not map their processes), or not seen at all."""
    pooled = [p for p in files if RUNS_KEY in p.context]
    measuring = [p for p in files if sum(p.counts)]
    if pooled and len(measuring) > 1:
        raise InputError(
            f"{label}: {pooled[0].path} is a baseline pooled from several runs ({RUNS_KEY}), "
            f"read here with {len(measuring) - 1} other result file(s) as one side; give it alone"
        )


def _check_copies(label: str, files: Sequence[FileColumns]) -> None:
    """Two files of one side holding the same measurements (the same benchmarks, the same
    real_time in every row: no two runs time alike to the bit) are one run given twice:
    pooled, its repetitions counted twice and its q-values smaller than measured (a folder
    with a copy of one file: 3.5e-4 became 2.3e-5), where `merge` and `baseline update`
    refuse the copy."""
    seen: dict[tuple[tuple[str, ...], bytes], str] = {}
    for p in files:
        if not sum(p.counts):
            continue
        first = seen.setdefault((tuple(p.names), p.columns["real_time"].tobytes()), p.path)
        if first != p.path:
            raise InputError(
                f"{label}: {p.path} holds the same measurements as {first}: one run given "
                "twice (its repetitions would count twice); keep one"
            )


def _first_wins(by_file: Sequence[Mapping[str, _V]]) -> dict[str, _V]:
    """The files' {benchmark: value} tables as one: a benchmark named in several keeps the
    first file's value (in the files' order, as it was first seen)."""
    merged: dict[str, _V] = {}
    for table in by_file:
        for name, value in table.items():
            merged.setdefault(name, value)
    return merged


def _numpy_columns(
    p: FileColumns,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """A file's columns as numpy arrays, times scaled to ns; and each row's process key
    (NaN where the row has none), which is not a metric."""
    scale = np.repeat(np.frombuffer(p.time_scales, dtype=float), p.counts)
    columns = {}
    for key, values in p.columns.items():
        column = np.frombuffer(values, dtype=float)
        # (1e308 s overflows to inf in ns: metric_column refuses it in one line, so numpy's
        # warning would only add a second)
        with np.errstate(over="ignore"):
            columns[key] = column * scale if key in TIME_KEYS else column
    gaps = {k: np.frombuffer(v, dtype=np.uint8).astype(bool) for k, v in p.gaps.items()}
    process_keys = columns.pop(PROCESS_KEY, None)
    if process_keys is None:
        process_keys = np.full(len(scale), np.nan)
    elif PROCESS_KEY in gaps:
        process_keys = np.where(gaps.pop(PROCESS_KEY), np.nan, process_keys)
    return columns, gaps, process_keys


def _process_ids(sources: np.ndarray, process_keys: np.ndarray) -> np.ndarray:
    """One number per distinct (file, process key) pair; rows without a key share their
    file's."""
    known = np.isfinite(process_keys)
    if not known.any():  # the usual file: one process per file
        return sources.astype(np.int64, copy=True)
    keys = np.where(known, process_keys, -1.0)
    whole = keys == np.round(keys)
    if whole.all() and keys.min() >= -1 and keys.max() < 2**20:  # small integers: one int key
        code = sources.astype(np.int64) * (2**21) + keys.astype(np.int64) + 1
        _, ids = np.unique(code, return_inverse=True)
    else:
        _, ids = np.unique(np.stack([sources.astype(float), keys]), axis=1, return_inverse=True)
    return np.asarray(ids, dtype=np.int64).reshape(-1)


def _check_same_gpu(files: list[FileColumns]) -> None:
    first = gpu_model(files[0].context)
    for p in files[1:]:
        if gpu_model(p.context) != first:
            raise InputError(
                f"{p.path}: measured on {gpu_model(p.context) or 'an unnamed GPU'}, but "
                f"{files[0].path} on {first or 'an unnamed GPU'}; one side must be one GPU model"
            )


def _merge_files(
    label: str,
    files: list[FileColumns],
    errors: dict[str, str],
    skipped: dict[str, str],
    notes: list[str],
) -> ResultSet:
    # Per benchmark, the (file, first row, count, from_aggregates) segments that hold it.
    segments: dict[str, list[tuple[int, int, int, bool]]] = {}
    for f, p in enumerate(files):
        row = 0
        for name, count, agg in zip(p.names, p.counts, p.from_aggregates):
            segments.setdefault(name, []).append((f, row, count, agg))
            row += count
    keys = sorted(
        set().union(*(p.columns for p in files)) - {PROCESS_KEY},
        key=lambda k: (k not in TIME_KEYS, k),
    )
    parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    gap_parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    names, counts, aggregated, sources, process_parts = [], [], [], [], []
    arrays, gaps, process_keys = zip(*(_numpy_columns(p) for p in files))
    left_out: dict[int, int] = {}  # file -> its benchmarks whose aggregates were left out
    for name, segs in segments.items():
        # Repetitions beat aggregates: use per-file aggregates only where no file has repetitions.
        full = [s for s in segs if s[2] and not s[3]]
        use = full or [s for s in segs if s[2]]
        for f, _, count, agg in segs if full else ():
            if agg and count:
                left_out[f] = left_out.get(f, 0) + 1
        names.append(name)
        counts.append(sum(s[2] for s in use))
        aggregated.append(not full and bool(use))
        for f, start, count, _ in use:
            sources.append(np.full(count, f))
            rows = slice(start, start + count)
            process_parts.append(process_keys[f][rows])
            for k in keys:
                column = arrays[f].get(k)
                if column is None:
                    parts[k].append(np.full(count, np.nan))
                    gap_parts[k].append(np.ones(count, dtype=bool))
                else:
                    parts[k].append(column[rows])
                    gap = gaps[f].get(k)
                    gap_parts[k].append(gap[rows] if gap is not None else np.zeros(count, bool))
    notes += [
        f"{files[f].path}: aggregates only for {n} benchmark(s) whose repetitions other files "
        "hold: left out (a median does not pool with repetitions)"
        for f, n in sorted(left_out.items())
    ]
    counts_array = np.asarray(counts, dtype=np.int64)

    def joined(chunks: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=dtype)

    gap_columns = {k: joined(g, bool) for k, g in gap_parts.items()}
    source_column = joined(sources, np.int64)
    return ResultSet(
        label,
        tuple(Path(p.path) for p in files),
        _side_context(files),
        tuple(names),
        np.cumsum(counts_array) - counts_array,
        counts_array,
        np.asarray(aggregated, dtype=bool),
        source_column,
        _process_ids(source_column, joined(process_parts, float)),
        {k: joined(v, float) for k, v in parts.items()},
        {k: g for k, g in gap_columns.items() if g.any()},
        errors,
        skipped,
        tuple(notes),
    )
