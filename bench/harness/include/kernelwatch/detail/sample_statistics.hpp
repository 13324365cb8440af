#pragma once
// The statistics behind adaptive sampling, free of CUDA so that they are unit-tested on
// machines without a GPU.

#include <cstddef>
#include <utility>
#include <vector>

namespace kernelwatch::detail {

/// 1-based ranks (j, k) of the order statistics that bound a distribution-free confidence
/// interval of the median of n samples: the binomial(n, 1/2) quantiles, by the normal
/// approximation with z (1.96 for 95 %). Clamped to [1, n], so small n gives (1, n).
[[nodiscard]] std::pair<std::size_t, std::size_t> median_interval_ranks(std::size_t n,
                                                                        double z = 1.96);

struct sample_summary {
  std::size_t count = 0;
  double median = 0.0;
  double lower = 0.0;  // the median's confidence interval
  double upper = 0.0;
  double relative_width = 0.0;  // (upper - lower) / median; what the noise target bounds
  double cv = 0.0;              // standard deviation / mean of the samples
};

/// Summarizes positive samples (at least one); the order of `samples` does not matter.
[[nodiscard]] sample_summary summarize_samples(std::vector<double> samples, double z = 1.96);

}  // namespace kernelwatch::detail
