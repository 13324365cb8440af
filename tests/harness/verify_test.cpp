#include <kernelwatch/verify.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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
