#pragma once
// Registers and local memory: one per-thread computation on a small array, compiled three
// ways. With every index a compile-time constant the array lives in registers; the same
// indices computed from a kernel argument force it into local memory (per-thread DRAM, cached
// in L1/L2); and the register version capped by __launch_bounds__ spills part of it.
// Launchers return the launch's cudaError_t and never throw.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kernelwatch::kernels {

inline constexpr int local_memory_block_size = 256;
inline constexpr int local_memory_array_size = 32;  // words per thread
/// Element i*step % 32 is updated i-th in a round; odd, so a round updates every element once.
inline constexpr int local_memory_index_step = 5;
/// __launch_bounds__(256, 8) of the capped variant: 65536 / (256 * 8) = 32 registers per
/// thread, fewer than the array and its working values need.
inline constexpr int local_memory_capped_min_blocks = 8;

static_assert(local_memory_array_size == 32, "indices are reduced with & 31");
static_assert(local_memory_index_step % 2 == 1, "an odd step visits every element per round");

enum class local_memory_variant {
  registers,        // compile-time indices: the array stays in registers
  local_array,      // run-time indices: the array lives in local memory
  register_capped,  // the registers variant under a register cap: spills to local memory
};

/// The computation of thread t: x = in[t]; a[j] = x + j * 0x9E3779B9 for j < 32; then `rounds`
/// rounds, each updating a[d] for d = i * step % 32, i = 0..31, in that order:
///   s = (d + 7) % 32;  a[d] = ((a[d] ^ (a[s] >> 7)) * 0x2545F491 + a[s])   (mod 2^32)
/// then out[t] = fold of a[0..31] (h = h * 31 + a[j]). `step` is local_memory_index_step:
/// a constant once inlined into two variants (every index folds), a kernel argument in the
/// third (every index is computed at run time).
__device__ __forceinline__ std::uint32_t local_memory_mix(std::uint32_t x, int rounds, int step) {
  std::uint32_t a[local_memory_array_size];
#pragma unroll
  for (int j = 0; j < local_memory_array_size; ++j) {
    a[j] = x + static_cast<std::uint32_t>(j) * 0x9E3779B9U;
  }
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < local_memory_array_size; ++i) {
      const int d = (i * step) & 31;
      const int s = (d + 7) & 31;
      a[d] = (a[d] ^ (a[s] >> 7U)) * 0x2545F491U + a[s];
    }
  }
  std::uint32_t h = 0;
#pragma unroll
  for (int j = 0; j < local_memory_array_size; ++j) {
    h = h * 31U + a[j];
  }
  return h;
}

/// out[t] = the computation above for t < n, launched with local_memory_block_size threads
/// per block. cudaErrorInvalidValue for negative rounds or an unknown variant.
cudaError_t local_memory_run(local_memory_variant variant, std::uint32_t* out,
                             const std::uint32_t* in, std::size_t n, int rounds,
                             cudaStream_t stream);

/// The compiler's resource use for the variant's kernel (numRegs, localSizeBytes, ...), so
/// callers can report it without seeing the kernels.
cudaError_t local_memory_attributes(local_memory_variant variant, cudaFuncAttributes* attributes);

/// Blocks of the variant's kernel resident per SM (occupancy API).
cudaError_t local_memory_resident_blocks(local_memory_variant variant, int* blocks_per_sm);

/// Host reference for one thread: the same computation on input x.
std::uint32_t local_memory_reference(std::uint32_t x, int rounds);

}  // namespace kernelwatch::kernels
