#include <kernelwatch/detail/sample_statistics.hpp>

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

namespace kd = kernelwatch::detail;

TEST(MedianIntervalRanks, MatchesTheBinomialTableAndClampsSmallCounts) {
  // Ranks of the 95 % interval of the median (normal approximation to binomial(n, 1/2)).
  EXPECT_EQ(kd::median_interval_ranks(100), (std::pair<std::size_t, std::size_t>{40, 61}));
  EXPECT_EQ(kd::median_interval_ranks(10), (std::pair<std::size_t, std::size_t>{1, 10}));
  EXPECT_EQ(kd::median_interval_ranks(3), (std::pair<std::size_t, std::size_t>{1, 3}));
  EXPECT_EQ(kd::median_interval_ranks(1), (std::pair<std::size_t, std::size_t>{1, 1}));
  EXPECT_THROW((void)kd::median_interval_ranks(0), std::invalid_argument);
}

TEST(MedianIntervalRanks, CoversTheMedianAboutNinetyFivePercentOfTheTime) {
  std::mt19937 random(7);
  std::lognormal_distribution<double> times(0.0, 0.3);  // skewed, like kernel timings
  const double true_median = 1.0;                       // exp(0)
  int covered = 0;
  constexpr int trials = 2000;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<double> samples(60);
    for (double& sample : samples) {
      sample = times(random);
    }
    const kd::sample_summary summary = kd::summarize_samples(samples);
    covered += summary.lower <= true_median && true_median <= summary.upper ? 1 : 0;
  }
  EXPECT_GT(covered, trials * 93 / 100);
  EXPECT_LT(covered, trials * 99 / 100);
}

TEST(SummarizeSamples, MedianWidthAndCv) {
  const kd::sample_summary summary = kd::summarize_samples({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(summary.count, 4U);
  EXPECT_DOUBLE_EQ(summary.median, 2.5);
  EXPECT_DOUBLE_EQ(summary.lower, 1.0);
  EXPECT_DOUBLE_EQ(summary.upper, 4.0);
  EXPECT_DOUBLE_EQ(summary.relative_width, 3.0 / 2.5);
  EXPECT_NEAR(summary.cv, 1.2909944 / 2.5, 1e-6);  // sample standard deviation over the mean

  const kd::sample_summary single = kd::summarize_samples({5.0});
  EXPECT_DOUBLE_EQ(single.median, 5.0);
  EXPECT_DOUBLE_EQ(single.relative_width, 0.0);
  EXPECT_DOUBLE_EQ(single.cv, 0.0);
  EXPECT_THROW((void)kd::summarize_samples({}), std::invalid_argument);
}

TEST(SummarizeSamples, WidthShrinksLikeOneOverRootN) {
  std::mt19937 random(11);
  std::normal_distribution<double> times(100.0, 1.0);
  const auto width_of = [&](std::size_t n) {
    std::vector<double> samples(n);
    for (double& sample : samples) {
      sample = times(random);
    }
    return kd::summarize_samples(samples).relative_width;
  };
  const double small = width_of(400);
  const double large = width_of(6400);  // 16 x the samples: about a quarter of the width
  EXPECT_GT(small / large, 2.5);
  EXPECT_LT(small / large, 6.5);
}
