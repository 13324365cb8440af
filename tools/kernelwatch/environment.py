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


# The software a result was measured with: a baseline file (a partial update keeps the
# baseline's) and a merged run (its shards) each hold one. Google Benchmark's own build type is
# its `library_build_type` (a debug library adds its checks to every repetition's host time).
MEASURING_KEYS: Mapping[str, str] = {
    "gpu_driver_version": "driver",
    "cuda_runtime_version": "CUDA runtime",
    "cuda_driver_api_version": "CUDA driver API",
    "kernelwatch_cache_mode": "cache mode",
    "kernelwatch_build_type": "build type",
    "library_build_type": "Google Benchmark library build type",
}

# The harness measures each run's device copy ceiling (GB/s). Two cards of one model, or one
# card at another memory clock, differ there, and bandwidth-bound times with it; beyond this
# relative difference the comparison says how to compare on equal terms.
CEILING_KEY = "kernelwatch_copy_ceiling_bytes_per_second"
CEILING_METRIC = "ceiling_fraction"
CEILING_TOLERANCE = 0.01


def check_environment(
    baseline: Mapping[str, Any],
    contender: Mapping[str, Any],
    allow_gpu_mismatch: bool,
    metric_key: str | None = None,
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
    _check_ceiling(baseline, contender, metric_key, warnings, notes)
    return warnings, notes


def _check_ceiling(
    baseline: Mapping[str, Any],
    contender: Mapping[str, Any],
    metric_key: str | None,
    warnings: list[str],
    notes: list[str],
) -> None:
    try:
        base, cont = float(baseline[CEILING_KEY]) * 1e-9, float(contender[CEILING_KEY]) * 1e-9
    except (KeyError, TypeError, ValueError):
        return
    if not (base > 0 and cont > 0):
        return
    change = cont / base - 1.0
    said = f"copy ceiling {change * 100:+.1f}% (baseline {base:g} GB/s, contender {cont:g} GB/s)"
    if metric_key == CEILING_METRIC:
        notes.append(f"{said}: bandwidth compared as a fraction of each run's own ceiling")
    elif abs(change) > CEILING_TOLERANCE:
        warnings.append(
            f"{said}: the cards differ, and bandwidth-bound times with them; "
            f"--metric {CEILING_METRIC} compares bandwidth as a fraction of each run's ceiling"
        )
