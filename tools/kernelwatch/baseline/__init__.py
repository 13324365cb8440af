"""Baselines: one committed result per GPU model, `baselines/<gpu-slug>/`.

    baselines/nvidia-h100-80gb-hbm3-sm90/result.json     the suite's result (with repetitions)
    baselines/nvidia-h100-80gb-hbm3-sm90/noise.json      each benchmark's noise (noise/)
    baselines/nvidia-h100-80gb-hbm3-sm90/manifest.json   commit, date, driver, runtime, command,
                                                         and the history of updates

A run is compared with the baseline of its exact GPU model (name and compute capability), never
with another one. Files are only written by `kernelwatch baseline update`.

    pool.py      runs of one build on several cards or hosts pooled into one result
    update.py    `baseline update`: check, build the new files, write them as a whole; what it
                 refuses (a file twice, a part for the whole, ...)
    show.py      `baseline show`'s text: provenance, updates, the stored noise per level; the
                 JSON documents of `baseline list|show --format json`

Here, what a comparison needs, read top to bottom: the folders (slugs, listing, finding the
baseline of a GPU model), then a run's baseline, whole and with its stored noise, ready to
compare (a result's rows by benchmark, a result restricted to some benchmarks). update and show
load at their first use (module __getattr__; pool.py is update's), so that `compare` loads none
of their code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernelwatch import loaded_at_first_use, project
from kernelwatch import noise as noises
from kernelwatch.errors import InputError, shortened
from kernelwatch.files import FOLDER_NAME_MAX, check_input_file
from kernelwatch.gbench import check_envelope, read_json
from kernelwatch.loading import baseline_folder_result, folder_files, held_result, load_streamed
from kernelwatch.names import without_aggregate
from kernelwatch.results import (
    BASELINE_RESULT,
    BASELINE_RESULT_PACKED,
    HOST_BOUND_ON_KEY,
    ResultSet,
    gpu_model,
)

# The committed baselines on disk: one folder per GPU model, named by its slug, found, listed and
# matched to a run's GPU (never another model's).

MANIFEST_FILE = "manifest.json"
MANIFEST_SCHEMA = 1

HOW_TO_CREATE = (
    "create one on this GPU with: kernelwatch run --no-compare --out RESULT.json && "
    "kernelwatch baseline update RESULT.json (see baselines/README.md)"
)


# The context keys that name a result's GPU, and how a binary without the harness records them
# (Google Benchmark 1.7 and 1.8 copy each --benchmark_context=KEY=VALUE into the JSON's context).
GPU_KEYS = (
    "gpu_name and gpu_compute_capability; a Google Benchmark binary without kernelwatch's "
    "harness records them with --benchmark_context=gpu_name=NAME "
    "--benchmark_context=gpu_compute_capability=X.Y"
)
NO_GPU = f"the result records no GPU ({GPU_KEYS})"


# A longer slug names no folder that `baseline update` can write (a slug of 250 characters
# passed a check of 255, and the update stopped at its staging folder's name, "File name too
# long", after printing what it would write).
SLUG_MAX = FOLDER_NAME_MAX


def gpu_slug(name: str, capability: str) -> str:
    """ "NVIDIA H100 80GB HBM3", "9.0" -> "nvidia-h100-80gb-hbm3-sm90"."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    # MAJOR.MINOR as CUDA writes it: its digits alone made "9.00" and "09.0" baselines of
    # their own (sm900, sm090), and "9.0/../x" the H100's.
    version = re.fullmatch(r"([1-9][0-9]?)\.([0-9])", str(capability))
    sm = "".join(version.groups()) if version else ""
    # (values cut: a GPU name of 5,000 characters made a line of 5,000)
    gpu = (
        f"cannot name a baseline for GPU {shortened(repr(name), 60)}, compute capability "
        f"{shortened(repr(capability), 60)}"
    )
    if not base:
        raise InputError(gpu)
    if not sm:
        raise InputError(f"{gpu} (not MAJOR.MINOR, as 9.0)")
    slug = f"{base}-sm{sm}"
    if len(slug) > SLUG_MAX:  # (it was "File name too long", the whole path quoted)
        raise InputError(f"{gpu}: a folder name of {len(slug):,} characters (at most {SLUG_MAX})")
    return slug


