"""The environment check on the two `context` blocks."""

from __future__ import annotations

import re

import pytest
from conftest import H100_CONTEXT
from kernelwatch.results import check_environment
from kernelwatch.errors import InputError

H200 = dict(H100_CONTEXT, gpu_name="NVIDIA H200")


def test_same_environment_is_silent() -> None:
    assert check_environment(H100_CONTEXT, dict(H100_CONTEXT), False) == ([], [])


def test_different_gpu_models_are_refused_unless_allowed() -> None:
    with pytest.raises(
        InputError,
        match=re.escape(
            "different GPU models: baseline NVIDIA H100 80GB HBM3 (sm 9.0), "
            "contender NVIDIA H200 (sm 9.0)"
        ),
    ):
        check_environment(H100_CONTEXT, H200, False)
    warnings, _ = check_environment(H100_CONTEXT, H200, True)
    assert warnings == [
        "different GPU models: baseline NVIDIA H100 80GB HBM3 (sm 9.0), "
        "contender NVIDIA H200 (sm 9.0)"
    ]


def test_compute_capability_is_part_of_the_model() -> None:
    with pytest.raises(InputError, match="different GPU models"):
        check_environment(H100_CONTEXT, dict(H100_CONTEXT, gpu_compute_capability="9.1"), False)


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("gpu_driver_version", "driver"),
        ("cuda_runtime_version", "CUDA runtime"),
        ("gpu_sm_clock_khz", "SM clock"),
        ("kernelwatch_cache_mode", "cache mode"),
    ],
)
def test_other_differences_warn(key: str, label: str) -> None:
    base = dict(H100_CONTEXT, kernelwatch_cache_mode="cold")
    warnings, _ = check_environment(base, dict(base, **{key: "other"}), False)
    assert len(warnings) == 1 and warnings[0].startswith(f"different {label}")


def test_files_without_gpu_context_still_compare() -> None:
    warnings, notes = check_environment({"host_name": "a"}, {"host_name": "b"}, False)
    assert warnings == [] and "environment check skipped" in notes[0]
    warnings, _ = check_environment(H100_CONTEXT, {"host_name": "b"}, False)
    assert warnings == ["the contender records no GPU; cannot check that the GPUs match"]
