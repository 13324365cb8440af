"""Baselines: one committed result per GPU model, `baselines/<gpu-slug>/`.

    baselines/nvidia-h100-80gb-hbm3-sm90/result.json     the suite's result (with repetitions)
    baselines/nvidia-h100-80gb-hbm3-sm90/noise.json      each benchmark's noise (noise.py)
    baselines/nvidia-h100-80gb-hbm3-sm90/manifest.json   commit, date, driver, runtime, command,
                                                         and the history of updates

A run is compared with the baseline of its exact GPU model (name and compute capability), never
with another one. Files are only written by `kernelwatch baseline update`.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelwatch import levels
from kernelwatch import noise as noises
from kernelwatch.errors import InputError
from kernelwatch.files import json_text, write_folder
from kernelwatch.gbench import FileColumns, read_document, read_json
from kernelwatch.names import without_aggregate
from kernelwatch.provenance import slowed_on_purpose
from kernelwatch.results import PROCESS_KEY, from_documents, gpu_model

RESULT_FILE = "result.json"
MANIFEST_FILE = "manifest.json"
MANIFEST_SCHEMA = 1
DEFAULT_MIN_REPETITIONS = 10

# Context keys that must agree when only part of a baseline is replaced (--filter): one
# baseline file is one measuring environment.
ENVIRONMENT_KEYS = {
    "gpu_driver_version": "driver",
    "cuda_runtime_version": "CUDA runtime",
    "cuda_driver_api_version": "CUDA driver API",
    "kernelwatch_cache_mode": "cache mode",
    "kernelwatch_build_type": "build type",
}

HOW_TO_CREATE = (
    "create one on this GPU with: kernelwatch run --no-compare --out RESULT.json && "
    "kernelwatch baseline update RESULT.json (see baselines/README.md)"
)


def gpu_slug(name: str, capability: str) -> str:
    """ "NVIDIA H100 80GB HBM3", "9.0" -> "nvidia-h100-80gb-hbm3-sm90"."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    sm = re.sub(r"[^0-9]", "", str(capability))
    if not base or not sm:
        raise InputError(
            f"cannot name a baseline for GPU {name!r}, compute capability {capability!r}"
        )
    return f"{base}-sm{sm}"


def context_slug(context: Mapping[str, Any]) -> str | None:
    """The baseline slug of a result's GPU, or None when its context records no GPU."""
    name, capability = context.get("gpu_name"), context.get("gpu_compute_capability")
    if not name or not capability:
        return None
    return gpu_slug(str(name), str(capability))


def project_root() -> Path:
    """The checkout this package runs from (where tools/ lives), else the current folder (an
    installed package)."""
    package = Path(__file__).resolve().parent
    tools = package.parent
    if tools.name == "tools" and (tools / "pyproject.toml").is_file():
        return tools.parent
    return Path.cwd()


def default_root() -> Path:
    return project_root() / "baselines"


@dataclass(frozen=True)
class Entry:
    """One GPU's baseline folder."""

    slug: str
    directory: Path
    manifest: Mapping[str, Any] = field(default_factory=dict)

    @property
    def result(self) -> Path:
        return self.directory / RESULT_FILE

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST_FILE

    @property
    def noise_path(self) -> Path:
        return self.directory / noises.NOISE_FILE

    @property
    def gpu(self) -> str:
        name = self.manifest.get("gpu_name")
        if not name:
            return "?"
        capability = self.manifest.get("gpu_compute_capability")
        return gpu_model({"gpu_name": name, "gpu_compute_capability": capability}) or "?"


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST_FILE
    if not path.exists():
        return {}
    document = read_json(path)
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a baseline manifest (not a JSON object)")
    return document


def entries(root: Path) -> list[Entry]:
    """Every baseline under `root` (folders holding a result.json), by slug."""
    if not root.is_dir():
        return []
    found = []
    # (hidden folders: what an interrupted update left, files.folder_leftovers)
    for directory in sorted(p for p in root.iterdir() if p.is_dir() and p.name[0] != "."):
        if (directory / RESULT_FILE).is_file():
            found.append(Entry(directory.name, directory, read_manifest(directory)))
    return found


def find(root: Path, slug: str) -> Entry | None:
    directory = root / slug
    if (directory / RESULT_FILE).is_file():
        return Entry(slug, directory, read_manifest(directory))
    return None


