#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/verify.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace kw = kernelwatch;

TEST(CompareExact, PassesOnEqualArrays) {
  const std::vector<float> values = {1.0F, -2.5F, 3.25F};
  EXPECT_TRUE(kw::compare_exact(values, values));
  EXPECT_TRUE(kw::compare_exact(std::vector<int>{}, std::vector<int>{}).ok);
}

TEST(CompareExact, SaysHowManyDifferAndShowsTheFirst) {
  const std::vector<float> expected = {1.0F, 2.0F, 3.0F, 4.0F};
  const std::vector<float> actual = {1.0F, 2.5F, 3.0F, 0.0F};
  const kw::check_result result = kw::compare_exact(expected, actual);
  EXPECT_FALSE(result);
  EXPECT_EQ(result.message, "2 of 4 elements differ; first at index 1: expected 2, got 2.5");
}

TEST(CompareExact, NanNeverPassesEvenAgainstNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(kw::compare_exact(std::vector<float>{nan}, std::vector<float>{nan}));
}

TEST(CompareExact, ReportsSizeMismatch) {
  const kw::check_result result =
      kw::compare_exact(std::vector<std::int32_t>{1, 2}, std::vector<std::int32_t>{1});
  EXPECT_EQ(result.message, "size differs: expected 2 elements, got 1");
}

TEST(CompareClose, AcceptsWithinRelativeOrAbsoluteTolerance) {
  const std::vector<double> expected = {1000.0, 0.0};
  const std::vector<double> actual = {1000.9, 1e-7};
  EXPECT_TRUE(kw::compare_close(expected, actual, 1e-3, 1e-6));
  EXPECT_FALSE(kw::compare_close(expected, actual, 1e-4, 1e-6));
  EXPECT_FALSE(kw::compare_close(expected, actual, 1e-3, 0.0));
}

TEST(CompareClose, NanAndInfinityFail) {
  const std::vector<float> expected = {1.0F, 1.0F};
  EXPECT_FALSE(kw::compare_close(expected, {1.0F, std::nanf("")}, 1.0));
  EXPECT_FALSE(kw::compare_close(expected, {1.0F, std::numeric_limits<float>::infinity()}, 1.0));
}

TEST(CompareClose, DoublesPrintEnoughDigitsToSeeTheDifference) {
  const kw::check_result result =
      kw::compare_close(std::vector<double>{0.1}, std::vector<double>{0.1 + 1e-12}, 1e-15);
  EXPECT_EQ(result.message,
            "1 of 1 elements differ; first at index 0: expected 0.10000000000000001, got "
            "0.10000000000100001");
}

// The device comparisons: the same verdict and the same message as the host's, on data that
// crosses many blocks of the grid-stride loop.
namespace {

template <typename T>
kw::device_buffer<T> on_device(const std::vector<T>& host) {
  kw::device_buffer<T> buffer(host.size());
  buffer.copy_from_host(host);
  return buffer;
}

}  // namespace

TEST(CompareOnDevice, SameMessageAsTheHostAcrossTheGrid) {
  KW_REQUIRE_GPU();
  const std::size_t n = (std::size_t{1} << 22) + 7;  // more elements than the grid's threads
  std::vector<float> expected(n);
  for (std::size_t i = 0; i < n; ++i) {
    expected[i] = static_cast<float>(i % 1000) * 0.5F;
  }
  std::vector<float> actual = expected;
  EXPECT_TRUE(kw::compare_exact_on_device(on_device(expected).data(), on_device(actual).data(), n));
  for (const std::size_t bad : {n - 1, std::size_t{3'000'001}, std::size_t{1'234'567}}) {
    actual[bad] = -1.0F;
  }
  const auto device_expected = on_device(expected);
  const auto device_actual = on_device(actual);
  const kw::check_result on_gpu =
      kw::compare_exact_on_device(device_expected.data(), device_actual.data(), n);
  EXPECT_FALSE(on_gpu);
  EXPECT_EQ(on_gpu.message, kw::compare_exact(expected, actual).message);
  EXPECT_EQ(on_gpu.message,
            "3 of 4194311 elements differ; first at index 1234567: expected 283.5, got -1");
  EXPECT_EQ(kw::compare_close_on_device(device_expected.data(), device_actual.data(), n, 1e-3)
                .message,
            kw::compare_close(expected, actual, 1e-3).message);
}

