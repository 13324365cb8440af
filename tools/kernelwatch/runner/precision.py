"""Top-ups: more repetitions for the benchmarks whose median a run has not yet pinned down.

A repetition allocates its buffers anew, and where they land moves some kernels: on every H200
card measured, the 8192² transposes' repetitions spread by about 1.2 % (standard deviation)
while the samples inside one repetition agree to 0.1 %, so a median of 10 repetitions is
known to only 0.3-0.75 % and their run medians moved 0.8-1.8 % between processes. More
samples inside a repetition cannot help (they share its placement); more repetitions can. So
after its processes a run measures each benchmark's standard error of the median from its
repetitions, and runs the ones above the target again, in as many fresh processes with as
many repetitions, at most `top_ups` times. On card S (GPU-5e6217f4) that took the
transposes' errors from 0.26-0.67 % to 0.10-0.35 %, and the worst unchanged benchmark against
the baseline from +2.4 % to +0.8 % of its 3.2 % limit (docs/measurement.md, "Top-ups").
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from kernelwatch import hostbound
from kernelwatch.config import threshold_for
from kernelwatch.names import row_name
from kernelwatch.results import HOST_BOUND_COUNTER
from kernelwatch.runner.settings import RunSettings
from kernelwatch.stats import robust_cv

# The context key listing the benchmarks a run topped up.
TOPPED_UP_KEY = "kernelwatch_topped_up"

# The standard error of the median of n draws from a normal distribution: sqrt(pi / 2) times
# that of the mean.
_MEDIAN_EFFICIENCY = math.sqrt(math.pi / 2)


def median_error(times: np.ndarray) -> float:
    """The relative standard error of the median of `times` (robust: from their MAD); NaN
    for fewer than 3."""
    if len(times) < 3 or not np.median(times) > 0:
        return math.nan
    return _MEDIAN_EFFICIENCY * float(robust_cv(times)) / math.sqrt(len(times))


def target(name: str, settings: RunSettings) -> float:
    """The relative standard error `name`'s median is topped up to: `settings.precision`, the
    target for a benchmark judged with the default threshold (0.25 % for 1 %), loosened as
    much as its own threshold is above that default, never tightened: a median known to a
    quarter of its threshold is as precise as its verdict needs."""
    if settings.threshold <= 0:
        return settings.precision
    own = threshold_for(name, settings.thresholds, settings.threshold)
    return settings.precision * max(1.0, own / settings.threshold)


def imprecise(documents: Iterable[Mapping[str, Any]], settings: RunSettings) -> list[str]:
    """The benchmarks of these outputs (one binary's processes) whose median's relative
    standard error is above their target, in their order. Host-bound ones (the harness's
    counter) are left out: their spread is the host's, and a repetition of a pageable copy
    costs seconds."""
    times: dict[str, list[float]] = defaultdict(list)
    host_bound: set[str] = set()
    for document in documents:
        context = document.get("context")
        # (the output names no file of its own: the binary that wrote it stands for it)
        binary = context.get("executable") if isinstance(context, Mapping) else None
        where = str(binary or "a benchmark binary's output")
        for row in document.get("benchmarks", []):
            if not isinstance(row, Mapping) or row.get("run_type") == "aggregate":
                continue
            name = row_name(row)
            if hostbound.flag(row.get(HOST_BOUND_COUNTER), where, name):
                host_bound.add(name)
            value = row.get("real_time")
            if isinstance(value, (int, float)) and not row.get("error_occurred"):
                times[name].append(float(value))
    return [
        name
        for name, values in times.items()
        if name not in host_bound and median_error(np.array(values)) > target(name, settings)
    ]
