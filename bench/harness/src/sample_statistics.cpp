#include <kernelwatch/detail/sample_statistics.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace kernelwatch::detail {

std::pair<std::size_t, std::size_t> median_interval_ranks(std::size_t n, double z) {
  if (n == 0) {
    throw std::invalid_argument("median_interval_ranks: no samples");
  }
  const double half_n = static_cast<double>(n) / 2.0;
  const double spread = z * std::sqrt(static_cast<double>(n)) / 2.0;
  const auto lower = static_cast<long long>(std::floor(half_n - spread));
  const auto upper = static_cast<long long>(std::ceil(half_n + 1.0 + spread));
  const auto last = static_cast<long long>(n);
  return {static_cast<std::size_t>(std::clamp(lower, 1LL, last)),
          static_cast<std::size_t>(std::clamp(upper, 1LL, last))};
}

sample_summary summarize_samples(std::vector<double> samples, double z) {
  if (samples.empty()) {
    throw std::invalid_argument("summarize_samples: no samples");
  }
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  sample_summary summary;
  summary.count = n;
  summary.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  const auto [j, k] = median_interval_ranks(n, z);
  summary.lower = samples[j - 1];
  summary.upper = samples[k - 1];
  summary.relative_width =
      summary.median > 0.0 ? (summary.upper - summary.lower) / summary.median : 0.0;
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  if (n > 1 && mean > 0.0) {
    double squares = 0.0;
    for (double sample : samples) {
      squares += (sample - mean) * (sample - mean);
    }
    summary.cv = std::sqrt(squares / static_cast<double>(n - 1)) / mean;
  }
  return summary;
}

}  // namespace kernelwatch::detail