def available_text(root: Path) -> str:
    found = entries(root)
    if not found:
        return f"there are no baselines in {root}"
    return f"available in {root}: " + ", ".join(e.slug for e in found)


def resolve(root: Path, context: Mapping[str, Any], result_label: str) -> Entry:
    """The baseline of the result's exact GPU model; refuses (one line) when there is none."""
    slug = context_slug(context)
    if slug is None:
        raise InputError(
            f"{result_label}: the result records no GPU (gpu_name, gpu_compute_capability), "
            "so it has no baseline; pass --baseline FILE, or --no-compare"
        )
    entry = find(root, slug)
    if entry is None:
        raise InputError(
            f"no baseline for this GPU ({gpu_model(context)}, {slug}): "
            f"{available_text(root)}; {HOW_TO_CREATE.replace('RESULT.json', result_label)}"
        )
    _check_same_gpu(entry, context, result_label)
    return entry


def _check_same_gpu(entry: Entry, context: Mapping[str, Any], label: str) -> None:
    if entry.manifest.get("gpu_name") is None:
        return
    theirs = gpu_model(
        {
            "gpu_name": entry.manifest.get("gpu_name"),
            "gpu_compute_capability": entry.manifest.get("gpu_compute_capability"),
        }
    )
    if theirs != gpu_model(context):
        raise InputError(
            f"{label}: measured on {gpu_model(context)}, but baseline {entry.slug} holds "
            f"{theirs}; a baseline is one GPU model"
        )


# --- rows -----------------------------------------------------------------------------------


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


# --- update ---------------------------------------------------------------------------------


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
    """One result from runs of one build on several cards or hosts of one GPU model: every
    run's rows, their processes numbered anew (1..P over all runs), and each run's card, host,
    host configuration and processes listed in the context (levels.RUNS_KEY), so that the
    spread between cards and between hosts can be measured (noise.py). Runs of other commits are
    pooled with a warning in `warnings`: say in the review why their timed code is the same."""
    if len(runs) == 1:
        return runs[0][1]  # read_document checks it
    for label, document in runs:
        read_document(label, document)
    first_label, first = runs[0]
    first_context = first.get("context") or {}
    pooled_rows: list[Mapping[str, Any]] = []
    listed: list[dict[str, Any]] = []
    offsets: dict[str, int] = {}  # repetition_index moves past earlier runs', as runner.merge
    for label, document in runs:
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
        if any(levels.RUNS_KEY in (d.get("context") or {}) for _, d in runs):
            raise InputError(f"{label}: already a pooled baseline; pool the runs it came from")
        numbers: dict[Any, int] = {}
        counts: dict[str, int] = {}
        for row in document.get("benchmarks", []):
            process = row.get(PROCESS_KEY, 1)
            if process not in numbers:
                numbers[process] = 1 + sum(len(r["processes"]) for r in listed) + len(numbers)
            moved = {**row, PROCESS_KEY: numbers[process]}
            name = row_identity(row)
            if isinstance(row.get("repetition_index"), int):
                moved["repetition_index"] = offsets.get(name, 0) + row["repetition_index"]
                counts[name] = max(counts.get(name, 0), row["repetition_index"] + 1)
            pooled_rows.append(moved)
        for name, count in counts.items():
            offsets[name] = offsets.get(name, 0) + count
        listed.append(
            {
                **levels.unit_of(context).as_dict(),
                "commit": context.get("kernelwatch_git_commit"),
                "processes": sorted(numbers.values()),
                "source": Path(label).name,
                "date": context.get("date"),
                "host_cpu_model": context.get("host_cpu_model"),
                "host_cpu_cores": context.get("host_cpu_cores"),
                "host_gpu_count": context.get("host_gpu_count"),
            }
        )
    commits = sorted({str(r["commit"]) for r in listed})
    if len(commits) > 1 and warnings is not None:
        warnings.append(
            f"the runs were built from {len(commits)} commits ({', '.join(c[:12] for c in commits)}): "
            "pool only runs whose benchmarks and harness did not change between them"
        )
    context = {**first_context, levels.RUNS_KEY: listed}
    return {"context": context, "benchmarks": pooled_rows}


