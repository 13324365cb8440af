#include <kernelwatch/detail/counters.hpp>

#include "../support/capture_reporter.hpp"

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>

namespace kw = kernelwatch;
using kernelwatch::testing::run_benchmarks;

TEST(TheoreticalPeakBandwidth, MatchesDatasheetOfH100AndH200) {
  // H100 SXM: HBM3 at 2619 MHz on a 5120-bit bus, 3.35 TB/s on the datasheet.
  EXPECT_NEAR(kw::detail::theoretical_peak_bandwidth(2'619'000, 5120), 3.352e12, 1e9);
  // H200: HBM3e at 3201 MHz on a 6144-bit bus.
  EXPECT_NEAR(kw::detail::theoretical_peak_bandwidth(3'201'000, 6144), 4.917e12, 1e9);
}

TEST(TheoreticalPeakBandwidth, IsZeroWithoutMemoryFacts) {
  EXPECT_EQ(kw::detail::theoretical_peak_bandwidth(0, 5120), 0.0);
}

TEST(ComputeCounters, RatesAreWorkTimesLaunchesOverTime) {
  kw::detail::work_per_launch work;
  work.bytes_read = 1000;
  work.bytes_written = 500;
  work.elements = 250;
  work.flops = 4000.0;
  const auto values = kw::detail::compute_counters(work, 10.0, 0.5, {60000.0, 120000.0});
  EXPECT_DOUBLE_EQ(values.at("bytes_per_second"), 1500.0 * 10.0 / 0.5);
  EXPECT_DOUBLE_EQ(values.at("elements_per_second"), 250.0 * 10.0 / 0.5);
  EXPECT_DOUBLE_EQ(values.at("flop_per_second"), 4000.0 * 10.0 / 0.5);
  EXPECT_DOUBLE_EQ(values.at("peak_fraction"), 0.5);
  EXPECT_DOUBLE_EQ(values.at("ceiling_fraction"), 0.25);
  EXPECT_EQ(values.size(), 5U);
}

TEST(ComputeCounters, NoTimeOrNoPeakGivesZeroNotInfinity) {
  kw::detail::work_per_launch work;
  work.bytes_read = 1000;
  EXPECT_EQ(kw::detail::compute_counters(work, 10.0, 0.0, {1e12, 1e12}).at("bytes_per_second"),
            0.0);
  EXPECT_EQ(kw::detail::compute_counters(work, 0.0, 1.0, {1e12, 1e12}).at("bytes_per_second"),
            0.0);
  EXPECT_EQ(kw::detail::compute_counters(work, 1.0, 1.0, {0.0, 1e12}).count("peak_fraction"), 0U);
}

TEST(ComputeCounters, OnlyDeclaredWorkIsReported) {
  kw::detail::work_per_launch flops_only;
  flops_only.flops = 2.0;
  const auto values = kw::detail::compute_counters(flops_only, 4.0, 2.0, {1e12, 1e12});
  ASSERT_EQ(values.size(), 1U);
  EXPECT_EQ(values.at("flop_per_second"), 4.0);
  EXPECT_TRUE(kw::detail::compute_counters({}, 4.0, 2.0, {1e12, 1e12}).empty());
}

TEST(ComputeCounters, TrafficThatIsNotDramsIsAFractionOfNoCeiling) {
  // peak_bandwidth(0): PCIe transfers, whose bandwidth against HBM's would mislead.
  kw::detail::work_per_launch work;
  work.bytes_read = 1000;
  const auto values = kw::detail::compute_counters(work, 1.0, 1.0, {0.0, 5e11});
  EXPECT_EQ(values.count("peak_fraction"), 0U);
  EXPECT_EQ(values.count("ceiling_fraction"), 0U);
  EXPECT_EQ(values.at("bytes_per_second"), 1000.0);
  EXPECT_EQ(kw::detail::compute_counters(work, 1.0, 1.0, {1e12, 0.0}).count("ceiling_fraction"),
            0U);
}

TEST(ComputeCounters, CustomRatesAreRatesAndWinOverBuiltInNames) {
  kw::detail::work_per_launch work;
  work.elements = 8;
  work.rates = {{"shared_bytes_per_second", 64.0}, {"elements_per_second", 3.0}};
  const auto values = kw::detail::compute_counters(work, 2.0, 4.0, {});
  EXPECT_EQ(values.at("shared_bytes_per_second"), 32.0);
  EXPECT_EQ(values.at("elements_per_second"), 1.5);
}

// The counters were once Google Benchmark kIsRate counters, divided by its accumulated manual
// time; results compared across that change must hold the very same bits, so the function must
// do Google Benchmark's arithmetic in its order. Checked against the installed Google Benchmark.
namespace {
constexpr double rate_amount = 1234567.0;  // bytes per launch: not a power of two
constexpr std::initializer_list<double> manual_times = {1.1e-4, 3.3e-5, 7.7e-6};

void manual_rate(benchmark::State& state) {
  std::size_t launch = 0;
  for (auto _ : state) {
    state.SetIterationTime(manual_times.begin()[launch++]);
  }
  state.counters["bytes_per_second"] = benchmark::Counter(
      rate_amount * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
[[maybe_unused]] const auto* const manual_rate_registered =
    benchmark::RegisterBenchmark("counters_test/manual_rate", manual_rate)
        ->UseManualTime()
        ->Iterations(3);
}  // namespace

TEST(ComputeCounters, RatesAreBitForBitGoogleBenchmarksRateCounters) {
  const auto runs = run_benchmarks("^counters_test/manual_rate/");
  ASSERT_EQ(runs.size(), 1U);
  double seconds = 0.0;
  for (const double time : manual_times) {
    seconds += time;  // summed as measurement::run sums its medians
  }
  kw::detail::work_per_launch work;
  work.bytes_read = static_cast<std::size_t>(rate_amount);
  const auto values = kw::detail::compute_counters(work, 3.0, seconds, {});
  EXPECT_EQ(values.at("bytes_per_second"), runs[0].counters.at("bytes_per_second").value);
}
