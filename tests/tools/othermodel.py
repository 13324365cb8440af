"""Real H200 results made into another GPU model's, for the tests of a model kernelwatch has no
baseline for: the context's GPU keys rewritten as a run on that card records them
(docs/results.md), the times scaled (that model is not as fast as an H200), and every counter
derived from a time or a peak recomputed, so that nothing of the H200 shows through."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from kernelwatch.gbench import read_json

# Counters that are rates: they scale with 1 / time.
RATES = (
    "bytes_per_second",
    "elements_per_second",
    "flop_per_second",
    "shared_bytes_per_second",
    "shared_bytes_per_second_per_sm",
)


@dataclass(frozen=True)
class Model:
    """One GPU model as its runtime, driver and NVML report it."""

    name: str
    capability: str
    sm_count: int
    memory_bytes: int
    l2_bytes: int
    memory_clock_khz: int
    bus_width_bits: int
    sm_clock_khz: int
    power_w: int
    pcie_generation: int
    nvlink_links: int
    ecc: str
    mig: str
    ceiling: float  # the measured copy ceiling, bytes/s
    slower: float  # its times / the H200's

    @property
    def peak(self) -> int:
        return 2 * self.memory_clock_khz * 1000 * self.bus_width_bits // 8


A100 = Model(
    "NVIDIA A100-SXM4-80GB", "8.0", 108, 85_097_971_712, 41_943_040, 1_593_000, 5120,
    1_410_000, 400, 4, 12, "on", "disabled", 1.79e12, 2.3,
)  # fmt: skip
RTX_4090 = Model(
    "NVIDIA GeForce RTX 4090", "8.9", 128, 25_386_352_640, 75_497_472, 10_501_000, 384,
    2_520_000, 450, 4, 0, "off", "unsupported", 0.92e12, 4.6,
)  # fmt: skip
# A MIG slice: the runtime reports the slice's SMs and memory, and the whole card's bus.
A100_MIG = Model(
    "NVIDIA A100-SXM4-40GB MIG 1g.5gb", "8.0", 14, 5_100_273_664, 5_242_880, 1_215_000, 5120,
    1_410_000, 400, 4, 12, "on", "enabled", 0.19e12, 18.0,
)  # fmt: skip


def card_uuid(n: int) -> str:
    return f"GPU-a100{n:04x}-0000-0000-0000-{n:012x}"


def as_model(
    document: dict[str, Any],
    model: Model,
    card: str,
    host_cards: tuple[str, ...] | None = None,
    *,
    started: str | None = None,
) -> dict[str, Any]:
    """`document` (a real run) as a run of `model` on `card`, of a host whose cards are
    `host_cards` (default: `card` alone)."""
    out = copy.deepcopy(document)
    context = out["context"]
    host = host_cards or (card,)
    memory_mhz = str(model.memory_clock_khz // 1000)
    sm_mhz = str(model.sm_clock_khz // 1000)
    context.update(
        {
            "gpu_name": model.name,
            "gpu_compute_capability": model.capability,
            "gpu_sm_count": str(model.sm_count),
            "gpu_memory_bytes": str(model.memory_bytes),
            "gpu_l2_cache_bytes": str(model.l2_bytes),
            "gpu_memory_clock_khz": str(model.memory_clock_khz),
            "gpu_memory_bus_width_bits": str(model.bus_width_bits),
            "gpu_peak_bandwidth_bytes_per_second": str(model.peak),
            "gpu_sm_clock_khz": str(model.sm_clock_khz),
            "gpu_ecc": model.ecc,
            "gpu_uuid": card,
            "gpu_pcie_generation": str(model.pcie_generation),
            "gpu_pcie_max_generation": str(model.pcie_generation),
            "gpu_nvlink_active_links": str(model.nvlink_links),
            "gpu_application_sm_clock_mhz": sm_mhz,
            "gpu_max_sm_clock_mhz": sm_mhz,
            "gpu_application_memory_clock_mhz": memory_mhz,
            "gpu_max_memory_clock_mhz": memory_mhz,
            "gpu_power_limit_w": str(model.power_w),
            "gpu_mig_mode": model.mig,
            "host_gpu_count": str(len(host)),
            "host_gpu_uuids": ",".join(sorted(host)),
            "host_gpu_names": ",".join([model.name] * len(host)),
            "kernelwatch_copy_ceiling_bytes_per_second": str(int(model.ceiling)),
        }
    )
    if started is not None:
        context["kernelwatch_run_started"] = started
    kernels = context.get("kernelwatch_kernels")
    if isinstance(kernels, dict):
        kernels["arch"] = "sm_" + model.capability.replace(".", "")
    for row in out["benchmarks"]:
        _scale(row, model)
    return out


def _scale(row: dict[str, Any], model: Model) -> None:
    aggregate = row.get("aggregate_name")
    if aggregate in ("stddev", "cv"):
        return  # a spread: stddev scales too, but the tests read repetitions
    for key in ("real_time", "cpu_time"):
        if isinstance(row.get(key), (int, float)):
            row[key] *= model.slower
    for key in RATES:
        if isinstance(row.get(key), (int, float)):
            row[key] /= model.slower
    rate = row.get("bytes_per_second")
    if isinstance(rate, (int, float)):
        if "peak_fraction" in row:
            row["peak_fraction"] = rate / model.peak
        if "ceiling_fraction" in row:
            row["ceiling_fraction"] = rate / model.ceiling
    if "sm_clock_mhz" in row:
        row["sm_clock_mhz"] = model.sm_clock_khz / 1000 * 0.999


def write_as_model(source: Path, target: Path, model: Model, card: str, **kwargs: Any) -> Path:
    document = read_json(source)
    target.write_text(json.dumps(as_model(document, model, card, **kwargs)))
    return target
