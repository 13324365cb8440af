#include "local_memory.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

const kk::local_memory_variant variants[] = {kk::local_memory_variant::registers,
                                             kk::local_memory_variant::local_array,
                                             kk::local_memory_variant::register_capped};

const char* name(kk::local_memory_variant variant) {
  switch (variant) {
    case kk::local_memory_variant::registers:
      return "registers";
    case kk::local_memory_variant::local_array:
      return "local_array";
    case kk::local_memory_variant::register_capped:
      return "register_capped";
  }
  return "?";
}

cudaFuncAttributes attributes_of(kk::local_memory_variant variant) {
  cudaFuncAttributes attributes{};
  KW_CUDA_CHECK(kk::local_memory_attributes(variant, &attributes));
  return attributes;
}

}  // namespace

TEST(LocalMemoryReference, ZeroRoundsFoldsTheInitialArray) {
  const std::uint32_t x = 12345U;
  std::uint32_t h = 0;
  for (std::uint32_t j = 0; j < 32U; ++j) {
    h = h * 31U + (x + j * 0x9E3779B9U);
  }
  EXPECT_EQ(kk::local_memory_reference(x, 0), h);
}

TEST(LocalMemoryReference, EveryRoundChangesTheResult) {
  EXPECT_NE(kk::local_memory_reference(7U, 1), kk::local_memory_reference(7U, 0));
  EXPECT_NE(kk::local_memory_reference(7U, 2), kk::local_memory_reference(7U, 1));
  EXPECT_NE(kk::local_memory_reference(7U, 1), kk::local_memory_reference(8U, 1));
}

// Sizes around the block boundary and one of many blocks; every output is checked (exact:
// wrapping 32-bit integer arithmetic).
TEST(LocalMemory, EveryVariantMatchesTheHostReference) {
  KW_REQUIRE_GPU();
  for (const std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{257},
                              std::size_t{1000}, (std::size_t{1} << 16) + 3}) {
    kw::device_buffer<std::uint32_t> in(n);
    kw::fill_random(in.data(), n, n, std::uint32_t{0}, std::numeric_limits<std::uint32_t>::max());
    const std::vector<std::uint32_t> input = in.to_host();
    for (const int rounds : {0, 1, 5}) {
      std::vector<std::uint32_t> expected(n);
      for (std::size_t t = 0; t < n; ++t) {
        expected[t] = kk::local_memory_reference(input[t], rounds);
      }
      for (const kk::local_memory_variant variant : variants) {
        kw::device_buffer<std::uint32_t> out(n + 1);  // one more: must stay untouched
        out.fill_bytes(0xAB);
        KW_CUDA_CHECK(kk::local_memory_run(variant, out.data(), in.data(), n, rounds, nullptr));
        std::vector<std::uint32_t> with_guard = expected;
        with_guard.push_back(0xABABABABU);
        const kw::check_result result = kw::compare_exact(with_guard, out.to_host());
        EXPECT_TRUE(result) << name(variant) << " n=" << n << " rounds=" << rounds << ": "
                            << result.message;
      }
    }
  }
}

TEST(LocalMemory, EmptyInputLaunchesNothing) {
  KW_REQUIRE_GPU();
  for (const kk::local_memory_variant variant : variants) {
    EXPECT_EQ(kk::local_memory_run(variant, nullptr, nullptr, 0, 1, nullptr), cudaSuccess);
  }
}

TEST(LocalMemory, RefusesNegativeRoundsAndUnknownVariants) {
  KW_REQUIRE_GPU();
  kw::device_buffer<std::uint32_t> buffer(1);
  EXPECT_EQ(kk::local_memory_run(kk::local_memory_variant::registers, buffer.data(),
                                 buffer.data(), 1, -1, nullptr),
            cudaErrorInvalidValue);
  const auto unknown = static_cast<kk::local_memory_variant>(42);
  EXPECT_EQ(kk::local_memory_run(unknown, buffer.data(), buffer.data(), 1, 1, nullptr),
            cudaErrorInvalidValue);
  cudaFuncAttributes attributes{};
  EXPECT_EQ(kk::local_memory_attributes(unknown, &attributes), cudaErrorInvalidValue);
  int blocks = 0;
  EXPECT_EQ(kk::local_memory_resident_blocks(unknown, &blocks), cudaErrorInvalidValue);
}

// What the benchmark is about: the compiler placed each variant's array where intended.
TEST(LocalMemory, CompilerPlacesTheArrayWhereEachVariantIntends) {
  KW_REQUIRE_GPU();
  const cudaFuncAttributes in_registers = attributes_of(kk::local_memory_variant::registers);
  const cudaFuncAttributes in_local = attributes_of(kk::local_memory_variant::local_array);
  const cudaFuncAttributes capped = attributes_of(kk::local_memory_variant::register_capped);
  EXPECT_EQ(in_registers.localSizeBytes, 0U);
  EXPECT_GT(in_registers.numRegs, 32);  // the 32 words plus working values
  EXPECT_GE(in_local.localSizeBytes, kk::local_memory_array_size * sizeof(std::uint32_t));
  const int cap = 65536 / (kk::local_memory_block_size * kk::local_memory_capped_min_blocks);
  EXPECT_LE(capped.numRegs, cap);
  EXPECT_GT(capped.localSizeBytes, 0U);  // spills
  int blocks = 0;
  KW_CUDA_CHECK(kk::local_memory_resident_blocks(kk::local_memory_variant::register_capped,
                                                 &blocks));
  EXPECT_GE(blocks, kk::local_memory_capped_min_blocks);
}
