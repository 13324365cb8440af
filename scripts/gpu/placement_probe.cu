// Does where a benchmark's memory lies set its time, and is that the 64 Mi reductions' slow
// process (docs/measurement.md, "Top-ups" and "An anchor's two processes")? One process makes
// ALLOCATIONS sets of buffers, all kept alive so that each lands elsewhere, and times on each
// set the kernels whose processes spread most in the H200 baseline: the 8192² naive transpose
// (block_rows 8), the 4096 x 16384 column copy (8), the 64 Mi float and double warp_shuffle
// sums and the 64 Mi float naive sum. Then, each on set 0 unless named:
//   - sets 0 and ALLOCATIONS/2 again: a set that keeps its time while sets differ is placement;
//   - set 0 freed and allocated anew, as a repetition of the suite makes its inputs again;
//   - through each of FLUSHES new flush buffers (the harness makes one per process);
//   - after a kernel that takes all of an SM's shared memory, then after one that takes none.
// A fresh process is handed the same memory in the same order, so with SEED other than 0 each
// set and flush buffer comes after a pad of a pseudo-random number of 2 MiB pages (kept).
// Standalone but for the families' kernels:
//
//   nvcc -O2 -std=c++17 -arch=sm_90 -Ifamilies/transpose -Ifamilies/reduction \
//     -Iscripts/gpu scripts/gpu/placement_probe.cu families/transpose/transpose.cu \
//     families/reduction/reduction.cu -o placement_probe
//   CUDA_MODULE_LOADING=EAGER ./placement_probe [ALLOCATIONS (12)] [SAMPLES (21)] [SEED (0)] \
//     [FLUSHES (0)]
//
// (EAGER: a kernel's first launch behind the spinning hold would wait for its module to load,
// which waits for the hold: a deadlock.) Prints one line per set: the median of SAMPLES cold
// launches per kernel, µs (each launch held behind a spinning kernel, L2 flushed by a memset of
// twice its size, as kernelwatch samples).
#include "probe_check.cuh"
#include "reduction.cuh"
#include "transpose.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace kk = kernelwatch::kernels;

// Spins until the host-mapped counter reaches `number`, so that the timed launch is queued
// before its start event fires.
__global__ void hold_kernel(const volatile unsigned int* counter, unsigned int number) {
  while (*counter < number) {
  }
}

template <typename T>
__global__ void fill(T* data, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761U ^ seed;
    x ^= x >> 15;
    x *= 2246822519U;
    x ^= x >> 13;
    data[i] = static_cast<T>(x >> 8) / static_cast<T>(1U << 24);  // [0, 1)
  }
}

// Touches its dynamic shared memory, so that the launch needs all of it.
__global__ void shared_hog(float* out, int bytes) {
  extern __shared__ float scratch[];
  const int count = bytes / static_cast<int>(sizeof(float));
  for (int i = threadIdx.x; i < count; i += blockDim.x) scratch[i] = static_cast<float>(i);
  __syncthreads();
  if (threadIdx.x == 0 && count > 0) out[blockIdx.x] = scratch[count - 1];
}

constexpr int side = 8192;
constexpr std::size_t elements = std::size_t{side} * side;  // 64 Mi, as the 64 Mi sums

struct buffers {
  float* in = nullptr;  // also the float sums' input
  float* out = nullptr;
  double* in_double = nullptr;
  float* result = nullptr;
  double* result_double = nullptr;
  void* workspace = nullptr;
};

struct sampler {
  unsigned int* counter = nullptr;  // host-mapped
  unsigned int* device_counter = nullptr;
  unsigned int next = 0;
  void* flush = nullptr;
  std::size_t flush_bytes = 0;
  cudaEvent_t start{}, stop{};

  double median_us(int samples, const std::function<void()>& launch) {
    std::vector<float> times;
    for (int s = 0; s < samples; ++s) {
      ++next;
      hold_kernel<<<1, 1>>>(device_counter, next);
      CHECK(cudaMemsetAsync(flush, s & 0xff, flush_bytes));
      CHECK(cudaEventRecord(start));
      launch();
      CHECK(cudaEventRecord(stop));
      *reinterpret_cast<volatile unsigned int*>(counter) = next;
      CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(ms * 1000.0F);
    }
    std::nth_element(times.begin(), times.begin() + samples / 2, times.end());
    return times[samples / 2];
  }
};

