#include "coalescing.cuh"

#include <cstdint>

namespace kernelwatch::kernels {
namespace {

constexpr int vectorized_block_size = 256;
constexpr int vectorized_unroll = 4;  // 16-byte loads issued before the first store

unsigned int blocks_for(std::size_t n, int block_size) {
  return static_cast<unsigned int>((n + block_size - 1) / block_size);
}

__global__ void __launch_bounds__(vectorized_block_size)
    vectorized_copy_kernel(uint4* __restrict__ out, const uint4* __restrict__ in,
                           std::size_t vectors, unsigned char* __restrict__ out_tail,
                           const unsigned char* __restrict__ in_tail, std::size_t tail_bytes) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Unrolled body: all loads of a group are in flight before any store waits on one.
  for (; i + (vectorized_unroll - 1) * threads < vectors; i += vectorized_unroll * threads) {
    uint4 values[vectorized_unroll];
#pragma unroll
    for (int k = 0; k < vectorized_unroll; ++k) {
      values[k] = in[i + k * threads];
    }
#pragma unroll
    for (int k = 0; k < vectorized_unroll; ++k) {
      out[i + k * threads] = values[k];
    }
  }
  for (; i < vectors; i += threads) {
    out[i] = in[i];
  }
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (thread < tail_bytes) {
    out_tail[thread] = in_tail[thread];
  }
}

// Enough resident blocks to fill every SM, once per device and process.
unsigned int vectorized_copy_grid() {
  static const unsigned int grid = [] {
    int device = 0;
    int sms = 0;
    int blocks_per_sm = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, vectorized_copy_kernel,
                                                      vectorized_block_size, 0) != cudaSuccess) {
      return 0U;  // the launch then fails with the configuration error, which is reported
    }
    return static_cast<unsigned int>(sms * blocks_per_sm);
  }();
  return grid;
}

}  // namespace

template <typename T>
cudaError_t offset_copy(T* out, const T* in, std::size_t n, int offset, int block_size,
                        cudaStream_t stream) {
  if (n == 0) {
    return cudaSuccess;
  }
  offset_copy_kernel<<<blocks_for(n, block_size), block_size, 0, stream>>>(out, in, n, offset);
  return cudaGetLastError();
}

template <typename T>
cudaError_t stride_copy(T* out, const T* in, std::size_t n, int stride, int block_size,
                        cudaStream_t stream) {
  if (n == 0) {
    return cudaSuccess;
  }
  stride_copy_kernel<<<blocks_for(n, block_size), block_size, 0, stream>>>(out, in, n, stride);
  return cudaGetLastError();
}

cudaError_t vectorized_copy(void* out, const void* in, std::size_t bytes, cudaStream_t stream) {
  constexpr std::uintptr_t alignment = sizeof(uint4);
  if (reinterpret_cast<std::uintptr_t>(out) % alignment != 0 ||
      reinterpret_cast<std::uintptr_t>(in) % alignment != 0) {
    return cudaErrorMisalignedAddress;
  }
  if (bytes == 0) {
    return cudaSuccess;
  }
  const std::size_t vectors = bytes / sizeof(uint4);
  const std::size_t tail = bytes % sizeof(uint4);
  auto* out_bytes = static_cast<unsigned char*>(out);
  const auto* in_bytes = static_cast<const unsigned char*>(in);
  vectorized_copy_kernel<<<vectorized_copy_grid(), vectorized_block_size, 0, stream>>>(
      static_cast<uint4*>(out), static_cast<const uint4*>(in), vectors,
      out_bytes + vectors * sizeof(uint4), in_bytes + vectors * sizeof(uint4), tail);
  return cudaGetLastError();
}

template cudaError_t offset_copy<float>(float*, const float*, std::size_t, int, int,
                                        cudaStream_t);
template cudaError_t offset_copy<double>(double*, const double*, std::size_t, int, int,
                                         cudaStream_t);
template cudaError_t stride_copy<float>(float*, const float*, std::size_t, int, int,
                                        cudaStream_t);
template cudaError_t stride_copy<double>(double*, const double*, std::size_t, int, int,
                                         cudaStream_t);

}  // namespace kernelwatch::kernels
