"""Other processes computing on the GPU a run measures. Their kernels share the GPU's time with
the samples: on GPU-fe9a1c25 (H200, 335c279) another process's matrix multiplies made the
matmul benchmarks 68-115 % slower, and nothing in the result said so (the harness's own check
sees the host's other GPUs only, `other_gpus_max_utilization_percent`). A confirming re-run
keeps such a slowdown from failing, but the numbers stay in the result, and a baseline made
from them would hold every later run to them.

After each round of a run's processes (none of its own is running then) nvidia-smi lists the
compute processes on the run's GPU: every one it lists is another's. The run says so at once,
and its result names them (results.OCCUPANTS_KEY); compare and report warn about a side
measured so (results.occupied), and `baseline update` refuses it. One nvidia-smi call a round
(0.024 s on an H200), not a process: a competitor that comes and goes inside one round is left
to the re-runs. No nvidia-smi (or one that fails): nothing is looked at.
"""

from __future__ import annotations

import shutil

from kernelwatch import tool
from kernelwatch.runner import process

QUERY = ["--query-compute-apps=gpu_uuid,pid,process_name", "--format=csv,noheader"]


def on_gpu(uuid: str) -> list[str]:
    """The compute processes nvidia-smi lists on the GPU `uuid` (`pid N: name`); none where
    there is no nvidia-smi or it fails."""
    smi = shutil.which(process.NVIDIA_SMI)
    if smi is None:
        return []
    try:
        done = tool.run([smi, *QUERY], timeout=30, check=False, keep=tool.TAIL_BYTES)
    except tool.ToolError:
        return []
    if done.status != 0:
        return []
    found = []
    for line in done.stdout.splitlines():
        fields = [field.strip() for field in line.split(",", 2)]
        if len(fields) == 3 and fields[0] == uuid and fields[1].isdigit():
            found.append(f"pid {fields[1]}: {fields[2]}")
    return found
