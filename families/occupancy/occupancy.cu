#include "occupancy.cuh"

namespace kernelwatch::kernels {
namespace {

// Shared memory is allocated per block in 128-byte units on sm_80 and sm_90.
constexpr std::size_t smem_allocation_granularity = 128;

unsigned int blocks_for(std::size_t n, int block_size) {
  return static_cast<unsigned int>((n + block_size - 1) / block_size);
}

// A kernel of its own, so that raising its dynamic shared memory limit leaves
// occupancy_copy_kernel's attributes as they are.
__global__ void smem_limited_copy_kernel(float* __restrict__ out, const float* __restrict__ in,
                                         std::size_t n) {
  occupancy_copy_element(out, in, n);
}

cudaError_t device_attribute(cudaDeviceAttr attribute, int* value) {
  int device = 0;
  const cudaError_t status = cudaGetDevice(&device);
  return status != cudaSuccess ? status : cudaDeviceGetAttribute(value, attribute, device);
}

// Above 48 KiB of dynamic shared memory a kernel must opt in; done once per process, for the
// device current at the first call (as coalescing's grid size is).
cudaError_t allow_all_shared_memory() {
  static const cudaError_t status = [] {
    int optin = 0;
    const cudaError_t queried = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, &optin);
    return queried != cudaSuccess
               ? queried
               : cudaFuncSetAttribute(smem_limited_copy_kernel,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
  }();
  return status;
}

template <typename Kernel>
cudaError_t query_occupancy(Kernel kernel, int block_size, std::size_t shared_bytes,
                            theoretical_occupancy* result) {
  if (result == nullptr || block_size < 1) {
    return cudaErrorInvalidValue;
  }
  theoretical_occupancy found{block_size, 0, 0};
  cudaError_t status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&found.blocks_per_sm, kernel,
                                                                     block_size, shared_bytes);
  if (status == cudaSuccess) {
    status = device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor, &found.max_threads_per_sm);
  }
  if (status == cudaSuccess) {
    *result = found;
  }
  return status;
}

}  // namespace

cudaError_t occupancy_of_copy(int block_size, theoretical_occupancy* result) {
  return query_occupancy(occupancy_copy_kernel<float>, block_size, 0, result);
}

cudaError_t occupancy_copy(float* out, const float* in, std::size_t n, int block_size,
                           cudaStream_t stream) {
  if (n == 0) {
    return cudaSuccess;
  }
  if (block_size < 1) {
    return cudaErrorInvalidConfiguration;
  }
  occupancy_copy_kernel<<<blocks_for(n, block_size), block_size, 0, stream>>>(out, in, n);
  return cudaGetLastError();
}

cudaError_t shared_bytes_for_blocks_per_sm(int blocks_per_sm, std::size_t* bytes) {
  if (bytes == nullptr) {
    return cudaErrorInvalidValue;
  }
  int per_sm = 0;
  int reserved = 0;
  int optin = 0;
  cudaError_t status = device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, &per_sm);
  if (status == cudaSuccess) {
    status = device_attribute(cudaDevAttrReservedSharedMemoryPerBlock, &reserved);
  }
  if (status == cudaSuccess) {
    status = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, &optin);
  }
  if (status == cudaSuccess) {
    *bytes = shared_bytes_for_blocks(
        static_cast<std::size_t>(per_sm), static_cast<std::size_t>(reserved),
        static_cast<std::size_t>(optin), smem_allocation_granularity, blocks_per_sm);
  }
  return status;
}

cudaError_t occupancy_of_smem_limited_copy(int block_size, std::size_t shared_bytes,
                                           theoretical_occupancy* result) {
  // Opt in first, so that the calculator answers for the launch smem_limited_copy makes.
  const cudaError_t status = allow_all_shared_memory();
  return status != cudaSuccess
             ? status
             : query_occupancy(smem_limited_copy_kernel, block_size, shared_bytes, result);
}

cudaError_t smem_limited_copy(float* out, const float* in, std::size_t n, int block_size,
                              std::size_t shared_bytes, cudaStream_t stream) {
  if (n == 0) {
    return cudaSuccess;
  }
  if (block_size < 1) {
    return cudaErrorInvalidConfiguration;
  }
  if (const cudaError_t status = allow_all_shared_memory(); status != cudaSuccess) {
    return status;
  }
  const unsigned int grid = blocks_for(n, block_size);
  smem_limited_copy_kernel<<<grid, block_size, shared_bytes, stream>>>(out, in, n);
  return cudaGetLastError();
}

}  // namespace kernelwatch::kernels
