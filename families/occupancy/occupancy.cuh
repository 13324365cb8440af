#pragma once
// Block size and occupancy (CUDA C++ Best Practices Guide, "Occupancy"): one memory-bound copy
// launched with different block sizes, and the same copy with dynamic shared memory reserved
// per block so that fewer blocks fit on an SM. A one-element-per-thread copy keeps one load
// per warp in flight, so its bandwidth follows the number of resident warps.
// Launchers and queries return the first failing call's cudaError_t; they never throw.

#include <cuda_runtime.h>

#include <cstddef>

namespace kernelwatch::kernels {

/// out[i] = in[i] for the thread's i < n.
template <typename T>
__device__ inline void occupancy_copy_element(T* __restrict__ out, const T* __restrict__ in,
                                              std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i];
  }
}

template <typename T>
__global__ void occupancy_copy_kernel(T* __restrict__ out, const T* __restrict__ in,
                                      std::size_t n) {
  occupancy_copy_element(out, in, n);
}

/// Theoretical occupancy of one kernel at one launch configuration.
struct theoretical_occupancy {
  static constexpr int warp_size = 32;

  int block_size = 0;
  int blocks_per_sm = 0;       // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  int max_threads_per_sm = 0;  // cudaDevAttrMaxThreadsPerMultiProcessor

  [[nodiscard]] constexpr int active_warps() const {
    return blocks_per_sm * ((block_size + warp_size - 1) / warp_size);  // partial warps count
  }
  [[nodiscard]] constexpr int max_warps() const { return max_threads_per_sm / warp_size; }
  /// Active warps over the most an SM can hold, in [0, 1].
  [[nodiscard]] constexpr double fraction() const {
    return max_warps() == 0
               ? 0.0
               : static_cast<double>(active_warps()) / static_cast<double>(max_warps());
  }
};

/// Theoretical occupancy of occupancy_copy() at `block_size` on the current device.
cudaError_t occupancy_of_copy(int block_size, theoretical_occupancy* result);

/// occupancy_copy_kernel<float> over n elements, one per thread, in blocks of `block_size`.
cudaError_t occupancy_copy(float* out, const float* in, std::size_t n, int block_size,
                           cudaStream_t stream);

/// Dynamic shared memory per block with which shared memory alone admits `blocks_per_sm`
/// blocks per SM: each block also costs `reserved_per_block` bytes, and allocations go in
/// `granularity`-byte units. Capped at `max_per_block`; 0 when no amount is needed or none
/// can reach the target.
[[nodiscard]] constexpr std::size_t shared_bytes_for_blocks(std::size_t per_sm,
                                                            std::size_t reserved_per_block,
                                                            std::size_t max_per_block,
                                                            std::size_t granularity,
                                                            int blocks_per_sm) {
  if (blocks_per_sm < 1 || granularity == 0) {
    return 0;
  }
  const std::size_t share = per_sm / static_cast<std::size_t>(blocks_per_sm);
  if (share <= reserved_per_block) {
    return 0;
  }
  const std::size_t bytes = (share - reserved_per_block) / granularity * granularity;
  return bytes < max_per_block ? bytes : max_per_block;
}

/// shared_bytes_for_blocks for the current device (its shared memory per SM, per-block
/// reservation and opt-in maximum per block).
cudaError_t shared_bytes_for_blocks_per_sm(int blocks_per_sm, std::size_t* bytes);

/// Theoretical occupancy of smem_limited_copy() at `block_size` and `shared_bytes`.
cudaError_t occupancy_of_smem_limited_copy(int block_size, std::size_t shared_bytes,
                                           theoretical_occupancy* result);

/// The same copy, each block holding `shared_bytes` of dynamic shared memory it never uses:
/// the reservation alone limits how many blocks an SM runs at once. Up to the device's
/// opt-in maximum per block (227 KiB on Hopper).
cudaError_t smem_limited_copy(float* out, const float* in, std::size_t n, int block_size,
                              std::size_t shared_bytes, cudaStream_t stream);

}  // namespace kernelwatch::kernels
