#include "transpose.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;
using kk::transpose_variant;

namespace {

struct shape {
  int rows;
  int cols;
};

// Around the 32-wide tile, the 64-wide best tile and the 128-wide unrolled tile; single rows
// and columns; non-square grids (the diagonal order's general case); many blocks per side.
const std::vector<shape> shapes = {{1, 1},     {1, 100},    {100, 1},   {31, 33},  {32, 32},
                                   {33, 31},   {64, 64},    {65, 127},  {127, 65}, {200, 67},
                                   {129, 1000}, {1000, 129}, {513, 257}, {4096, 72}};

constexpr std::size_t guard = 256;  // poisoned elements past the matrix: no write may reach them

std::string describe(transpose_variant variant, int block_rows, shape s) {
  return std::string(kk::transpose_variant_name(variant)) + " block_rows=" +
         std::to_string(block_rows) + " rows=" + std::to_string(s.rows) +
         " cols=" + std::to_string(s.cols);
}

// Runs one variant on a random matrix and checks every element exactly (a permutation), and
// that the poisoned guard past the output is untouched.
void check(transpose_variant variant, int block_rows, shape s) {
  const std::size_t n = static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
  kw::device_buffer<float> in(n);
  kw::fill_random(in.data(), n, n, -1.0F, 1.0F);
  kw::device_buffer<float> out(n + guard);
  out.fill_bytes(0xFF);
  KW_CUDA_CHECK(cudaDeviceSynchronize());  // the fill runs on the legacy stream
  KW_CUDA_CHECK(kk::transpose(variant, out.data(), in.data(), s.rows, s.cols, block_rows,
                              nullptr));
  KW_CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<float> input = in.to_host();
  std::vector<float> output = out.to_host();
  std::vector<float> expected(n);
  if (kk::transpose_is_copy(variant)) {
    expected = input;
  } else {
    kk::transpose_host(input.data(), expected.data(), s.rows, s.cols);
  }
  const kw::check_result result = kw::compare_exact(expected.data(), output.data(), n);
  EXPECT_TRUE(result) << describe(variant, block_rows, s) << ": " << result.message;

  std::vector<std::uint32_t> guard_bits(guard);
  std::memcpy(guard_bits.data(), output.data() + n, guard * sizeof(float));
  for (std::size_t i = 0; i < guard; ++i) {
    ASSERT_EQ(guard_bits[i], 0xFFFFFFFFU)
        << describe(variant, block_rows, s) << ": wrote past the matrix at +" << i;
  }
}

std::string test_name(const ::testing::TestParamInfo<transpose_variant>& info) {
  return kk::transpose_variant_name(info.param);
}

}  // namespace

class TransposeVariant : public ::testing::TestWithParam<transpose_variant> {};

TEST_P(TransposeVariant, MatchesTheHostReferenceOnEveryShapeAndBlock) {
  KW_REQUIRE_GPU();
  const transpose_variant variant = GetParam();
  const std::vector<int> blocks = kk::transpose_takes_block_rows(variant)
                                      ? std::vector<int>{32, 8}
                                      : std::vector<int>{kk::transpose_best_block_rows};
  for (const int block_rows : blocks) {
    for (const shape s : shapes) {
      check(variant, block_rows, s);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, TransposeVariant, ::testing::ValuesIn(kk::transpose_variants),
                         test_name);

// ---- Host-only: what the launcher refuses or skips happens before any CUDA call. ----

TEST(TransposeVariants, NamesAreUniqueAndOnlyCopiesSkipTheTranspose) {
  std::set<std::string> names;
  int copies = 0;
  for (const transpose_variant variant : kk::transpose_variants) {
    const std::string name = kk::transpose_variant_name(variant);
    EXPECT_NE(name, "unknown");
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << name;
    EXPECT_TRUE(names.insert(name).second) << name;
    copies += kk::transpose_is_copy(variant) ? 1 : 0;
  }
  EXPECT_EQ(names.size(), 11U);
  EXPECT_EQ(copies, 2);
  EXPECT_FALSE(kk::transpose_takes_block_rows(transpose_variant::best));
}

TEST(TransposeHost, TransposesARectangle) {
  const std::vector<int> in = {1, 2, 3,   // 2 x 3
                               4, 5, 6};
  std::vector<int> out(6);
  kk::transpose_host(in.data(), out.data(), 2, 3);
  EXPECT_EQ(out, (std::vector<int>{1, 4, 2, 5, 3, 6}));  // 3 x 2
}

TEST(TransposeHost, CrossesItsBlockBoundaries) {
  constexpr std::size_t rows = 70;
  constexpr std::size_t cols = 33;
  std::vector<int> in(rows * cols);
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i] = static_cast<int>(i);
  }
  std::vector<int> out(rows * cols, -1);
  kk::transpose_host(in.data(), out.data(), rows, cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      ASSERT_EQ(out[c * rows + r], in[r * cols + c]) << r << "," << c;
    }
  }
}

TEST(TransposeLauncher, RefusesBadBlockRowsAndNegativeSizes) {
  for (const transpose_variant variant : kk::transpose_variants) {
    SCOPED_TRACE(kk::transpose_variant_name(variant));
    EXPECT_EQ(kk::transpose<float>(variant, nullptr, nullptr, -1, 4, 8, nullptr),
              cudaErrorInvalidValue);
    EXPECT_EQ(kk::transpose<float>(variant, nullptr, nullptr, 4, -1, 8, nullptr),
              cudaErrorInvalidValue);
    if (kk::transpose_takes_block_rows(variant)) {
      for (const int block_rows : {0, 4, 16, 64}) {
        EXPECT_EQ(kk::transpose<float>(variant, nullptr, nullptr, 4, 4, block_rows, nullptr),
                  cudaErrorInvalidValue)
            << block_rows;
      }
    }
  }
}

TEST(TransposeLauncher, EmptyMatricesLaunchNothing) {
  for (const transpose_variant variant : kk::transpose_variants) {
    SCOPED_TRACE(kk::transpose_variant_name(variant));
    EXPECT_EQ(kk::transpose<float>(variant, nullptr, nullptr, 0, 100, 8, nullptr), cudaSuccess);
    EXPECT_EQ(kk::transpose<float>(variant, nullptr, nullptr, 100, 0, 32, nullptr), cudaSuccess);
  }
}

TEST(TransposeLauncher, RefusesGridsPastTheYLimitBeforeLaunching) {
  // 65536 tiles of 32 (or 64) along the grid's y: rows for the row walks and the tiled
  // kernels, columns for the column walks.
  constexpr int long_side = 65536 * 64;
  for (const transpose_variant variant : kk::transpose_variants) {
    SCOPED_TRACE(kk::transpose_variant_name(variant));
    const bool walks_columns = variant == transpose_variant::copy_columns ||
                               variant == transpose_variant::naive_columns ||
                               variant == transpose_variant::diagonal_columns ||
                               variant == transpose_variant::unrolled_columns;
    const int rows = walks_columns ? 1 : long_side;
    const int cols = walks_columns ? long_side : 1;
    EXPECT_EQ(kk::transpose<float>(variant, nullptr, nullptr, rows, cols, 8, nullptr),
              cudaErrorInvalidConfiguration);
  }
}
