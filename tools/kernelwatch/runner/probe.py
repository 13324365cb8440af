"""Is there a CUDA GPU to measure on? Asked before anything runs, so that a machine without one
is told in one line (exit 4) instead of by the first binary's crash."""

from __future__ import annotations

import glob
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from kernelwatch import tool
from kernelwatch.errors import NoGpuError
from kernelwatch.runner.settings import EXIT_NO_GPU

# How the GPU is looked for (tests replace these).
NVIDIA_SMI = "nvidia-smi"
GPU_DEVICE_GLOBS: tuple[str, ...] = ("/dev/nvidia[0-9]*", "/dev/dxg")

_NO_GPU_LINE = re.compile(r"no CUDA GPU is visible \((.*)\); nothing to measure")


def gpu_absent_reason(probe: Path | None, extra_args: Sequence[str] = ()) -> str | None:
    """Why no CUDA GPU can be used, or None when one seems usable. Asks `nvidia-smi -L` when
    there is one; else runs `probe` (a benchmark binary) with a filter that matches nothing, so
    that it only opens the GPU (this project's binaries exit 4 without one); else looks for
    NVIDIA device files."""
    smi = shutil.which(NVIDIA_SMI)
    if smi:
        try:
            done = tool.run([smi, "-L"], timeout=60, check=False)
        except tool.ToolError as exc:
            return f"nvidia-smi -L failed: {exc.exception}"
        if done.status == 0 and any(line.startswith("GPU ") for line in done.stdout.splitlines()):
            return None
        said = tool.last_line(done.stdout + "\n" + done.stderr)
        return f"nvidia-smi -L: {said or f'exit status {done.status}, no GPU listed'}"
    if probe is not None:
        command = [str(probe), "--benchmark_filter=^$", *extra_args]
        try:
            done = tool.run(command, timeout=120, check=False)
        except tool.ToolError:
            return None  # the real run will say what is wrong with the binary
        if done.status == EXIT_NO_GPU:
            return f"no nvidia-smi; {probe.name}: {no_gpu_reason(done.stderr)}"
        return None
    if not any(glob.glob(pattern) for pattern in GPU_DEVICE_GLOBS):
        return "no nvidia-smi, no /dev/nvidia* device files"
    return None


def require_gpu(probe: Path | None, extra_args: Sequence[str] = ()) -> None:
    reason = gpu_absent_reason(probe, extra_args)
    if reason is not None:
        raise NoGpuError(f"no CUDA GPU is visible ({reason}); nothing to measure")


def no_gpu_reason(stderr: str) -> str:
    """The reason a binary that exited 4 gave (its stderr), without the sentence around it."""
    match = _NO_GPU_LINE.search(stderr)
    if match:
        return match.group(1)
    return tool.last_line(stderr) or "exit status 4 (no usable GPU)"
