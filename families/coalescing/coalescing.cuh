#pragma once
// Global-memory coalescing ("How to access global memory efficiently"): the same copy with a
// misaligned start (offset) or with threads spread apart (stride), and the speed-of-light copy.
// Launchers return the launch's cudaError_t; the kernels are usable directly from device code.

#include <cuda_runtime.h>

#include <cstddef>

namespace kernelwatch::kernels {

/// out[i] = in[i + offset] for i < n: a warp's loads straddle one more 32-byte sector than its
/// stores whenever offset is not a multiple of the sector.
template <typename T>
__global__ void offset_copy_kernel(T* __restrict__ out, const T* __restrict__ in, std::size_t n,
                                   int offset) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i + offset];
  }
}

/// out[i * stride] = in[i * stride] for i < n: adjacent threads touch addresses stride
/// elements apart, so a warp needs up to 32 sectors where a unit-stride warp needs 4 (float).
template <typename T>
__global__ void stride_copy_kernel(T* __restrict__ out, const T* __restrict__ in, std::size_t n,
                                   int stride) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const std::size_t j = i * static_cast<std::size_t>(stride);
    out[j] = in[j];
  }
}

/// `in` must hold n + offset elements and `out` n.
template <typename T>
cudaError_t offset_copy(T* out, const T* in, std::size_t n, int offset, int block_size,
                        cudaStream_t stream);

/// `in` and `out` must each hold (n - 1) * stride + 1 elements.
template <typename T>
cudaError_t stride_copy(T* out, const T* in, std::size_t n, int stride, int block_size,
                        cudaStream_t stream);

/// Copies `bytes` bytes with 16-byte loads and stores in a grid-stride loop sized to fill the
/// device, several loads in flight per thread: the kernel-side speed of light for a copy.
/// Both pointers must be 16-byte aligned (cudaMalloc's are); any tail is copied bytewise.
cudaError_t vectorized_copy(void* out, const void* in, std::size_t bytes, cudaStream_t stream);

}  // namespace kernelwatch::kernels
