#pragma once
// The arithmetic behind kernelwatch's counters, kept free of CUDA and Google Benchmark so
// that it is unit-tested on machines without a GPU. Every rate a result reports comes from
// compute_counters: measurement.cpp hands its values to Google Benchmark as plain counters.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kernelwatch::detail {

/// DRAM moves two transfers per memory clock (double data rate) across the whole bus.
[[nodiscard]] constexpr double theoretical_peak_bandwidth(int memory_clock_khz,
                                                          int bus_width_bits) {
  return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 *
         (static_cast<double>(bus_width_bits) / 8.0);
}

/// What one launch of a benchmarked kernel does, as its benchmark declared it (the
/// measurement builder); zero means "not applicable".
struct work_per_launch {
  std::size_t bytes_read = 0;
  std::size_t bytes_written = 0;
  std::size_t elements = 0;
  double flops = 0.0;
  /// Custom rates: (counter name, amount per launch), e.g. shared-memory bytes.
  std::vector<std::pair<std::string, double>> rates;

  [[nodiscard]] std::size_t bytes() const { return bytes_read + bytes_written; }
};

/// The bandwidths a measured one is reported as a fraction of. A peak of 0 declares traffic
/// that is not DRAM's (PCIe transfers): it is a fraction of neither.
struct bandwidth_ceilings {
  double peak = 0.0;  // the device's theoretical DRAM bandwidth -> peak_fraction
  double copy = 0.0;  // the run's measured device copy ceiling  -> ceiling_fraction
};

/// The rate counters of `launches` launches that took `gpu_seconds` in total, by counter name:
/// bytes_per_second, with peak_fraction and ceiling_fraction against ceilings > 0, when bytes
/// were declared; elements_per_second; flop_per_second; and each custom rate (which wins
/// over a built-in counter of its name). A rate is amount x launches / seconds, in the order in
/// which Google Benchmark finishes a kIsRate counter, so the values are the ones it reported
/// when it did the division; a fraction is that rate over the ceiling. Without time every
/// rate is 0, never infinite.
[[nodiscard]] std::map<std::string, double> compute_counters(const work_per_launch& work,
                                                             double launches,
                                                             double gpu_seconds,
                                                             const bandwidth_ceilings& ceilings);

}  // namespace kernelwatch::detail
