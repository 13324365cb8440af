// Where kernelwatch's coalescing/memcpy_d2d and nvbench's cold copy part (docs/measurement.md,
// "Side by side with nvbench"): one 256 MiB device-to-device cudaMemcpyAsync, the same two
// buffers, timed by start/stop events under each sampling protocol in turn, round after round,
// in one process, so that neither placement nor the card nor the process differs between them.
// Standalone (nvcc -O2 -arch=native); no kernelwatch code. Prints one line per protocol:
// median and mean of all its samples (µs), and the spread of its per-round medians.
//
//   kw           kernelwatch's batch: flush (memset 2x L2), hold, start, copy, stop; 32 a batch,
//                one synchronize a batch
//   kw-1x        the same, flush 1x L2
//   kw-noflush   the same, no flush (hot L2)
//   kw-nohold    the batch without the hold
//   kw-syncflush the batch, with a synchronize after each flush (the GPU idles before the hold)
//   kw-synceach  the batch, with a synchronize after each sample
//   nvbench      nvbench's cold loop: flush (memset 1x L2), synchronize, block, start, copy,
//                stop, unblock, synchronize
//   nvbench-2x   the same, flush 2x L2
#include "probe_check.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Spins until the host-mapped counter reaches `number` (kernelwatch's and nvbench's hold).
__global__ void hold_kernel(const volatile unsigned int* counter, unsigned int number) {
  while (*counter < number) {
  }
}

struct protocol {
  std::string name;
  double flush_l2s;  // 0: no flush
  bool hold;
  bool sync_after_flush;
  bool sync_each;
};

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 40;
  const int per_round = 32;
  const std::size_t bytes = std::size_t{256} << 20;
  cudaDeviceProp properties{};
  CHECK(cudaGetDeviceProperties(&properties, 0));
  const std::size_t l2 = static_cast<std::size_t>(properties.l2CacheSize);
  std::printf("device: %s, L2 %zu MiB, %d rounds of %d samples a protocol\n", properties.name,
              l2 >> 20, rounds, per_round);

  void* src = nullptr;
  void* dst = nullptr;
  void* flush = nullptr;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMalloc(&flush, 2 * l2));
  CHECK(cudaMemset(src, 1, bytes));
  unsigned int* counter = nullptr;
  CHECK(cudaHostAlloc(reinterpret_cast<void**>(&counter), sizeof(unsigned int),
                      cudaHostAllocMapped));
  *counter = 0;
  unsigned int* device_counter = nullptr;
  CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_counter), counter, 0));
  unsigned int holds = 0;
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> events(2 * per_round);
  for (cudaEvent_t& event : events) {
    CHECK(cudaEventCreate(&event));
  }

  const std::vector<protocol> protocols = {
      {"kw", 2, true, false, false},          {"kw-1x", 1, true, false, false},
      {"kw-noflush", 0, true, false, false},  {"kw-nohold", 2, false, false, false},
      {"kw-syncflush", 2, true, true, false}, {"kw-synceach", 2, true, false, true},
      {"nvbench", 1, true, true, true},       {"nvbench-2x", 2, true, true, true},
  };
  std::vector<std::vector<double>> samples(protocols.size());
  std::vector<std::vector<double>> round_medians(protocols.size());
  for (int round = -1; round < rounds; ++round) {  // round -1 warms up, not kept
    for (std::size_t p = 0; p < protocols.size(); ++p) {
      const protocol& how = protocols[p];
      for (int i = 0; i < per_round; ++i) {
        if (how.flush_l2s > 0) {
          CHECK(cudaMemsetAsync(flush, i & 0xff, static_cast<std::size_t>(how.flush_l2s * l2),
                                stream));
        }
        if (how.sync_after_flush) {
          CHECK(cudaStreamSynchronize(stream));
        }
        if (how.hold) {
          hold_kernel<<<1, 1, 0, stream>>>(device_counter, ++holds);
        }
        CHECK(cudaEventRecord(events[2 * i], stream));
        CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
        CHECK(cudaEventRecord(events[2 * i + 1], stream));
        if (how.hold) {
          __atomic_store_n(counter, holds, __ATOMIC_RELEASE);
        }
        if (how.sync_each) {
          CHECK(cudaStreamSynchronize(stream));
        }
      }
      CHECK(cudaStreamSynchronize(stream));
      std::vector<double> taken;
      for (int i = 0; i < per_round; ++i) {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
        taken.push_back(ms * 1e3);
      }
      if (round < 0) {
        continue;
      }
      samples[p].insert(samples[p].end(), taken.begin(), taken.end());
      std::sort(taken.begin(), taken.end());
      round_medians[p].push_back(taken[taken.size() / 2]);
    }
  }
  std::printf("%-13s %10s %10s %12s %12s\n", "protocol", "median us", "mean us",
              "rounds p10", "rounds p90");
  for (std::size_t p = 0; p < protocols.size(); ++p) {
    std::vector<double>& all = samples[p];
    std::vector<double>& medians = round_medians[p];
    std::sort(all.begin(), all.end());
    std::sort(medians.begin(), medians.end());
    double sum = 0;
    for (double v : all) {
      sum += v;
    }
    std::printf("%-13s %10.3f %10.3f %12.3f %12.3f\n", protocols[p].name.c_str(),
                all[all.size() / 2], sum / static_cast<double>(all.size()),
                medians[medians.size() / 10], medians[medians.size() * 9 / 10]);
  }
  return 0;
}
