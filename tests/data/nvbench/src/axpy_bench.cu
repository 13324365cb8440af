// A small nvbench benchmark in C++, built against the cuda-bench wheel's nvbench
// (scripts/gpu/make_nvbench_data.sh): y = a * x + y over a power-of-two axis of sizes.
#include <nvbench/nvbench.cuh>

#include <cuda_runtime.h>

#include <cstddef>

__global__ void axpy(float a, const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) {
    y[i] = a * x[i] + y[i];
  }
}

void axpy_bench(nvbench::state& state) {
  const auto n = static_cast<std::size_t>(state.get_int64("Elements"));
  float* x = nullptr;
  float* y = nullptr;
  NVBENCH_CUDA_CALL(cudaMalloc(&x, n * sizeof(float)));
  NVBENCH_CUDA_CALL(cudaMalloc(&y, n * sizeof(float)));
  NVBENCH_CUDA_CALL(cudaMemset(x, 0, n * sizeof(float)));
  NVBENCH_CUDA_CALL(cudaMemset(y, 0, n * sizeof(float)));
  state.add_element_count(n);
  state.add_global_memory_reads<float>(2 * n);
  state.add_global_memory_writes<float>(n);
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  state.exec([&](nvbench::launch& launch) {
    axpy<<<blocks, 256, 0, launch.get_stream()>>>(2.0f, x, y, n);
  });
  NVBENCH_CUDA_CALL(cudaFree(x));
  NVBENCH_CUDA_CALL(cudaFree(y));
}
NVBENCH_BENCH(axpy_bench).add_int64_power_of_two_axis("Elements", {20, 24});
