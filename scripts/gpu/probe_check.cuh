#pragma once
// CHECK for the standalone GPU probes (harness_review_probe.cu, protocol_probe.cu): they use no
// kernelwatch code, so a failed CUDA call prints one line and ends the probe.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    const cudaError_t status_ = (call);                                                 \
    if (status_ != cudaSuccess) {                                                       \
      std::printf("error: %s: %s (line %d)\n", #call, cudaGetErrorString(status_), __LINE__); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (false)
