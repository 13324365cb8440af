#include "occupancy.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

// Around warp and block boundaries, and one size that needs many blocks.
const std::vector<std::size_t> sizes = {1, 31, 32, 33, 255, 1000, (1 << 20) + 7};
const std::vector<int> block_sizes = {32, 96, 100, 256, 1024};

int device_attribute(cudaDeviceAttr attribute) {
  int device = 0;
  int value = 0;
  KW_CUDA_CHECK(cudaGetDevice(&device));
  KW_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

// Copies n random floats with `launch` and compares exactly; the output starts as NaN.
template <typename Launch>
void expect_copy(std::size_t n, int block_size, Launch launch) {
  kw::device_buffer<float> in(n);
  kw::device_buffer<float> out(n);
  kw::fill_random(in.data(), n, n, -1.0F, 1.0F);
  out.fill_bytes(0xFF);
  KW_CUDA_CHECK(launch(out.data(), in.data(), n, block_size));
  const kw::check_result result = kw::compare_exact(in.to_host(), out.to_host());
  EXPECT_TRUE(result) << "n=" << n << " block=" << block_size << ": " << result.message;
}

}  // namespace

TEST(Occupancy, FractionCountsWarpsIncludingPartialOnes) {
  constexpr kk::theoretical_occupancy hopper_32{32, 32, 2048};
  static_assert(hopper_32.active_warps() == 32 && hopper_32.max_warps() == 64);
  EXPECT_DOUBLE_EQ(hopper_32.fraction(), 0.5);
  EXPECT_DOUBLE_EQ((kk::theoretical_occupancy{96, 21, 2048}.fraction()), 63.0 / 64.0);
  // 100 threads take 4 warp slots.
  EXPECT_DOUBLE_EQ((kk::theoretical_occupancy{100, 5, 2048}.fraction()), 20.0 / 64.0);
  EXPECT_DOUBLE_EQ((kk::theoretical_occupancy{1024, 2, 2048}.fraction()), 1.0);
  EXPECT_DOUBLE_EQ(kk::theoretical_occupancy{}.fraction(), 0.0);
}

TEST(Occupancy, SharedBytesForBlocksOnHopperNumbers) {
  // H100/H200: 228 KiB per SM, 1 KiB reserved per block, 227 KiB opt-in per block.
  constexpr std::size_t per_sm = 233472;
  constexpr std::size_t reserved = 1024;
  constexpr std::size_t optin = 232448;
  EXPECT_EQ(kk::shared_bytes_for_blocks(per_sm, reserved, optin, 128, 1), optin);
  EXPECT_EQ(kk::shared_bytes_for_blocks(per_sm, reserved, optin, 128, 8), 28160U);
  for (const int blocks : {1, 2, 3, 4, 5, 6, 7, 8, 16, 32}) {
    const std::size_t bytes = kk::shared_bytes_for_blocks(per_sm, reserved, optin, 128, blocks);
    EXPECT_EQ(bytes % 128, 0U);
    EXPECT_LE(blocks * (bytes + reserved), per_sm) << blocks << " blocks must fit";
    EXPECT_GT((blocks + 1) * (bytes + reserved), per_sm) << "one more block must not";
  }
  // Nothing to reserve when the per-block reservation alone uses the share.
  EXPECT_EQ(kk::shared_bytes_for_blocks(per_sm, reserved, optin, 128, 228), 0U);
  EXPECT_EQ(kk::shared_bytes_for_blocks(per_sm, reserved, optin, 128, 0), 0U);
  // Capped at the most one block may have.
  EXPECT_EQ(kk::shared_bytes_for_blocks(per_sm, 0, 1000, 128, 1), 1000U);
}

TEST(Occupancy, CopyMatchesItsInputOnAnyBlockSize) {
  KW_REQUIRE_GPU();
  for (const std::size_t n : sizes) {
    for (const int block_size : block_sizes) {
      expect_copy(n, block_size, [](float* out, const float* in, std::size_t count, int block) {
        return kk::occupancy_copy(out, in, count, block, nullptr);
      });
    }
  }
}

TEST(Occupancy, SmemLimitedCopyMatchesItsInput) {
  KW_REQUIRE_GPU();
  for (const int blocks_per_sm : {1, 4}) {
    std::size_t shared_bytes = 0;
    KW_CUDA_CHECK(kk::shared_bytes_for_blocks_per_sm(blocks_per_sm, &shared_bytes));
    for (const std::size_t n : sizes) {
      for (const int block_size : {32, 100, 256}) {
        expect_copy(n, block_size, [=](float* out, const float* in, std::size_t count, int block) {
          return kk::smem_limited_copy(out, in, count, block, shared_bytes, nullptr);
        });
      }
    }
  }
}

TEST(Occupancy, CopyOccupancyFollowsTheSmLimits) {
  KW_REQUIRE_GPU();
  const int max_threads = device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  const int max_blocks = device_attribute(cudaDevAttrMaxBlocksPerMultiprocessor);
  // A copy needs few registers and no shared memory: threads and blocks per SM limit it.
  for (const int block_size : {32, 64, 96, 128, 256, 768, 1024}) {
    kk::theoretical_occupancy found;
    ASSERT_EQ(kk::occupancy_of_copy(block_size, &found), cudaSuccess);
    EXPECT_EQ(found.block_size, block_size);
    EXPECT_EQ(found.max_threads_per_sm, max_threads);
    EXPECT_EQ(found.blocks_per_sm, std::min(max_blocks, max_threads / block_size))
        << "block=" << block_size;
    EXPECT_GT(found.fraction(), 0.0);
    EXPECT_LE(found.fraction(), 1.0);
  }
}

TEST(Occupancy, SmemLimitedCopyHoldsTheRequestedBlocksPerSm) {
  KW_REQUIRE_GPU();
  for (const int blocks_per_sm : {1, 2, 3, 4}) {  // 4 x 128 threads fit on any SM
    std::size_t shared_bytes = 0;
    KW_CUDA_CHECK(kk::shared_bytes_for_blocks_per_sm(blocks_per_sm, &shared_bytes));
    kk::theoretical_occupancy found;
    ASSERT_EQ(kk::occupancy_of_smem_limited_copy(128, shared_bytes, &found), cudaSuccess);
    EXPECT_EQ(found.blocks_per_sm, blocks_per_sm) << shared_bytes << " bytes per block";
  }
}

TEST(Occupancy, RefusesBadArguments) {
  KW_REQUIRE_GPU();
  kw::device_buffer<float> buffer(64);
  // The runtime's exact code for a bad block size differs between versions (the H200's
  // driver 580 says cudaErrorInvalidValue for 2048): only refusal is promised.
  EXPECT_NE(kk::occupancy_copy(buffer.data(), buffer.data(), 64, 0, nullptr), cudaSuccess);
  EXPECT_NE(kk::occupancy_copy(buffer.data(), buffer.data(), 64, 2048, nullptr), cudaSuccess);
  EXPECT_EQ(kk::occupancy_of_copy(32, nullptr), cudaErrorInvalidValue);
  // Nothing to copy: nothing launched, nothing to refuse.
  EXPECT_EQ(kk::occupancy_copy(buffer.data(), buffer.data(), 0, 0, nullptr), cudaSuccess);
}
