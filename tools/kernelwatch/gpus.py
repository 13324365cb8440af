"""The GPUs of this host, for `run --gpus` and `selftest --gpus`: listed by nvidia-smi, each
measured by its own processes with CUDA_VISIBLE_DEVICES set to its UUID (an index would follow
CUDA's device order, which is not nvidia-smi's unless CUDA_DEVICE_ORDER=PCI_BUS_ID)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kernelwatch import completeness, defaults, runner, tool
from kernelwatch.baseline import gpu_slug
from kernelwatch.errors import InputError, NoGpuError, shortened
from kernelwatch.files import tagged
from kernelwatch.merge import GPU_INDEX_KEY
from kernelwatch.results import HOST_BOUND_ON_KEY
from kernelwatch.runner import process
from kernelwatch.verdict import Outputs

T = TypeVar("T")

QUERY = "index,uuid,name,compute_cap"


@dataclass(frozen=True)
class Gpu:
    index: int  # nvidia-smi's
    uuid: str
    name: str
    capability: str | None  # "9.0"; None where the driver cannot say

    @property
    def slug(self) -> str | None:
        """Its baseline folder's name (as the result's context will give it)."""
        return gpu_slug(self.name, self.capability) if self.capability else None

    @property
    def label(self) -> str:
        return f"GPU {self.index} ({self.name}, {self.uuid})"

    def environment(self) -> dict[str, str]:
        return {"CUDA_VISIBLE_DEVICES": self.uuid}


def parse(text: str) -> list[Gpu]:
    """nvidia-smi --query-gpu=index,uuid,name[,compute_cap] --format=csv,noheader."""
    found = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3 or not fields[0].isdigit() or not fields[1]:
            continue
        capability = fields[3] if len(fields) > 3 and fields[3][:1].isdigit() else None
        found.append(Gpu(int(fields[0]), fields[1], fields[2], capability))
    return found


def discover() -> list[Gpu]:
    """Every GPU nvidia-smi lists; exit 4 (one line) when there is none or no nvidia-smi."""
    smi = shutil.which(process.NVIDIA_SMI)
    if smi is None:
        raise NoGpuError(
            "no CUDA GPU is visible (--gpus: no nvidia-smi to list the GPUs); nothing to measure"
        )
    said = ""
    for query in (QUERY, QUERY.rsplit(",", 1)[0]):  # old drivers lack compute_cap
        command = [smi, f"--query-gpu={query}", "--format=csv,noheader"]
        try:
            done = tool.run(command, timeout=60, check=False)
        except tool.ToolError as exc:
            raise NoGpuError(
                f"no CUDA GPU is visible (--gpus: nvidia-smi failed: {exc.exception}); "
                "nothing to measure"
            ) from None
        found = parse(done.stdout) if done.status == 0 else []
        if found:
            return found
        said = tool.last_line(done.stderr + "\n" + done.stdout)
    raise NoGpuError(
        f"no CUDA GPU is visible (nvidia-smi: {said or 'no GPU listed'}); nothing to measure"
    )


def select(available: Sequence[Gpu], spec: str) -> list[Gpu]:
    """`all`, or a comma-separated list of nvidia-smi indices or UUIDs, in the order given."""
    if spec.strip() == "all":
        return list(available)
    chosen: list[Gpu] = []
    given = shortened(spec)  # (a value of 5,000 characters is not printed whole)
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            raise InputError(f"--gpus {given!r}: an empty entry; write all, or 0,1 or UUIDs")
        match = [g for g in available if str(g.index) == part or g.uuid == part]
        if not match:
            known = ", ".join(f"{g.index} ({g.uuid})" for g in available)
            raise InputError(
                f"--gpus {given}: no GPU {shortened(part)} on this host (it has {known})"
            )
        if match[0] in chosen:
            raise InputError(f"--gpus {given}: GPU {shortened(part)} given twice")
        chosen.append(match[0])
    return chosen


def one_model(chosen: Sequence[Gpu]) -> None:
    """`run --gpus ... --split`: refuses GPUs of several models. Each GPU's part is a shard of
    one suite, which merge joins for one model only; and each model's baseline would get a part
    of the suite, the host-bound benchmarks (GPU 1's part) only one model's."""
    first = chosen[0]
    second = next((gpu for gpu in chosen if gpu.name != first.name), None)
    if second is not None:
        raise InputError(
            f"--split: GPU {first.index} ({shortened(first.name)}) and GPU {second.index} "
            f"({shortened(second.name)}) are of two models, and the parts of one suite merge "
            "for one model only; give --gpus of one model, or leave out --split"
        )


# --- measuring on several GPUs at once ------------------------------------------------------


def settings_for(settings: runner.RunSettings, gpu: Gpu) -> runner.RunSettings:
    return dataclasses.replace(
        settings, gpu_uuid=gpu.uuid, environment=tuple(gpu.environment().items())
    )


def out_for(path: Path, gpu: Gpu) -> Path:
    """FILE.json -> FILE-gpu<index>.json (files.tagged): one file per GPU of a `--gpus` run."""
    return tagged(path, f"-gpu{gpu.index}")


def outputs_for(outputs: Outputs, gpu: Gpu) -> Outputs:
    """The report files (--markdown, --junit, --json) named per GPU."""

    def named(value: str | None) -> str | None:
        return str(out_for(Path(value), gpu)) if value else value

    return dataclasses.replace(
        outputs,
        junit=named(outputs.junit),
        markdown=named(outputs.markdown),
        json=named(outputs.json),
    )


# Where `run --gpus` measures the host-bound benchmarks (--host-bound-on).
HOST_BOUND_ON = defaults.HOST_BOUND_ON


@dataclass(frozen=True)
class Share:
    """What one GPU of a `--gpus` run measures, and the context its result gets; with
    `--split`, no jobs but where to claim its parts of the shared suite (runner.sharing)."""

    jobs: tuple[runner.Job, ...]
    context: Mapping[str, Any]
    claim: Callable[[], Sequence[runner.Job]] | None = None


def shares(
    chosen: Sequence[Gpu], jobs: Sequence[runner.Job], context: Mapping[str, Any], on: str
) -> dict[Gpu, Share]:
    """Every GPU measures the GPU-bound jobs; the host-bound (serial) ones run on the first GPU
    of each model only (`on` "first": each model's baseline still gets them), or on every GPU
    in turn ("each"). They time the host's memcpy and PCIe more than the card and hold the
    host alone, so on every GPU they cost N times their share of the suite while the other
    GPUs wait: on a two-GPU H100 host (GPU-fbb49afb, GPU-1fb43360) they were 90 of GPU 0's
    155 s, and `--gpus all` took 0.79x the two GPUs one after the other."""
    others = tuple(job for job in jobs if not job.serial)
    first: dict[str, Gpu] = {}
    for gpu in chosen:
        first.setdefault(gpu.name, gpu)
    found = {}
    for gpu in chosen:
        measurer = first[gpu.name]
        if gpu == measurer or on == "each" or len(others) == len(jobs):
            found[gpu] = Share(tuple(jobs), {**context, GPU_INDEX_KEY: str(gpu.index)})
            continue
        mine = {key: value for key, value in context.items() if key != completeness.WHOLE_BUILD_KEY}
        found[gpu] = Share(
            others, {**mine, GPU_INDEX_KEY: str(gpu.index), HOST_BOUND_ON_KEY: measurer.label}
        )
    return found


def on_each(chosen: Sequence[Gpu], work: Callable[[Gpu], T]) -> list[tuple[Gpu, T | InputError]]:
    """`work` on every chosen GPU at once, one thread per GPU; a GPU whose work fails gives its
    error (this project's, one line), the others still finish."""

    def one(gpu: Gpu) -> T | InputError:
        try:
            return work(gpu)
        except InputError as exc:
            return exc

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(chosen)) as pool:
        return list(zip(chosen, pool.map(one, chosen)))


def slug_of(uuid: str | None) -> str | None:
    """The baseline folder's name of the GPU with this UUID, as nvidia-smi names it; None
    where it cannot be told (no nvidia-smi, an old driver without compute_cap)."""
    if uuid is None:
        return None
    try:
        found = discover()
    except InputError:
        return None
    return next((gpu.slug for gpu in found if gpu.uuid == uuid), None)


def visible_uuid(extra_args: Sequence[str] = ()) -> str | None:
    """The UUID of the GPU a plain run measures on (CUDA_VISIBLE_DEVICES's first entry, else
    GPU 0), for its per-GPU lock; None where that cannot be told (then nothing is locked)."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if any(arg.startswith("--kernelwatch_device") for arg in extra_args):
        return None  # an index among the visible ones, in CUDA's order
    if first.startswith("GPU-"):
        return first
    if first and not first.isdigit():
        return None  # MIG-… or an empty list
    try:
        found = discover()
    except InputError:
        return None
    index = int(first) if first else 0
    return next((gpu.uuid for gpu in found if gpu.index == index), None)
