// Tests that need two GPUs of one host. CTest labels them multi_gpu: `tools/kw test --gpu` leaves
// them out, saying so, on a host with one GPU, where they could only skip (and a skipped GPU
// test fails it).

#include <kernelwatch/kernelwatch.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kw = kernelwatch;

TEST(DeviceInfo, FollowsTheCurrentDevice) {
  KW_REQUIRE_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices < 2) {
    GTEST_SKIP() << "needs two CUDA GPUs, this host has " << devices;
  }
  int before = 0;
  ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
  const std::string first = kw::current_device_info().uuid;
  const int other = before == 0 ? 1 : 0;
  ASSERT_EQ(cudaSetDevice(other), cudaSuccess);
  const kw::device_info& switched = kw::current_device_info();
  EXPECT_EQ(switched.ordinal, other);
  EXPECT_EQ(switched.uuid, kw::query_device_info(other).uuid);
  EXPECT_NE(switched.uuid, first);
  ASSERT_EQ(cudaSetDevice(before), cudaSuccess);
  EXPECT_EQ(kw::current_device_info().uuid, first);
}
