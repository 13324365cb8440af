#include <kernelwatch/detail/cuda_array.hpp>

namespace kernelwatch::detail {
namespace {

bool has_memory_pools() {
  int device = 0;
  int supported = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) ==
             cudaSuccess &&
         supported != 0;
}

}  // namespace

void* device_allocator::allocate(std::size_t bytes) {
  void* pointer = nullptr;
  if (!has_memory_pools()) {
    KW_CUDA_CHECK(cudaMalloc(&pointer, bytes));
    return pointer;
  }
  // Ordered on the legacy stream and waited for, so any stream may use it at once.
  KW_CUDA_CHECK(cudaMallocAsync(&pointer, bytes, nullptr));
  const cudaError_t ready = cudaStreamSynchronize(nullptr);
  if (ready != cudaSuccess) {  // the owner is never built: give the memory back here
    cudaFreeAsync(pointer, nullptr);
    throw_cuda_error(ready, "cudaStreamSynchronize(nullptr)", __FILE__, __LINE__);
  }
  return pointer;
}

void device_allocator::release(void* pointer) noexcept {
  if (!has_memory_pools()) {
    cudaFree(pointer);
    return;
  }
  // cudaFree waits for the whole device; a pool's free is ordered on one stream, and kernels
  // run on the harness's non-blocking streams: wait for all of them first. The pool keeps
  // nothing (release threshold 0): its memory goes back at the synchronization.
  cudaDeviceSynchronize();
  cudaFreeAsync(pointer, nullptr);
  cudaStreamSynchronize(nullptr);
}

}  // namespace kernelwatch::detail
