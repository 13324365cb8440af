// Questions from the harness review (docs/measurement.md) that only a GPU answers. Standalone
// (nvcc -arch=native), no kernelwatch code; prints one "name: value" line per finding.
//
//  1. zero_elapsed: how often two events recorded back to back on a non-blocking stream, the
//     way a launch that enqueues nothing on the harness's stream is timed (a kernel sent to the
//     legacy stream by mistake), read exactly 0 ms. A median of 0 makes Google Benchmark, which
//     sees manual time 0 < --benchmark_min_time, multiply the iterations by 10 up to 1e9.
//  2. free_host_waits: whether cudaFreeHost waits for a queued kernel that still reads the
//     pinned memory being freed (the sampler frees its hold flags and clock stamps while
//     unwinding an exception thrown mid-batch, without synchronizing the stream first).
//  3. smid: the largest %smid seen and %nsmid, against the SM count (clock_probe keeps only
//     stamps with %smid < SM count).
#include "probe_check.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void spin_reading(const volatile unsigned int* flag, long long cycles) {
  const long long start = clock64();
  unsigned int seen = 0;
  while (clock64() - start < cycles) {
    seen += *flag;
  }
  if (seen == 12345u) {
    printf("unlikely\n");
  }
}

__global__ void smids(unsigned int* largest, unsigned int* count) {
  unsigned int sm = 0;
  unsigned int n = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  atomicMax(largest, sm);
  *count = n;
}

int main() {
  int device = 0;
  CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  CHECK(cudaGetDeviceProperties(&properties, device));
  std::printf("device: %s, %d SMs\n", properties.name, properties.multiProcessorCount);

  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  {  // 1
    constexpr int pairs = 2000;
    std::vector<cudaEvent_t> events(2 * pairs);
    for (auto& event : events) {
      CHECK(cudaEventCreate(&event));
    }
    for (int i = 0; i < pairs; ++i) {
      CHECK(cudaEventRecord(events[2 * i], stream));
      CHECK(cudaEventRecord(events[2 * i + 1], stream));
    }
    CHECK(cudaStreamSynchronize(stream));
    int zero = 0;
    std::vector<float> ms(pairs);
    for (int i = 0; i < pairs; ++i) {
      CHECK(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]));
      zero += ms[i] == 0.0F ? 1 : 0;
    }
    std::sort(ms.begin(), ms.end());
    std::printf("zero_elapsed: %d of %d back-to-back event pairs read 0 ms; median %.6f ms\n",
                zero, pairs, ms[pairs / 2]);
    for (auto& event : events) {
      CHECK(cudaEventDestroy(event));
    }
  }

  {  // 2
    unsigned int* flag = nullptr;
    CHECK(cudaMallocHost(&flag, sizeof(unsigned int)));
    *flag = 0;
    const long long cycles = static_cast<long long>(0.2 * 1.5e9);  // ~0.2 s at 1.5 GHz
    spin_reading<<<1, 1, 0, stream>>>(flag, cycles);
    CHECK(cudaGetLastError());
    const auto start = std::chrono::steady_clock::now();
    const cudaError_t freed = cudaFreeHost(flag);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const cudaError_t after = cudaStreamSynchronize(stream);
    std::printf("free_host_waits: cudaFreeHost took %.3f s (%s) with a ~0.2 s kernel reading the "
                "memory queued; the kernel then ended with %s\n",
                waited, cudaGetErrorString(freed), cudaGetErrorString(after));
  }

  {  // 3
    unsigned int* values = nullptr;
    CHECK(cudaMallocManaged(&values, 2 * sizeof(unsigned int)));
    values[0] = 0;
    values[1] = 0;
    smids<<<4 * properties.multiProcessorCount, 32>>>(values, values + 1);
    CHECK(cudaDeviceSynchronize());
    std::printf("smid: largest %%smid %u, %%nsmid %u, SM count %d\n", values[0], values[1],
                properties.multiProcessorCount);
    CHECK(cudaFree(values));
  }
  CHECK(cudaStreamDestroy(stream));
  return 0;
}
