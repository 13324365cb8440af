#include "shared_banks.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

TEST(BankConflictWays, IsTheGcdWithThe32BanksFor32BitWords) {
  for (int pitch = 1; pitch <= 96; ++pitch) {
    EXPECT_EQ(kk::bank_conflict_ways(4, pitch), std::gcd(pitch, 32)) << "pitch=" << pitch;
  }
}

TEST(BankConflictWays, IsTheGcdWith16BankPairsFor64BitWordsServedPerHalfWarp) {
  for (int pitch = 1; pitch <= 96; ++pitch) {
    EXPECT_EQ(kk::bank_conflict_ways(8, pitch), std::gcd(pitch, 16)) << "pitch=" << pitch;
  }
}

TEST(BankConflictWays, PaddingOneWordRemovesTheStride32Conflict) {
  EXPECT_EQ(kk::bank_conflict_ways(4, 32), 32);
  EXPECT_EQ(kk::bank_conflict_ways(4, 33), 1);
  EXPECT_EQ(kk::bank_conflict_ways(8, 32), 16);
  EXPECT_EQ(kk::bank_conflict_ways(8, 33), 1);
}

TEST(BankConflictWays, RejectsOtherWordSizesAndPitches) {
  EXPECT_EQ(kk::bank_conflict_ways(2, 1), 0);
  EXPECT_EQ(kk::bank_conflict_ways(4, 0), 0);
}

TEST(SharedStridedReadReference, SumsTheWordsEachLaneReads) {
  std::vector<std::uint32_t> words(kk::shared_banks_words);
  std::iota(words.begin(), words.end(), 0U);
  // One round: thread t sums words row + u, u in [0, 32), row = (t % 32) * pitch + t / 32.
  const std::vector<std::uint32_t> sums = kk::shared_strided_read_reference(words, 3, 1, 1);
  ASSERT_EQ(sums.size(), static_cast<std::size_t>(kk::shared_banks_block_size));
  for (int t = 0; t < kk::shared_banks_block_size; ++t) {
    const std::uint32_t row = static_cast<std::uint32_t>((t % 32) * 4 + t / 32);
    EXPECT_EQ(sums[static_cast<std::size_t>(t)], 32U * row + 31U * 32U / 2U) << "t=" << t;
  }
}

template <typename T>
class SharedStridedRead : public ::testing::Test {};
using word_types = ::testing::Types<std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(SharedStridedRead, word_types);

// Block count, rounds (a round count past 32 wraps the per-round shift), stride and padding;
// every block computes the same sums, so each output must equal the one-block reference.
TYPED_TEST(SharedStridedRead, MatchesTheHostReference) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  std::vector<T> host_words(kk::shared_banks_words);
  for (std::size_t i = 0; i < host_words.size(); ++i) {
    host_words[i] = static_cast<T>(kw::mix64(i));
  }
  kw::device_buffer<T> words(host_words.size());
  words.copy_from_host(host_words);
  for (const unsigned int blocks : {1U, 3U, 133U}) {
    for (const int rounds : {0, 1, 33}) {
      for (const int stride : {1, 2, 3, 8, 17, 32}) {
        for (const int padding : {0, 1}) {
          kw::device_buffer<T> out(static_cast<std::size_t>(blocks) * kk::shared_banks_block_size);
          out.fill_bytes(0xFF);
          KW_CUDA_CHECK(kk::shared_strided_read(out.data(), words.data(), stride, padding, rounds,
                                                blocks, nullptr));
          const std::vector<T> block =
              kk::shared_strided_read_reference(host_words, stride, padding, rounds);
          std::vector<T> expected(out.size());
          for (std::size_t i = 0; i < expected.size(); ++i) {
            expected[i] = block[i % block.size()];
          }
          const kw::check_result result = kw::compare_exact(expected, out.to_host());
          EXPECT_TRUE(result) << "blocks=" << blocks << " rounds=" << rounds
                              << " stride=" << stride << " padding=" << padding << ": "
                              << result.message;
        }
      }
    }
  }
}

TYPED_TEST(SharedStridedRead, ReadsAtTheWidestPitch) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  std::vector<T> host_words(kk::shared_banks_words);
  for (std::size_t i = 0; i < host_words.size(); ++i) {
    host_words[i] = static_cast<T>(kw::mix64(i + 7));
  }
  kw::device_buffer<T> words(host_words.size());
  words.copy_from_host(host_words);
  kw::device_buffer<T> out(kk::shared_banks_block_size);
  out.fill_bytes(0xFF);
  KW_CUDA_CHECK(kk::shared_strided_read(out.data(), words.data(), kk::shared_banks_max_pitch, 0,
                                        32, 1U, nullptr));
  const kw::check_result result = kw::compare_exact(
      kk::shared_strided_read_reference(host_words, kk::shared_banks_max_pitch, 0, 32),
      out.to_host());
  EXPECT_TRUE(result) << result.message;
}

TYPED_TEST(SharedStridedRead, RefusesBadArguments) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  kw::device_buffer<T> words(kk::shared_banks_words);
  kw::device_buffer<T> out(kk::shared_banks_block_size);
  EXPECT_EQ(kk::shared_strided_read(out.data(), words.data(), 0, 0, 1, 1U, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kk::shared_strided_read(out.data(), words.data(), kk::shared_banks_max_pitch, 1, 1,
                                    1U, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kk::shared_strided_read(out.data(), words.data(), 1, 0, -1, 1U, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kk::shared_strided_read(out.data(), words.data(), 1, 0, 1, 0U, nullptr),
            cudaErrorInvalidValue);
}

TYPED_TEST(SharedStridedRead, GridFillsEverySm) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  unsigned int blocks = 0;
  KW_CUDA_CHECK(kk::shared_strided_read_grid<T>(&blocks));
  const auto sms = static_cast<unsigned int>(kw::current_device_info().sm_count);
  EXPECT_GT(blocks, 0U);
  EXPECT_EQ(blocks % sms, 0U);
}
