#include <kernelwatch/counters.hpp>

namespace kernelwatch {

counter_values compute_counters(const work_per_launch& work, double launches,
                                double gpu_seconds, double peak_bytes_per_second) {
  counter_values values;
  if (gpu_seconds <= 0.0 || launches <= 0.0) {
    return values;
  }
  const double per_second = launches / gpu_seconds;
  values.bytes_per_second = static_cast<double>(work.bytes()) * per_second;
  values.elements_per_second = static_cast<double>(work.elements) * per_second;
  values.flop_per_second = work.flops * per_second;
  if (peak_bytes_per_second > 0.0) {
    values.peak_fraction = values.bytes_per_second / peak_bytes_per_second;
  }
  return values;
}

}  // namespace kernelwatch