def prepare_update(
    root: Path,
    result_paths: Sequence[Path],
    *,
    filter: str | None = None,
    min_repetitions: int = DEFAULT_MIN_REPETITIONS,
    command: str = "",
) -> Update:
    """Check a result (or several runs of one build on other cards and hosts, pooled) and build
    the new baseline from it; writes nothing (see `write`)."""
    for path in result_paths:
        if path.is_dir():
            raise InputError(f"{path}: a baseline is made from result files, not a directory")
        if not path.exists():
            raise InputError(f"{path}: no such file")
    result_path = result_paths[0]
    pool_warnings: list[str] = []
    document = pool([(str(p), read_json(p)) for p in result_paths], pool_warnings)
    label = str(result_path) if len(result_paths) == 1 else f"{len(result_paths)} pooled runs"
    parsed = read_document(label, document)
    context = document.get("context") or {}

    if not isinstance(context, dict):
        context = {}
    slowed = slowed_on_purpose(context)
    if slowed:
        raise InputError(
            f"{label}: {slowed}, a run slowed down on purpose for the selftest; a baseline is "
            "measured without it"
        )
    slug = context_slug(context)
    if slug is None:
        raise InputError(
            f"{label}: the result records no GPU (gpu_name, gpu_compute_capability); "
            "a baseline belongs to one GPU model"
        )
    pattern = _compile(filter)
    chosen = [n for n in parsed.names if pattern is None or pattern.search(n)]
    if not chosen:
        raise InputError(f"{label}: --filter {filter!r} matches no benchmark in the result")
    _refuse_errors(label, parsed, set(chosen))
    _refuse_few_repetitions(label, parsed, set(chosen), min_repetitions)

    entry = Entry(slug, root / slug, read_manifest(root / slug))
    _check_same_gpu(entry, context, label)
    previous = read_json(entry.result) if entry.result.is_file() else None
    if previous is not None:
        read_document(str(entry.result), previous)  # a damaged baseline is not built upon
        old_model = gpu_model(previous.get("context") or {})
        if old_model and old_model != gpu_model(context):
            raise InputError(
                f"{label}: measured on {gpu_model(context)}, but {entry.result} holds "
                f"{old_model}; a baseline is one GPU model"
            )

    warnings = list(pool_warnings)
    commit = str(context.get("kernelwatch_git_commit", ""))
    if commit.endswith("-dirty"):
        warnings.append(f"{label}: built from a tree with uncommitted changes ({commit})")
    build_type = context.get("kernelwatch_build_type")
    if build_type and build_type != "Release":
        warnings.append(f"{label}: a {build_type} build, not Release")

    chosen_set = set(chosen)
    taken = restrict(document, chosen_set)
    notes: list[str] = []
    if filter and previous is not None:
        _refuse_other_environment(label, previous.get("context") or {}, context)
        old_groups = groups(previous.get("benchmarks", []))
        new_groups = groups(taken["benchmarks"])
        rows: list[Mapping[str, Any]] = []
        for name, group in old_groups.items():
            rows += new_groups.get(name, group)
        rows += [r for name, group in new_groups.items() if name not in old_groups for r in group]
        pattern_kept = [
            n for n in old_groups if pattern and pattern.search(n) and n not in new_groups
        ]
        if pattern_kept:
            notes.append(
                f"{len(pattern_kept)} benchmark(s) of the baseline match the filter but are not "
                f"in the result; kept as they were (first: {pattern_kept[0]})"
            )
        new_document = {"context": dict(context), "benchmarks": rows}
    else:
        new_document = {"context": dict(context), "benchmarks": taken["benchmarks"]}

    whole = read_document(str(entry.result), new_document)
    noise, processes = _noise(entry, new_document, chosen_set, bool(filter), notes)
    if min(processes.get(name, 1) for name in chosen) < 2:
        warnings.append(
            f"{label}: some benchmarks come from one process only, so their stored noise "
            "covers only the spread inside that process; measure baselines with "
            "`kernelwatch run --processes 2` (the default) or more"
        )
    manifest = _manifest(entry, context, parsed, chosen, filter, command, whole, result_path)
    manifest["processes"] = min(processes.values()) if processes else 0
    manifest["noise_file"] = noises.NOISE_FILE
    return Update(
        entry, new_document, noise, manifest, previous, taken, tuple(notes), tuple(warnings)
    )


