"""A run's baseline, ready to compare with: the one given with --baseline, else the committed
one of its GPU model; restricted to the benchmarks the run covered; with its stored noise."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwatch import hostbound
from kernelwatch import noise as noises
from kernelwatch.baseline.store import default_root, resolve
from kernelwatch.errors import InputError
from kernelwatch.gbench import check_envelope, read_json
from kernelwatch.loading import load_streamed
from kernelwatch.names import without_aggregate
from kernelwatch.results import ResultSet


def read_result(path: Path) -> dict[str, Any]:
    """A baseline's result document, refused (one line, naming it) unless it has the shape its
    readers take for granted (a baseline of `[1]` stopped `run` with an AttributeError)."""
    return check_envelope(str(path), read_json(path))


def result_documents(path: Path) -> list[Any]:
    """A --baseline file, or the result files of a folder (a baseline's manifest.json and
    noise.json skipped)."""
    if not path.exists():
        raise InputError(f"--baseline {path}: no such file or directory")
    if not path.is_dir():
        return [read_result(path)]
    documents = []
    for file in sorted(p for p in path.glob("*.json") if p.is_file()):
        document = read_json(file)
        # (a baseline's manifest.json has a "benchmarks" count, not a list)
        if isinstance(document, dict) and isinstance(document.get("benchmarks"), list):
            documents.append(check_envelope(str(file), document))
    if not documents:
        raise InputError(f"--baseline {path}: holds no benchmark results")
    return documents


@dataclass(frozen=True)
class Against:
    """A run's baseline, ready to compare with: what `run`, `report` and `ab` all judge by."""

    label: str
    how: str
    read: list[Any] | None  # its documents, when read as documents (see `documents`)
    noise: noises.LevelNoise | None  # the stored noise per level, if the baseline has one
    warning: str | None  # a stored noise that does not belong to the baseline, said once
    # A usual result file taken whole, read as one side a part of its rows at a time: a pooled
    # baseline of 285,000 rows is 1.3 GB as documents (then None, and `read` holds them); or
    # the side a command read itself (read_as_given).
    whole: ResultSet | None = None

    @functools.cached_property
    def documents(self) -> list[Any]:
        """Restricted to the run's benchmarks when only a part of it ran; a file read `whole`
        is read again as a document here (only `run --confirm` restricts it to the flagged)."""
        return self.read if self.read is not None else [read_result(Path(self.label))]


def against(
    root: Path | None,
    context: Mapping[str, Any],
    result_label: str,
    *,
    given: Path | None = None,
    names: set[str] | None = None,
) -> Against:
    """The baseline of a run: `given`, else the committed one of its GPU model; restricted to
    `names` (the benchmarks of a run that covered a part of the suite: --filter, --shard,
    --bench); with its stored noise. One path from a run to its verdict (docs/compare.md)."""
    if given is not None:
        path, how = given, "given with --baseline"
        file = given if names is None and given.is_file() else None
    else:
        entry = resolve(root if root is not None else default_root(), context, result_label)
        path, how = entry.result, f"this GPU's baseline ({entry.slug})"
        file = entry.result if names is None else None
    whole = load_streamed(file) if file is not None else None
    if whole is not None:
        noise, warning = noises.stored_beside(path, whole.context or {})
        return Against(str(path), how, None, noise, warning, whole)
    documents = result_documents(given) if given is not None else [read_result(path)]
    if names is not None:
        documents = [d for d in (restrict(d, names) for d in documents) if d.get("benchmarks")]
    first = (documents[0].get("context") or {}) if documents else {}
    noise, warning = noises.stored_beside(path, first)
    return Against(str(path), how, documents, noise, warning)


def read_as_given(
    label: str, side: ResultSet, noise_file: Path | None = None, *, stored: bool = True
) -> Against:
    """A baseline read by the command itself (`compare`'s BASELINE: a file or a folder, nvbench's
    too, loading.load_all), with its stored noise as `against` finds it: `noise_file`, else the
    noise.json beside it; none when not `stored` (--no-noise-file)."""
    noise, warning = (
        noises.stored_beside(Path(label), side.context, noise_file) if stored else (None, None)
    )
    return Against(label, "given as BASELINE", None, noise, warning, side)


def ran_a_part(context: Mapping[str, Any]) -> bool:
    """Whether a run's context says it covered only a part of the suite: --filter, --shard, or
    a GPU of `run --gpus` that left the host-bound benchmarks to another."""
    return any(
        context.get(key) for key in ("kernelwatch_filter", "kernelwatch_shard", hostbound.ON_KEY)
    )


# A result's rows by benchmark; a result restricted to some benchmarks.


def row_identity(row: Mapping[str, Any]) -> str:
    """The benchmark a row belongs to (its run_name; older files: name without aggregate)."""
    run_name = row.get("run_name")
    if isinstance(run_name, str) and run_name:
        return run_name
    name = str(row.get("name"))
    aggregate = row.get("aggregate_name")
    return without_aggregate(name, aggregate) if aggregate else name


def groups(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row_identity(row), []).append(row)
    return groups


def restrict(document: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    """The same result with only the rows of `names`."""
    rows = [r for r in document.get("benchmarks", []) if row_identity(r) in names]
    return {**document, "benchmarks": rows}