def context_slug(context: Mapping[str, Any]) -> str | None:
    """The baseline slug of a result's GPU, or None when its context records no GPU; refuses
    a name or capability that is not text (a number named a baseline no run would find)."""
    name, capability = context.get("gpu_name"), context.get("gpu_compute_capability")
    if not name or not capability:
        return None
    for key, value in (("gpu_name", name), ("gpu_compute_capability", capability)):
        if not isinstance(value, str):
            raise InputError(
                f"the result's {key} is {value!r}, not text as Google Benchmark writes it: "
                "no GPU model can be named from it"
            )
    return gpu_slug(name, capability)


# How to name the baselines folder where no project is found (project.root's line).
NAME_ROOT = "name the baselines folder with --baselines DIR"


def default_root() -> Path:
    """baselines/ in the project being measured (kernelwatch.project); refuses without one."""
    return project.root(NAME_ROOT) / "baselines"


def found_root() -> Path | None:
    """baselines/ in the project being measured, or None where there is none (for the commands
    that read it only when it is there: the suite's kernelwatch.toml, report's baseline)."""
    found = project.find()
    return None if found is None else found / "baselines"


@dataclass(frozen=True)
class Entry:
    """One GPU's baseline folder."""

    slug: str
    directory: Path
    manifest: Mapping[str, Any] = field(default_factory=dict)

    @property
    def result(self) -> Path:
        """The folder's result (loading.held_result), else where the JSON text would be."""
        return held_result(self.directory) or self.directory / BASELINE_RESULT

    @property
    def packed(self) -> bool:
        return self.result.name == BASELINE_RESULT_PACKED

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST_FILE

    @property
    def noise_path(self) -> Path:
        return self.directory / noises.NOISE_FILE

    @property
    def stored_noise(self) -> Path | None:
        """The folder's noise.json to read, None where it has none (noise.beside)."""
        return noises.beside(self.directory)

    @property
    def gpu(self) -> str:
        name = self.manifest.get("gpu_name")
        if not name:
            return "?"
        capability = self.manifest.get("gpu_compute_capability")
        return gpu_model({"gpu_name": name, "gpu_compute_capability": capability}) or "?"


def may_create_root(given: str | None) -> bool:
    """Whether `baseline update` may make the baselines folder: only the checkout's own
    (--baselines not given, or naming it)."""
    default = found_root()
    return not given or (default is not None and Path(given).resolve() == default.resolve())


def check_root(root: Path, *, may_create: bool) -> None:
    """Refuse a baselines folder that is a file, or missing unless `may_create` (the checkout's
    own baselines/): a mistyped --baselines must not grow a tree of folders."""
    if root.is_dir():
        return
    if root.exists():
        raise InputError(f"--baselines {root}: not a folder")
    if root.is_symlink():  # (mkdir would fail on it with "File exists")
        raise InputError(
            f"--baselines {root}: a link to a missing folder; create the folder it names, or "
            "remove the link"
        )
    if not may_create:
        raise InputError(
            f"--baselines {root}: no such folder (to start a new set of baselines, create it)"
        )


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST_FILE
    try:
        if not path.exists() and not path.is_symlink():  # (a dangling link is no "none")
            return {}
    except OSError as exc:
        raise _unreadable(exc, path) from None
    # (a FIFO: read_json reads a pipe, and `baseline list` waited for a writer for ever)
    check_input_file(path, "a baseline manifest", pipe=False)
    document = read_json(path)
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a baseline manifest (not a JSON object)")
    _check_manifest(document, path, directory.name)
    return document


# The fields whose type the commands rely on (`history`: update and show walk its records).
_MANIFEST_FIELDS: dict[str, type] = {
    "schema_version": int,
    "slug": str,
    "gpu_name": str,
    "gpu_compute_capability": str,
    "commit": str,
    "date": str,
    "benchmarks": int,
    "repetitions": int,
    "processes": int,
    "history": list,
}