def _noise(
    entry: Entry,
    document: dict[str, Any],
    chosen: set[str],
    partial: bool,
    notes: list[str],
) -> tuple[dict[str, Any], dict[str, int]]:
    """noise.json for the new result, and each benchmark's number of processes. A partial
    update measures the noise of the benchmarks it replaces and keeps the stored noise of the
    others (measured with the processes they were measured with)."""
    result = from_documents(str(entry.result), [document])
    measured = noises.measure(result)
    processes = dict(zip(measured.names, measured.processes.tolist()))
    keep: dict[str, Any] = {}
    if partial and entry.noise_path.is_file():
        try:
            old = noises.read_noise_file(entry.noise_path)["benchmarks"]
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
    documents = {
        RESULT_FILE: update.document,
        noises.NOISE_FILE: update.noise,
        MANIFEST_FILE: update.manifest,
    }
    return write_folder(
        update.entry.directory,
        {name: json_text(document).encode("utf-8") for name, document in documents.items()},
    )


def _compile(filter: str | None) -> re.Pattern[str] | None:
    if not filter:
        return None
    try:
        return re.compile(filter)
    except re.error as exc:
        raise InputError(f"--filter {filter!r}: bad regex: {exc}") from None


def _refuse_errors(label: str, parsed: FileColumns, chosen: set[str]) -> None:
    bad = [(n, m) for n, m in parsed.errors.items() if n in chosen]
    bad += [(n, f"skipped: {m}") for n, m in parsed.skipped.items() if n in chosen]
    if bad:
        name, message = bad[0]
        raise InputError(
            f"{label}: {len(bad)} benchmark(s) have errors or were skipped (first: {name}: "
            f"{message}); a baseline needs a clean run"
        )


def _refuse_few_repetitions(label: str, parsed: FileColumns, chosen: set[str], need: int) -> None:
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


def _refuse_other_environment(label: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    for key, what in ENVIRONMENT_KEYS.items():
        if key in old and key in new and str(old[key]) != str(new[key]):
            raise InputError(
                f"{label}: different {what} (baseline {old[key]}, result {new[key]}): a partial "
                "update (--filter) must keep the baseline's environment; update it whole"
            )


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
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    counts = [c for n, c in zip(parsed.names, parsed.counts) if n in set(chosen)]
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


def result_documents(path: Path) -> list[Any]:
    """A --baseline file, or the result files of a folder (a baseline's manifest.json and
    noise.json skipped)."""
    if not path.exists():
        raise InputError(f"--baseline {path}: no such file or directory")
    if not path.is_dir():
        return [read_json(path)]
    documents = []
    for file in sorted(p for p in path.glob("*.json") if p.is_file()):
        document = read_json(file)
        # (a baseline's manifest.json has a "benchmarks" count, not a list)
        if isinstance(document, dict) and isinstance(document.get("benchmarks"), list):
            documents.append(document)
    if not documents:
        raise InputError(f"--baseline {path}: holds no benchmark results")
    return documents


@dataclass(frozen=True)
class Against:
    """A run's baseline, ready to compare with: what `run`, `report` and `ab` all judge by."""

    label: str
    how: str  # "given with --baseline" or "this GPU's baseline (SLUG)"
    documents: list[Any]  # restricted to the run's benchmarks when only a part of it ran
    noise: noises.LevelNoise | None  # the stored noise per level, if the baseline has one
    warning: str | None  # a stored noise that does not belong to the baseline, said once


def against(
    root: Path,
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
        documents = result_documents(given)
    else:
        entry = resolve(root, context, result_label)
        path, how = entry.result, f"this GPU's baseline ({entry.slug})"
        documents = [read_json(entry.result)]
    if names is not None:
        documents = [d for d in (restrict(d, names) for d in documents) if d.get("benchmarks")]
    first = (documents[0].get("context") or {}) if documents else {}
    noise, warning = noises.stored_beside(path, first)
    return Against(str(path), how, documents, noise, warning)


def ran_a_part(context: Mapping[str, Any]) -> bool:
    """Whether a run's context says it covered only a part of the suite."""
    return bool(context.get("kernelwatch_filter")) or bool(context.get("kernelwatch_shard"))
