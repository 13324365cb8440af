#pragma once
// Which kernels a benchmark launches, with their launch configuration and resource usage, for
// `kernelwatch ab`'s "did the kernel change?" (docs/results.md, "Kernel records").
//
// How: the launch function is run once more into a CUDA graph by stream capture (nothing
// executes), and the graph's kernel nodes give each kernel's function pointer, grid, block and
// dynamic shared memory exactly as launched; cudaFuncGetName gives its mangled name (the key
// into the binary's SASS, `cuobjdump -sass`) and cudaFuncGetAttributes the registers, static
// shared and local memory per thread of the code the driver actually loaded. Capture needs no
// CUPTI (which a profiler such as ncu may hold) and no declaration by the benchmark author, and
// it sees every kernel of a launch function, on forked streams joined back too. A launch
// function that capture refuses (a synchronous copy, pageable memory) is recorded with the
// refusal instead of kernels; nothing of it reaches the timed samples.

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

namespace kernelwatch::detail {

/// The environment variable naming the file kernel records are appended to (one JSON object
/// per line). Unset or empty: nothing is recorded. `kernelwatch run/ab/bisect` set it.
inline constexpr const char* kernel_record_env = "KERNELWATCH_KERNELS_OUT";

/// Once per instance and process, when kernel_record_env is set: captures `launch` and appends
/// {"benchmark": instance, "kernels": [...], ...} to the file. Never throws; CUDA errors of the
/// capture are cleared and written into the record as "error".
void record_kernels(const std::function<void(cudaStream_t)>& launch, const std::string& instance);

}  // namespace kernelwatch::detail
