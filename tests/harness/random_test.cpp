#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/random.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
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
using fill_types =
    ::testing::Types<float, double, std::int8_t, std::uint8_t, std::int16_t, std::uint16_t,
                     std::int32_t, std::uint32_t, std::int64_t, std::uint64_t>;
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

// Half precision: a float of [lo, hi) rounded to the nearest, the same on the host and the GPU.
template <typename T>
class FillRandomHalf : public ::testing::Test {};
using half_types = ::testing::Types<__half, __nv_bfloat16>;
TYPED_TEST_SUITE(FillRandomHalf, half_types);

namespace {

template <typename T>
std::uint16_t bits_of(T value) {
  std::uint16_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

template <typename T>
std::string half_error_of(float lo, float hi) {
  try {
    kw::fill_random(static_cast<T*>(nullptr), 10, 1, T(lo), T(hi));
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TYPED_TEST(FillRandomHalf, TheFloatValueRoundedAndInRange) {
  using T = TypeParam;
  std::set<std::uint16_t> seen;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const T value = kw::random_value<T>(7, i, T(-1.0F), T(1.0F));
    ASSERT_EQ(bits_of(value), bits_of(T(kw::random_value<float>(7, i, -1.0F, 1.0F))));
    ASSERT_GE(static_cast<float>(value), -1.0F);
    ASSERT_LE(static_cast<float>(value), 1.0F);
    seen.insert(bits_of(value));
  }
  EXPECT_GT(seen.size(), 100U);
}

TYPED_TEST(FillRandomHalf, DeviceValuesEqualHostValuesBitForBit) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  const std::size_t n = (1 << 20) + 3;
  kw::device_buffer<T> buffer(n);
  kw::fill_random(buffer.data(), n, 99, T(1.0F), T(100.0F));
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<T> values = buffer.to_host();
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(bits_of(values[i]), bits_of(kw::random_value<T>(99, i, T(1.0F), T(100.0F))))
        << "i=" << i;
  }
}

TYPED_TEST(FillRandomHalf, RefusesReversedOrNonFiniteBoundsWithOneLine) {
  using T = TypeParam;
  EXPECT_EQ(half_error_of<T>(5.0F, 3.0F),
            "fill_random: the bounds must be finite, with lo <= hi, not [5, 3)");
  EXPECT_EQ(half_error_of<T>(std::numeric_limits<float>::quiet_NaN(), 1.0F),
            "fill_random: the bounds must be finite, with lo <= hi, not [nan, 1)");
  EXPECT_EQ(half_error_of<T>(0.0F, std::numeric_limits<float>::infinity()),
            "fill_random: the bounds must be finite, with lo <= hi, not [0, inf)");
}
