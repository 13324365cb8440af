"""Checking that two results were measured in comparable environments (their `context`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelwatch.errors import InputError
from kernelwatch.results import gpu_model

# Context keys that change timings without changing the GPU model: differences are warned about.
WATCHED_KEYS: Mapping[str, str] = {
    "gpu_driver_version": "driver",
    "cuda_driver_api_version": "CUDA driver API",
    "cuda_runtime_version": "CUDA runtime",
    "gpu_sm_clock_khz": "SM clock (kHz)",
    "gpu_memory_clock_khz": "memory clock (kHz)",
    "gpu_ecc": "ECC",
    "kernelwatch_cache_mode": "cache mode",
    "kernelwatch_build_type": "build type",
}


def check_environment(
    baseline: Mapping[str, Any], contender: Mapping[str, Any], allow_gpu_mismatch: bool
) -> tuple[list[str], list[str]]:
    """Return (warnings, notes) for two contexts; refuse different GPU models unless allowed."""
    warnings: list[str] = []
    notes: list[str] = []
    base_gpu, cont_gpu = gpu_model(baseline), gpu_model(contender)
    if base_gpu is None and cont_gpu is None:
        notes.append("no GPU recorded in either context: environment check skipped")
        return warnings, notes
    if base_gpu is None or cont_gpu is None:
        side = "baseline" if base_gpu is None else "contender"
        warnings.append(f"the {side} records no GPU; cannot check that the GPUs match")
        return warnings, notes
    if base_gpu != cont_gpu:
        message = f"different GPU models: baseline {base_gpu}, contender {cont_gpu}"
        if not allow_gpu_mismatch:
            raise InputError(f"{message} (pass --allow-gpu-mismatch to compare anyway)")
        warnings.append(message)
    for key, label in WATCHED_KEYS.items():
        if key in baseline and key in contender and str(baseline[key]) != str(contender[key]):
            warnings.append(
                f"different {label}: baseline {baseline[key]}, contender {contender[key]}"
            )
    return warnings, notes
