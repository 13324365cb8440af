#pragma once
// Probes of the measurement itself rather than lessons: an empty kernel, whose time is all
// launch and event overhead, shows how much of a short kernel's time is not the kernel's.
// Launchers return the launch's cudaError_t; they never throw.

#include <cuda_runtime.h>

namespace kernelwatch::kernels {

/// Does nothing: one block of one thread.
__global__ void empty_kernel();

cudaError_t launch_empty(cudaStream_t stream);

}  // namespace kernelwatch::kernels