def _check_manifest(manifest: Mapping[str, Any], path: Path, slug: str) -> None:
    """Refuse a manifest that update would overwrite with less than it knows (a newer
    schema's, another folder's) or that show and update cannot read (fields of other types).
    An empty one is a baseline without a manifest, as one with none."""
    for key, kind in _MANIFEST_FIELDS.items():
        value = manifest.get(key)
        if value is None:  # (not known: an nvbench run's commit)
            continue
        if isinstance(value, bool) or not isinstance(value, kind):
            raise InputError(
                f"{path}: not a baseline manifest ({key} is {type(value).__name__}, "
                f"not {kind.__name__})"
            )
    if not all(isinstance(record, dict) for record in manifest.get("history") or []):
        raise InputError(f"{path}: not a baseline manifest (history holds a non-object)")
    version = manifest.get("schema_version") or MANIFEST_SCHEMA
    if not 1 <= version <= MANIFEST_SCHEMA:
        raise InputError(
            f"{path}: manifest schema {version}, which this kernelwatch does not read (it reads "
            f"{MANIFEST_SCHEMA}; a newer kernelwatch wrote it?)"
        )
    if manifest.get("slug") not in (None, slug):
        raise InputError(f"{path}: the manifest of {manifest['slug']}, in the folder of {slug}")


def entries(root: Path) -> list[Entry]:
    """Every baseline under `root` (folders holding a result.json or result.json.gz), by slug."""
    try:
        if not root.is_dir():
            return []
        # (hidden folders: what an interrupted update left, files.folder_leftovers)
        folders = sorted(p for p in root.iterdir() if p.is_dir() and p.name[0] != ".")
        kept = [d for d in folders if holds_result(d)]
    except OSError as exc:  # a folder that may not be read (is_dir raises EACCES)
        raise _unreadable(exc, root) from None
    return [Entry(d.name, d, read_manifest(d)) for d in kept]


def holds_result(directory: Path) -> bool:
    return held_result(directory) is not None


def find(root: Path, slug: str) -> Entry | None:
    directory = root / slug
    try:
        present = holds_result(directory)
    except OSError as exc:
        raise _unreadable(exc, directory) from None
    return Entry(slug, directory, read_manifest(directory)) if present else None


def _unreadable(exc: OSError, where: Path) -> InputError:
    return InputError(f"{exc.filename or where}: cannot read: {exc.strerror or exc}")


def available_text(root: Path) -> str:
    found = entries(root)
    if not found and not root.is_dir():  # (a mistyped --baselines is not an empty folder)
        return f"{root}: {'not a folder' if root.exists() else 'no such folder'}"
    if not found:
        return f"there are no baselines in {root}"
    return f"available in {root}: " + ", ".join(e.slug for e in found)


class NoBaseline(InputError):
    """There is no baseline for the result's GPU (as opposed to one that cannot be read):
    `report` shows the page without a comparison then, and stops (exit 2) on a broken one."""


def resolve(root: Path, context: Mapping[str, Any], result_label: str) -> Entry:
    """The baseline of the result's exact GPU model; refuses (one line) when there is none."""
    slug = context_slug(context)
    if slug is None:
        raise NoBaseline(
            f"{result_label}: {NO_GPU}, so it has no baseline; pass --baseline FILE, or "
            "--no-compare"
        )
    entry = find(root, slug)
    if entry is None:
        # The result is written (run writes it before it looks for the baseline; report reads
        # it): it can be the baseline itself. Measuring again into it, as HOW_TO_CREATE says,
        # would overwrite the very run `report` was asked about.
        raise NoBaseline(
            f"no baseline for this GPU ({gpu_model(context)}, {slug}): "
            f"{available_text(root)}; to make this run its first baseline: kernelwatch baseline "
            f"update {result_label} (baselines/README.md, 'Adding a GPU')"
        )
    check_same_gpu(entry, context, result_label)
    return entry


def check_same_gpu(entry: Entry, context: Mapping[str, Any], label: str) -> None:
    if entry.manifest.get("gpu_name") is None:
        return
    theirs = gpu_model(
        {
            "gpu_name": entry.manifest.get("gpu_name"),
            "gpu_compute_capability": entry.manifest.get("gpu_compute_capability"),
        }
    )
    refuse_other_model(label, context, f"baseline {entry.slug}", theirs)


