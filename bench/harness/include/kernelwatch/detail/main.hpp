#pragma once
// The main of a kernelwatch benchmark binary (linked in by kernelwatch::main).

namespace kernelwatch::detail {

/// Exit codes of a benchmark binary besides 0 (tools/kernelwatch reads them).
inline constexpr int exit_code_bad_arguments = 2;
/// A sticky CUDA error left the context unusable (registration.cpp ends the process).
inline constexpr int exit_code_context_lost = 3;
inline constexpr int exit_code_no_gpu = 4;
/// A benchmark made no progress for --kernelwatch_hang_timeout seconds: a kernel that never
/// finishes (detail/watchdog.hpp ends the process).
inline constexpr int exit_code_hang = 5;

/// Parses kernelwatch's and Google Benchmark's flags, writes the GPU context, and runs the
/// registered benchmarks. Listing (--benchmark_list_tests) needs no GPU; running does: without
/// one it prints one line and returns exit_code_no_gpu.
int benchmark_main(int argc, char** argv);

}  // namespace kernelwatch::detail
