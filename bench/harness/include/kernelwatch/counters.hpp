#pragma once
// The arithmetic behind kernelwatch's counters, kept free of CUDA and Google Benchmark so
// that it is unit-tested on machines without a GPU.

#include <cstddef>

namespace kernelwatch {

/// DRAM moves two transfers per memory clock (double data rate) across the whole bus.
[[nodiscard]] constexpr double theoretical_peak_bandwidth(int memory_clock_khz,
                                                          int bus_width_bits) {
  return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 *
         (static_cast<double>(bus_width_bits) / 8.0);
}

/// What one launch of a benchmarked kernel does; zero means "not applicable".
struct work_per_launch {
  std::size_t bytes_read = 0;
  std::size_t bytes_written = 0;
  std::size_t elements = 0;
  double flops = 0.0;

  [[nodiscard]] constexpr std::size_t bytes() const { return bytes_read + bytes_written; }
};

/// Counter values of a measurement: `launches` launches that took `gpu_seconds` in total.
struct counter_values {
  double bytes_per_second = 0.0;
  double peak_fraction = 0.0;  // of the device's theoretical DRAM bandwidth
  double elements_per_second = 0.0;
  double flop_per_second = 0.0;
};

[[nodiscard]] counter_values compute_counters(const work_per_launch& work, double launches,
                                              double gpu_seconds,
                                              double peak_bytes_per_second);

}  // namespace kernelwatch