def refuse_other_model(
    label: str, context: Mapping[str, Any], holder: str, theirs: str | None
) -> None:
    """One baseline is one GPU model: `holder` (a baseline, its result file) holds `theirs`."""
    if theirs != gpu_model(context):
        raise InputError(
            f"{label}: measured on {gpu_model(context)}, but {holder} holds {theirs}; "
            "a baseline is one GPU model"
        )


# A run's baseline, ready to compare with: the one given with --baseline, else the committed one
# of its GPU model; whole (what a part of the suite did not run is left out by the comparison,
# completeness.outside_part); with its stored noise.


def read_result(path: Path) -> dict[str, Any]:
    """A baseline's result document, refused (one line, naming it) unless it has the shape its
    readers take for granted (a baseline of `[1]` stopped `run` with an AttributeError)."""
    return check_envelope(str(path), read_json(path))


def result_documents(path: Path) -> list[Any]:
    """A --baseline file; a baseline's folder, its result, as `compare` reads it (the compressed
    H100 baseline's folder held "no benchmark results"); else the result files of a folder."""
    if not path.exists():
        raise InputError(f"--baseline {path}: no such file or directory")
    result = baseline_folder_result(path) if path.is_dir() else path
    if result is not None:
        documents = [read_result(result)]
    else:
        documents = []
        for file in folder_files(path):
            document = read_json(file)
            # (a baseline's manifest.json has a "benchmarks" count, not a list)
            if isinstance(document, dict) and isinstance(document.get("benchmarks"), list):
                documents.append(check_envelope(str(file), document))
    # As `compare` words it: "holds none of these benchmarks; update it" named a file of no
    # rows, which no update of a file named by hand fills.
    if not any(document["benchmarks"] for document in documents):
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
        """A file read `whole` is read again as a document here (verdict.find_baseline keeps a
        part of the suite's benchmarks in `read`, `run --confirm` the flagged)."""
        return self.read if self.read is not None else [read_result(Path(self.label))]


def against(
    root: Path | None,
    context: Mapping[str, Any],
    result_label: str,
    *,
    given: Path | None = None,
) -> Against:
    """The baseline of a run: `given`, else the committed one of its GPU model; with its stored
    noise. One path from a run to its verdict (docs/compare.md)."""
    if given is not None:
        path, how = given, "given with --baseline"
        file = given if given.is_file() else None
    else:
        entry = resolve(root if root is not None else default_root(), context, result_label)
        path, how = entry.result, f"this GPU's baseline ({entry.slug})"
        file = entry.result
    whole = load_streamed(file) if file is not None else None
    if whole is not None:
        noise, warning = noises.stored_beside(path, whole.context or {})
        return Against(str(path), how, None, noise, warning, whole)
    documents = result_documents(given) if given is not None else [read_result(path)]
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
        context.get(key) for key in ("kernelwatch_filter", "kernelwatch_shard", HOST_BOUND_ON_KEY)
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


if TYPE_CHECKING:
    from kernelwatch.baseline.show import describe, list_document, show_document
    from kernelwatch.baseline.update import (
        DEFAULT_MIN_REPETITIONS,
        TooFewRepetitions,
        Update,
        prepare_update,
        write,
    )

_LOADED_AT_FIRST_USE = {
    "describe": "show",
    "list_document": "show",
    "show_document": "show",
    "DEFAULT_MIN_REPETITIONS": "update",
    "TooFewRepetitions": "update",
    "Update": "update",
    "prepare_update": "update",
    "write": "update",
}


def __getattr__(name: str) -> Any:
    return loaded_at_first_use(__name__, _LOADED_AT_FIRST_USE, name)


__all__ = [
    "DEFAULT_MIN_REPETITIONS",
    "GPU_KEYS",
    "HOW_TO_CREATE",
    "MANIFEST_SCHEMA",
    "NO_GPU",
    "Against",
    "Entry",
    "NoBaseline",
    "TooFewRepetitions",
    "Update",
    "against",
    "available_text",
    "check_root",
    "context_slug",
    "default_root",
    "describe",
    "entries",
    "find",
    "holds_result",
    "found_root",
    "gpu_slug",
    "groups",
    "list_document",
    "may_create_root",
    "prepare_update",
    "ran_a_part",
    "read_as_given",
    "read_manifest",
    "resolve",
    "read_result",
    "restrict",
    "result_documents",
    "show_document",
    "write",
]
