"""Running Google Benchmark binaries and merging their outputs into one result.

Used by `kernelwatch run`, `ab` and `selftest`. Nothing here parses terminal output: each
binary writes its result with --benchmark_out (JSON), and the benchmarks it will run are
known beforehand from --benchmark_list_tests.

A binary may run as several processes (RunSettings.processes), its repetitions split between
them: repetitions inside one process understate the variation between runs, and the spread
of the per-process medians measures it. The processes are interleaved across binaries (every
binary's first process, then every binary's second, ...) so that they are minutes apart.
Every row of the merged result names its process (`kernelwatch_process`, 1-based).

The modules, one concern each: settings (RunSettings, Job), discovery (binaries, listing,
plan; filters, reruns, shards, host-bound jobs), precision (which medians need more
repetitions), progress (the status line), process (is there a GPU; one benchmark process),
interleaving (run_suite, Measuring: a suite a process round at a time), sharing (one suite
shared among GPUs at run time), merging (joining outputs).
"""

from kernelwatch.runner.discovery import (
    BINARY_FOLDER,
    BINARY_GLOB,
    check_binaries,
    check_binary,
    ere_escape,
    find_binaries,
    list_benchmarks,
    names_filter,
    plan,
    rerun_jobs,
    select_jobs,
    split_serial,
)
from kernelwatch.runner.interleaving import (
    IncompleteRun,
    Measuring,
    SuiteRun,
    run_suite,
    timestamp,
)
from kernelwatch.runner.merging import join_outputs, join_processes, merge
from kernelwatch.runner.process import Progress, benchmark_command, gpu_absent_reason, require_gpu
from kernelwatch.runner.settings import (
    DEFAULT_MAX_TIME,
    DEFAULT_PRECISION,
    DEFAULT_PROCESSES,
    DEFAULT_REPETITIONS,
    DEFAULT_TOP_UPS,
    EXIT_BAD_ARGUMENTS,
    EXIT_CONTEXT_LOST,
    EXIT_HANG,
    EXIT_NO_GPU,
    Job,
    RunSettings,
)

__all__ = [
    "BINARY_FOLDER",
    "BINARY_GLOB",
    "DEFAULT_MAX_TIME",
    "DEFAULT_PRECISION",
    "DEFAULT_PROCESSES",
    "DEFAULT_REPETITIONS",
    "DEFAULT_TOP_UPS",
    "EXIT_BAD_ARGUMENTS",
    "EXIT_CONTEXT_LOST",
    "EXIT_HANG",
    "EXIT_NO_GPU",
    "IncompleteRun",
    "Job",
    "Measuring",
    "Progress",
    "RunSettings",
    "SuiteRun",
    "benchmark_command",
    "check_binaries",
    "check_binary",
    "ere_escape",
    "find_binaries",
    "gpu_absent_reason",
    "join_outputs",
    "join_processes",
    "list_benchmarks",
    "merge",
    "names_filter",
    "plan",
    "require_gpu",
    "rerun_jobs",
    "run_suite",
    "select_jobs",
    "split_serial",
    "timestamp",
]
