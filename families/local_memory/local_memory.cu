#include "local_memory.cuh"

#include <array>

namespace kernelwatch::kernels {
namespace {

using kernel_function = void (*)(std::uint32_t*, const std::uint32_t*, std::size_t, int, int);

// Registers and capped variants: the step is a compile-time constant, so after unrolling every
// index is known and the array becomes 32 scalars. MinBlocks caps the registers per thread at
// 65536 / (256 * MinBlocks); 1 leaves the compiler free.
template <int MinBlocks>
__global__ void __launch_bounds__(local_memory_block_size, MinBlocks)
    compile_time_index_kernel(std::uint32_t* __restrict__ out,
                              const std::uint32_t* __restrict__ in, std::size_t n, int rounds,
                              int /*step: known at compile time here*/) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) {
    out[t] = local_memory_mix(in[t], rounds, local_memory_index_step);
  }
}

// Local-array variant: the same code with the step read from a kernel argument, which the
// compiler cannot see, so the array needs addressable (local) memory.
__global__ void __launch_bounds__(local_memory_block_size)
    run_time_index_kernel(std::uint32_t* __restrict__ out, const std::uint32_t* __restrict__ in,
                          std::size_t n, int rounds, int step) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) {
    out[t] = local_memory_mix(in[t], rounds, step);
  }
}

kernel_function kernel_for(local_memory_variant variant) {
  switch (variant) {
    case local_memory_variant::registers:
      return compile_time_index_kernel<1>;
    case local_memory_variant::local_array:
      return run_time_index_kernel;
    case local_memory_variant::register_capped:
      return compile_time_index_kernel<local_memory_capped_min_blocks>;
  }
  return nullptr;
}

}  // namespace

cudaError_t local_memory_run(local_memory_variant variant, std::uint32_t* out,
                             const std::uint32_t* in, std::size_t n, int rounds,
                             cudaStream_t stream) {
  const kernel_function kernel = kernel_for(variant);
  if (kernel == nullptr || rounds < 0) {
    return cudaErrorInvalidValue;
  }
  if (n == 0) {
    return cudaSuccess;
  }
  const auto blocks =
      static_cast<unsigned int>((n + local_memory_block_size - 1) / local_memory_block_size);
  kernel<<<blocks, local_memory_block_size, 0, stream>>>(out, in, n, rounds,
                                                         local_memory_index_step);
  return cudaGetLastError();
}

cudaError_t local_memory_attributes(local_memory_variant variant,
                                    cudaFuncAttributes* attributes) {
  const kernel_function kernel = kernel_for(variant);
  if (kernel == nullptr) {
    return cudaErrorInvalidValue;
  }
  return cudaFuncGetAttributes(attributes, kernel);
}

cudaError_t local_memory_resident_blocks(local_memory_variant variant, int* blocks_per_sm) {
  const kernel_function kernel = kernel_for(variant);
  if (kernel == nullptr) {
    return cudaErrorInvalidValue;
  }
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, kernel,
                                                       local_memory_block_size, 0);
}

std::uint32_t local_memory_reference(std::uint32_t x, int rounds) {
  constexpr int size = local_memory_array_size;
  std::array<std::uint32_t, size> a{};
  for (int j = 0; j < size; ++j) {
    a[static_cast<std::size_t>(j)] = x + static_cast<std::uint32_t>(j) * 0x9E3779B9U;
  }
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < size; ++i) {
      const auto d = static_cast<std::size_t>(i * local_memory_index_step % size);
      const auto s = (d + 7) % size;
      a[d] = (a[d] ^ (a[s] >> 7U)) * 0x2545F491U + a[s];
    }
  }
  std::uint32_t h = 0;
  for (const std::uint32_t value : a) {
    h = h * 31U + value;
  }
  return h;
}

}  // namespace kernelwatch::kernels
