#include "probe.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

TEST(EmptyKernel, LaunchesAndCompletes) {
  KW_REQUIRE_GPU();
  kw::cuda_stream stream;
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(kk::launch_empty(stream.get()), cudaSuccess);
  }
  EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
}
