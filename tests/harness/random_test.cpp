#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/random.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kw = kernelwatch;

TEST(RandomValue, StaysInRangeAndIsNotConstant) {
  std::set<float> seen;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const float value = kw::random_value<float>(7, i, -1.0F, 1.0F);
    ASSERT_GE(value, -1.0F);
    ASSERT_LT(value, 1.0F);
    seen.insert(value);
  }
  EXPECT_GT(seen.size(), 9900U);  // 24 bits of randomness: collisions are rare
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::int32_t value = kw::random_value<std::int32_t>(7, i, -5, 5);
    ASSERT_GE(value, -5);
    ASSERT_LT(value, 5);
  }
}

TEST(RandomValue, WideSignedRangesStayInRangeWithoutOverflow) {
  // hi - lo does not fit the type; computed in the unsigned type (UBSan flagged the signed one).
  constexpr std::int32_t lo = std::numeric_limits<std::int32_t>::min();
  constexpr std::int32_t hi = std::numeric_limits<std::int32_t>::max();
  int negative = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::int32_t value = kw::random_value<std::int32_t>(7, i, lo, hi);
    ASSERT_LT(value, hi);
    negative += value < 0 ? 1 : 0;
  }
  EXPECT_GT(negative, 400);
  EXPECT_LT(negative, 600);
  // Where the signed arithmetic did not overflow, the values are the ones it gave.
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::uint64_t bits = kw::mix64(kw::mix64(7) ^ i);
    EXPECT_EQ(kw::random_value<std::int32_t>(7, i, -5, 5),
              -5 + static_cast<std::int32_t>(bits % 10));
  }
}

TEST(RandomValue, DependsOnSeedAndIndexOnly) {
  EXPECT_EQ(kw::random_value<double>(1, 42, 0.0, 1.0), kw::random_value<double>(1, 42, 0.0, 1.0));
  EXPECT_NE(kw::random_value<double>(1, 42, 0.0, 1.0), kw::random_value<double>(2, 42, 0.0, 1.0));
  EXPECT_NE(kw::random_value<double>(1, 42, 0.0, 1.0), kw::random_value<double>(1, 43, 0.0, 1.0));
}

template <typename T>
class FillRandom : public ::testing::Test {};
using fill_types = ::testing::Types<float, double, std::int32_t, std::uint32_t, std::int64_t>;
TYPED_TEST_SUITE(FillRandom, fill_types);

TYPED_TEST(FillRandom, DeviceValuesEqualHostValuesBitForBit) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{(1 << 20) + 3}}) {
    kw::device_buffer<T> buffer(n);
    kw::fill_random(buffer.data(), n, 99, T(1), T(100));
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<T> values = buffer.to_host();
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(values[i], kw::random_value<T>(99, i, T(1), T(100))) << "n=" << n << " i=" << i;
    }
  }
}

// lo == hi is a constant input (every value lo), which a benchmark may want; the integer path
// divided by the empty span and crashed the host reference with SIGFPE.
TYPED_TEST(FillRandom, EqualBoundsGiveThatValueOnTheHost) {
  using T = TypeParam;
  for (const T value : {T(7), std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()}) {
    for (std::uint64_t i = 0; i < 1000; ++i) {
      ASSERT_EQ(kw::random_value<T>(99, i, value, value), value) << "i=" << i;
    }
  }
}

TYPED_TEST(FillRandom, EqualBoundsGiveThatValueOnTheDevice) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  constexpr std::size_t n = 1000 + 3;
  for (const T value : {T(7), std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()}) {
    kw::device_buffer<T> buffer(n);
    kw::fill_random(buffer.data(), n, 99, value, value);
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<T> values = buffer.to_host();
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(values[i], value) << "i=" << i;
      ASSERT_EQ(values[i], kw::random_value<T>(99, i, value, value)) << "i=" << i;
    }
  }
}

// Refused before anything reaches the GPU, so this runs on any machine (and for n == 0).
TYPED_TEST(FillRandom, RefusesReversedOrNonFiniteBoundsWithOneLine) {
  using T = TypeParam;
  const auto error_of = [](T lo, T hi, std::size_t n) -> std::string {
    try {
      kw::fill_random(static_cast<T*>(nullptr), n, 1, lo, hi);
    } catch (const std::invalid_argument& error) {
      return error.what();
    } catch (const std::exception& error) {
      return std::string("another error: ") + error.what();
    }
    return "no error";
  };
  const std::string reversed = "fill_random: the bounds must be finite, with lo <= hi, not [5, 3)";
  EXPECT_EQ(error_of(T(5), T(3), 10), reversed);
  EXPECT_EQ(error_of(T(5), T(3), 0), reversed);
  if constexpr (std::is_floating_point_v<T>) {
    constexpr T nan = std::numeric_limits<T>::quiet_NaN();
    constexpr T inf = std::numeric_limits<T>::infinity();
    EXPECT_EQ(error_of(nan, T(1), 10),
              "fill_random: the bounds must be finite, with lo <= hi, not [nan, 1)");
    EXPECT_EQ(error_of(T(0), nan, 10),
              "fill_random: the bounds must be finite, with lo <= hi, not [0, nan)");
    EXPECT_EQ(error_of(T(0), inf, 10),
              "fill_random: the bounds must be finite, with lo <= hi, not [0, inf)");
    EXPECT_EQ(error_of(-inf, T(0), 10),
              "fill_random: the bounds must be finite, with lo <= hi, not [-inf, 0)");
  }
}