TEST(CompareOnDevice, StrideComparesEveryStrideThElementOnly) {
  KW_REQUIRE_GPU();
  const std::vector<std::int32_t> expected = {1, 0, 2, 0, 3, 0};
  const std::vector<std::int32_t> actual = {1, 9, 2, 9, 4, 9};
  const auto e = on_device(expected);
  const auto a = on_device(actual);
  EXPECT_TRUE(kw::compare_exact_on_device(e.data(), a.data(), 2, 2));
  EXPECT_EQ(kw::compare_exact_on_device(e.data(), a.data(), 3, 2).message,
            "1 of 3 elements differ; first at index 2: expected 3, got 4");
}

TEST(CompareOnDevice, NanNeverPassesAndNothingToCompareDoes) {
  KW_REQUIRE_GPU();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto both = on_device(std::vector<float>{1.0F, nan});
  EXPECT_FALSE(kw::compare_exact_on_device(both.data(), both.data(), 2));
  EXPECT_FALSE(kw::compare_close_on_device(both.data(), both.data(), 2, 1.0));
  EXPECT_TRUE(kw::compare_exact_on_device(both.data(), both.data(), 0));
}

// Every element type verify.hpp names, on the host and on the GPU: each links (they were
// declared for any type and defined for seven, so a half-precision check failed to link),
// passes equal arrays and shows the first difference as a number.
template <typename T>
class CompareElementTypes : public ::testing::Test {};
using element_types =
    ::testing::Types<float, double, __half, __nv_bfloat16, std::int8_t, std::uint8_t,
                     std::int16_t, std::uint16_t, std::int32_t, std::uint32_t, std::int64_t,
                     std::uint64_t>;
TYPED_TEST_SUITE(CompareElementTypes, element_types);

namespace {

template <typename T>
std::vector<T> values(std::initializer_list<int> list) {
  std::vector<T> out;
  for (const int value : list) {
    out.push_back(T(static_cast<float>(value)));
  }
  return out;
}

}  // namespace

TYPED_TEST(CompareElementTypes, OnTheHost) {
  using T = TypeParam;
  const std::vector<T> expected = values<T>({1, 2, 3, 4});
  const std::vector<T> actual = values<T>({1, 2, 5, 4});
  EXPECT_TRUE(kw::compare_exact(expected, expected));
  EXPECT_TRUE(kw::compare_close(expected, expected, 0.0));
  const std::string message = "1 of 4 elements differ; first at index 2: expected 3, got 5";
  EXPECT_EQ(kw::compare_exact(expected, actual).message, message);
  EXPECT_EQ(kw::compare_close(expected, actual, 0.1).message, message);
  EXPECT_TRUE(kw::compare_close(expected, actual, 1.0));
}

TYPED_TEST(CompareElementTypes, OnTheGpuAsOnTheHost) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  const std::vector<T> expected = values<T>({1, 2, 3, 4});
  const std::vector<T> actual = values<T>({1, 2, 5, 4});
  const auto e = on_device(expected);
  const auto a = on_device(actual);
  EXPECT_TRUE(kw::compare_exact_on_device(e.data(), e.data(), 4));
  EXPECT_EQ(kw::compare_exact_on_device(e.data(), a.data(), 4).message,
            kw::compare_exact(expected, actual).message);
  EXPECT_EQ(kw::compare_close_on_device(e.data(), a.data(), 4, 0.1).message,
            kw::compare_close(expected, actual, 0.1).message);
}

TEST(CompareExact, HalfPrecisionShowsTheFloatItHolds) {
  const std::vector<__half> expected = {__half(0.1F)};
  const std::vector<__half> actual = {__half(0.2F)};
  EXPECT_EQ(kw::compare_exact(expected, actual).message,
            "1 of 1 elements differ; first at index 0: expected 0.0999755859, got 0.199951172");
  const __half nan = __float2half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_FALSE(kw::compare_exact(std::vector<__half>{nan}, std::vector<__half>{nan}));
}
