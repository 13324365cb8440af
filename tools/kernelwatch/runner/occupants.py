"""Other processes computing on the GPU a run measures. Their kernels share the GPU's time with
the samples: on GPU-fe9a1c25 (H200, 335c279) another process's matrix multiplies made the
matmul benchmarks 68-115 % slower, and nothing in the result said so (the harness then watched
the host's other GPUs only, `other_gpus_max_utilization_percent`). A confirming re-run
keeps such a slowdown from failing, but the numbers stay in the result, and a baseline made
from them would hold every later run to them.

Two looks, each said at once by the run and named in its result (results.OCCUPANTS_KEY);
compare and report warn about a side measured so (results.occupied), and `baseline update`
refuses it:
- after each round of a run's processes (none of its own is running then) nvidia-smi lists the
  compute processes on the run's GPU: every one it lists is another's. One call a round (0.024 s
  on an H200). No nvidia-smi (or one that fails): nothing is looked at;
- the harness polls NVML every 100 ms while its benchmarks run (detail/disturbance_monitor.hpp)
  and counts, per repetition, the other processes on its GPU (COUNTER): a competitor that comes
  and goes inside one round is seen there. It names each on its stderr when it first sees it
  (HARNESS_LINE), which run keeps (the first and last 64 KiB), so the result names it too.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from typing import Any

from kernelwatch import tool
from kernelwatch.names import instance_key, row_name
from kernelwatch.runner import process

QUERY = ["--query-compute-apps=gpu_uuid,pid,process_name", "--format=csv,noheader"]
# The harness's count of other processes on the GPU during a repetition (absent where NVML
# could not tell: docs/results.md).
COUNTER = "other_processes_on_gpu"
# The line the harness prints on stderr when it first sees another process (measurement.cpp):
# the process as nvidia-smi names it, and the benchmark's instance key (names.instance_key).
HARNESS_LINE = re.compile(
    r"^kernelwatch: warning: another process computes on this GPU \((pid \d+: .*)\) during "
    r"(.+?): it shares the GPU's time",
    re.MULTILINE,
)


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


def seen_by_harness(output: Mapping[str, Any], stderr: str = "") -> list[str]:
    """Each benchmark of one process's output (a validated Google Benchmark document) during
    which the harness saw other processes on the GPU: `pid N: NAME, seen by the harness during
    BENCHMARK` for each the process's `stderr` names there (the harness names a process once,
    where it first sees it), then `N seen by the harness during BENCHMARK` for the others, N the
    most in any of its repetitions; each in the output's order."""
    named: dict[str, list[str]] = {}
    for line in HARNESS_LINE.finditer(stderr):
        named.setdefault(line[2], []).append(line[1])
    most: dict[str, float] = {}
    for row in output.get("benchmarks") or []:
        if not isinstance(row, Mapping) or row.get("run_type") == "aggregate":
            continue  # (an H200 run read a standard deviation as "1.36931 seen")
        count = row.get(COUNTER)
        if isinstance(count, (int, float)) and not isinstance(count, bool) and count > 0:
            name = row_name(row)
            most[name] = max(most.get(name, 0.0), float(count))
    # Those it named first: run says the first in its one line (GPU-81f1843c, d921236: "1 seen
    # by the harness during ..., and 11 more" hid the one of the twelve that named the process).
    names, counts = [], []
    for name, count in most.items():
        during = f"seen by the harness during {name}"
        others = named.get(instance_key(name), [])
        names += [f"{other}, {during}" for other in others]
        counts += [] if others else [f"{count:g} {during}"]
    return names + counts
