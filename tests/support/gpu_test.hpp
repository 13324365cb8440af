#pragma once
// GPU tests skip, with the reason, on machines without a usable CUDA device.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

namespace kernelwatch::testing {

/// Empty when a GPU is usable; otherwise why not.
inline std::string gpu_unavailable_reason() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) {
    return cudaGetErrorString(status);
  }
  return devices == 0 ? "no CUDA device" : "";
}

}  // namespace kernelwatch::testing

#define KW_REQUIRE_GPU()                                                              \
  do {                                                                                \
    if (const std::string kw_reason_ = ::kernelwatch::testing::gpu_unavailable_reason(); \
        !kw_reason_.empty()) {                                                        \
      GTEST_SKIP() << "needs a CUDA GPU: " << kw_reason_;                             \
    }                                                                                 \
  } while (false)
