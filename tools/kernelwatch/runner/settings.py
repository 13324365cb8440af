"""How benchmark binaries are run (RunSettings) and what one binary will run (Job)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kernelwatch import defaults, kernels
from kernelwatch.config import ThresholdRule
from kernelwatch.errors import InputError

# Why these defaults: defaults.py (where --help reads them) and docs/running.md.
DEFAULT_REPETITIONS = defaults.RUN_REPETITIONS
DEFAULT_MAX_TIME = defaults.MAX_TIME
DEFAULT_PROCESSES = defaults.PROCESSES
DEFAULT_PRECISION = defaults.PRECISION  # the relative standard error a run aims for
DEFAULT_TOP_UPS = defaults.TOP_UPS
MAX_TOP_UPS = 10
# Sanity bounds (a typo, not a measurement plan): 10,000 repetitions of the suite's fastest
# benchmark are about an hour; a host has far fewer than 64 cores to give each process.
MAX_REPETITIONS = 10000
MAX_PROCESSES = 64

# Exit codes of this project's benchmark binaries (docs/results.md).
EXIT_BAD_ARGUMENTS = 2
EXIT_CONTEXT_LOST = 3
EXIT_NO_GPU = 4
# A benchmark made no progress for --kernelwatch_hang_timeout seconds (a kernel that never
# finishes): the harness's watchdog printed one line naming it and ended the process.
EXIT_HANG = 5

# The flags every benchmark process gets from the runner (process.benchmark_command), and the
# listing's: given again with --bench-arg, the binary takes the later one, so the result
# would not be what its context says (--benchmark_repetitions=3 gave 6 repetitions to a
# result that said 10) or not be written where the runner reads it (--benchmark_out=FILE
# replaced FILE, and the run ended in exit 3). What to give instead.
OWN_FLAGS = {
    "--benchmark_out": "kernelwatch writes the result itself (--out)",
    "--benchmark_out_format": "kernelwatch writes the result itself (--out)",
    "--benchmark_repetitions": "use --repetitions",
    "--benchmark_filter": "use --filter",
    "--benchmark_enable_random_interleaving": "use --no-interleave",
    "--benchmark_list_tests": "kernelwatch lists the benchmarks itself",
    "--kernelwatch_max_time": "use --max-time",
}
# Environment variables the runner decides for the benchmark processes: Google Benchmark takes
# each flag it is not given from its upper-case variable (BENCHMARK_FILTER=x left in a shell
# ran a part of the suite that the result called the whole build), and the harness appends
# kernel records wherever KERNELWATCH_KERNELS_OUT says (kernels.ENV; the runner sets it for a
# binary's first process only).
_OWN_VARIABLE_PREFIX = "BENCHMARK_"


def benchmark_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """`environment` without the variables the runner decides for a benchmark process."""
    return {
        key: value
        for key, value in environment.items()
        if not key.startswith(_OWN_VARIABLE_PREFIX) and key != kernels.ENV
    }


@dataclass(frozen=True)
class RunSettings:
    """How each benchmark binary is run."""

    repetitions: int = DEFAULT_REPETITIONS
    max_time: float = (
        DEFAULT_MAX_TIME  # seconds of sampling per repetition (--kernelwatch_max_time)
    )
    interleave: bool = True  # --benchmark_enable_random_interleaving
    extra_args: tuple[str, ...] = ()  # appended to every command (--kernelwatch_device=1, ...)
    verbose: bool = False  # show the binaries' own output on stderr
    processes: int = 1  # processes per binary; `repetitions` is split between them
    record_kernels: bool = True  # kernel records in the context (kernels.py)
    # `run --gpus`: the one GPU this run measures on (its UUID, for the per-GPU lock and
    # CUDA_VISIBLE_DEVICES, which `environment` sets for every benchmark process)
    gpu_uuid: str | None = None
    environment: tuple[tuple[str, str], ...] = ()
    # Top-ups (precision.py): benchmarks whose median's relative standard error is above
    # `precision` run again, `top_ups` times at most; 0 turns them off.
    precision: float = 0.0
    top_ups: int = 0
    # How the result will be judged (compare.Settings's threshold and rules): a benchmark whose
    # threshold is k > 1 times the default needs its median only to k x `precision`
    # (precision.target). The 1 Mi-element sums (10 %) took 16.3 s of top-ups in a 163 s H200
    # suite, 0.9 s with it (docs/measurement.md, "Top-ups").
    threshold: float = 0.0
    thresholds: tuple[ThresholdRule, ...] = ()
    # `run --process-timeout`: seconds after which a benchmark process (its whole process
    # group) is killed and reported as hung; None: never (the harness has its own watchdog,
    # --kernelwatch_hang_timeout; a plain Google Benchmark binary has none).
    process_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.repetitions < 1:
            raise InputError(f"--repetitions {self.repetitions}: must be at least 1")
        if self.repetitions > MAX_REPETITIONS:
            raise InputError(f"--repetitions {self.repetitions}: must be at most {MAX_REPETITIONS}")
        if not (self.max_time > 0 and self.max_time <= 3600):
            raise InputError(
                f"--max-time {self.max_time:g}: must be a positive number of seconds (at most 3600)"
            )
        if self.processes < 1:
            raise InputError(f"--processes {self.processes}: must be at least 1")
        if self.processes > MAX_PROCESSES:
            raise InputError(f"--processes {self.processes}: must be at most {MAX_PROCESSES}")
        if self.processes > self.repetitions:
            raise InputError(
                f"--processes {self.processes}: more processes than --repetitions "
                f"{self.repetitions}; each process needs at least one repetition"
            )

        if not (0 <= self.precision < 1):
            raise InputError(
                f"--precision {self.precision:g}: must be a fraction from 0 to 1 (0.0025 is 0.25 %)"
            )
        if not (0 <= self.top_ups <= MAX_TOP_UPS):
            raise InputError(f"--top-ups {self.top_ups}: must be from 0 to {MAX_TOP_UPS}")
        for arg in self.extra_args:
            flag = arg.split("=", 1)[0]
            if flag in OWN_FLAGS:
                raise InputError(
                    f"--bench-arg {arg}: kernelwatch sets {flag} itself; {OWN_FLAGS[flag]}"
                )
        if self.process_timeout is not None and not (0 < self.process_timeout <= 7 * 86400):
            raise InputError(
                f"--process-timeout {self.process_timeout:g}: must be a positive number of "
                "seconds (at most a week)"
            )

    def split(self) -> list[int]:
        """Repetitions of each process: as even as possible, the first ones get the rest."""
        share, rest = divmod(self.repetitions, self.processes)
        return [share + (1 if k < rest else 0) for k in range(self.processes)]


@dataclass(frozen=True)
class Job:
    """One binary and the benchmarks it will run (as listed with the same filter)."""

    binary: Path
    filter: str | None
    names: tuple[str, ...]
    serial: bool = False  # host-bound: runs with the host to itself (locks.host_exclusive)
    # Built on kernelwatch's harness, so it takes --kernelwatch_* flags; a plain Google
    # Benchmark binary (run --bench) refuses any flag it does not know.
    harness: bool = True