int main(int argc, char** argv) {
  const int allocations = argc > 1 ? std::atoi(argv[1]) : 12;
  const int samples = argc > 2 ? std::atoi(argv[2]) : 21;
  const unsigned long seed = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 0;
  const int flushes = argc > 4 ? std::atoi(argv[4]) : 0;
  if (allocations < 2 || samples < 1 || flushes < 0) {
    std::printf("usage: placement_probe [ALLOCATIONS >= 2] [SAMPLES >= 1] [SEED] [FLUSHES]\n");
    return 2;
  }
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int shared_bytes = static_cast<int>(prop.sharedMemPerBlockOptin);
  sampler timer;
  CHECK(cudaHostAlloc(&timer.counter, sizeof(unsigned int), cudaHostAllocMapped));
  *timer.counter = 0;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&timer.device_counter), timer.counter,
                                 0));
  timer.flush_bytes = 2 * static_cast<std::size_t>(prop.l2CacheSize);
  CHECK(cudaMalloc(&timer.flush, timer.flush_bytes));
  CHECK(cudaEventCreate(&timer.start));
  CHECK(cudaEventCreate(&timer.stop));

  std::size_t float_workspace = 0, double_workspace = 0;
  CHECK(kk::reduce_sum_workspace_bytes<float>(kk::reduction_variant::naive, elements,
                                              &float_workspace));
  CHECK(kk::reduce_sum_workspace_bytes<double>(kk::reduction_variant::naive, elements,
                                               &double_workspace));
  const std::size_t workspace_bytes = std::max(float_workspace, double_workspace);

  std::vector<buffers> sets(allocations);
  std::vector<void*> pads;
  std::uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  const auto pad = [&] {  // 0-1023 pages of 2 MiB, kept
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::size_t pages = (state >> 33) % 1024;
    if (pages > 0) {
      pads.emplace_back();
      CHECK(cudaMalloc(&pads.back(), pages << 21));
    }
  };
  const auto allocate = [&](buffers& b, int a) {
    CHECK(cudaMalloc(&b.in, elements * sizeof(float)));
    CHECK(cudaMalloc(&b.out, elements * sizeof(float)));
    CHECK(cudaMalloc(&b.in_double, elements * sizeof(double)));
    CHECK(cudaMalloc(&b.result, sizeof(float)));
    CHECK(cudaMalloc(&b.result_double, sizeof(double)));
    CHECK(cudaMalloc(&b.workspace, workspace_bytes));
    fill<<<4 * prop.multiProcessorCount, 256>>>(b.in, elements, 17U + a);
    fill<<<4 * prop.multiProcessorCount, 256>>>(b.in_double, elements, 31U + a);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  };
  for (int a = 0; a < allocations; ++a) {
    if (seed != 0) {
      pad();
    }
    allocate(sets[a], a);
  }

  std::printf(
      "set  address        naive_rows  copy_columns  warp_float  warp_double  naive_float\n");
  auto measure = [&](int a) {
    buffers& b = sets[a];
    const auto transpose = [&](kk::transpose_variant v, int rows, int cols) {
      return timer.median_us(samples, [&] {
        CHECK(kk::transpose<float>(v, b.out, b.in, rows, cols, 8, nullptr));
      });
    };
    const auto sum = [&](auto* result, const auto* in, kk::reduction_variant v) {
      return timer.median_us(samples, [&] {
        CHECK(kk::reduce_sum(v, result, in, elements, b.workspace, workspace_bytes, nullptr));
      });
    };
    const double naive_rows = transpose(kk::transpose_variant::naive_rows, side, side);
    const double copy_columns = transpose(kk::transpose_variant::copy_columns, 4096, 16384);
    const double warp_float = sum(b.result, b.in, kk::reduction_variant::warp_shuffle);
    const double warp_double =
        sum(b.result_double, b.in_double, kk::reduction_variant::warp_shuffle);
    const double naive_float = sum(b.result, b.in, kk::reduction_variant::naive);
    std::printf("%3d  %012llx  %10.1f  %12.1f  %10.1f  %11.1f  %11.1f\n", a,
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(b.in)),
                naive_rows, copy_columns, warp_float, warp_double, naive_float);
  };
  for (int a = 0; a < allocations; ++a) measure(a);
  std::printf("again:\n");
  measure(0);
  measure(allocations / 2);
  std::printf("set 0 freed and allocated anew:\n");
  for (void* p : {static_cast<void*>(sets[0].in), static_cast<void*>(sets[0].out),
                  static_cast<void*>(sets[0].in_double), static_cast<void*>(sets[0].result),
                  static_cast<void*>(sets[0].result_double), sets[0].workspace}) {
    CHECK(cudaFree(p));
  }
  allocate(sets[0], 0);  // no pad: where the freed set was
  measure(0);
  std::printf("set 0, flushed through other buffers:\n");
  for (int f = 0; f < flushes; ++f) {
    pad();
    CHECK(cudaMalloc(&timer.flush, timer.flush_bytes));  // the last one stays allocated too
    measure(0);
  }
  // The driver splits an SM between L1 and shared memory per launch, from the kernel's needs:
  // does a kernel that took all of it leave the next ones slower?
  std::printf("set 0, after a kernel with %d KiB of shared memory:\n", shared_bytes / 1024);
  CHECK(cudaFuncSetAttribute(shared_hog, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             shared_bytes));
  shared_hog<<<prop.multiProcessorCount, 256, shared_bytes>>>(sets[0].out, shared_bytes);
  CHECK(cudaDeviceSynchronize());
  measure(0);
  std::printf("set 0, after a kernel with none:\n");
  shared_hog<<<prop.multiProcessorCount, 256, 0>>>(sets[0].out, 0);
  CHECK(cudaDeviceSynchronize());
  measure(0);
  return 0;
}
