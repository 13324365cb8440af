#include <kernelwatch/counters.hpp>

#include <gtest/gtest.h>

namespace kw = kernelwatch;

TEST(TheoreticalPeakBandwidth, MatchesDatasheetOfH100AndH200) {
  // H100 SXM: HBM3 at 2619 MHz on a 5120-bit bus, 3.35 TB/s on the datasheet.
  EXPECT_NEAR(kw::theoretical_peak_bandwidth(2'619'000, 5120), 3.352e12, 1e9);
  // H200: HBM3e at 3201 MHz on a 6144-bit bus.
  EXPECT_NEAR(kw::theoretical_peak_bandwidth(3'201'000, 6144), 4.917e12, 1e9);
}

TEST(TheoreticalPeakBandwidth, IsZeroWithoutMemoryFacts) {
  EXPECT_EQ(kw::theoretical_peak_bandwidth(0, 5120), 0.0);
}

TEST(ComputeCounters, RatesAreWorkTimesLaunchesOverTime) {
  kw::work_per_launch work;
  work.bytes_read = 1000;
  work.bytes_written = 500;
  work.elements = 250;
  work.flops = 4000.0;
  const kw::counter_values values = kw::compute_counters(work, 10.0, 0.5, 60000.0);
  EXPECT_DOUBLE_EQ(values.bytes_per_second, 1500.0 * 10.0 / 0.5);
  EXPECT_DOUBLE_EQ(values.elements_per_second, 250.0 * 10.0 / 0.5);
  EXPECT_DOUBLE_EQ(values.flop_per_second, 4000.0 * 10.0 / 0.5);
  EXPECT_DOUBLE_EQ(values.peak_fraction, 0.5);
}

TEST(ComputeCounters, NoTimeOrNoPeakGivesZeroNotInfinity) {
  kw::work_per_launch work;
  work.bytes_read = 1000;
  EXPECT_EQ(kw::compute_counters(work, 10.0, 0.0, 1e12).bytes_per_second, 0.0);
  EXPECT_EQ(kw::compute_counters(work, 0.0, 1.0, 1e12).bytes_per_second, 0.0);
  EXPECT_EQ(kw::compute_counters(work, 1.0, 1.0, 0.0).peak_fraction, 0.0);
}
