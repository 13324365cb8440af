"""The committed baselines on disk: one folder per GPU model, named by its slug, found, listed
and matched to a run's GPU (never another model's)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelwatch import noise as noises
from kernelwatch import project
from kernelwatch.errors import InputError
from kernelwatch.gbench import read_json
from kernelwatch.results import BASELINE_RESULT, BASELINE_RESULT_PACKED, gpu_model

MANIFEST_FILE = "manifest.json"

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
        """The folder's result: the compressed one where it holds it, else the JSON text."""
        packed = self.directory / BASELINE_RESULT_PACKED
        return packed if packed.is_file() else self.directory / BASELINE_RESULT

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
    if not may_create:
        raise InputError(
            f"--baselines {root}: no such folder (to start a new set of baselines, create it)"
        )


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST_FILE
    try:
        if not path.exists():
            return {}
    except OSError as exc:
        raise _unreadable(exc, path) from None
    document = read_json(path)
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a baseline manifest (not a JSON object)")
    return document


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
    return any((directory / name).is_file() for name in (BASELINE_RESULT_PACKED, BASELINE_RESULT))


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
