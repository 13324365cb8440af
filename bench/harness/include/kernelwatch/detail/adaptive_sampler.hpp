#pragma once
// Adaptive sampling: time one launch per sample, in batches between two SM-clock probes, until
// the median's confidence interval is narrow enough or the time budget is spent; batches run
// while the GPU was slowed down by power or heat are set aside.

#include <kernelwatch/detail/run_options.hpp>
#include <kernelwatch/detail/sample_statistics.hpp>
#include <kernelwatch/detail/sampling_tools.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace kernelwatch::detail {

struct sampling_plan {
  sampling_options options;
  std::optional<double> injected_fraction;  // set: add a spin of this fraction of the median
  bool blocking_kernel = false;  // hold the stream while each sample is enqueued
};

struct sampling_outcome {
  std::vector<double> seconds;  // the kept samples
  std::size_t throttled = 0;    // samples set aside: taken while the GPU was slowed down
  double mean_sm_clock_hz = 0.0;  // over the kept samples; 0 when the probe saw no SM
  std::optional<double> temperature_c;  // at the end (NVML)
  // Every batch run, set-aside ones and the first too: GPU time between the batch's clock
  // stamps (samples with their flushes and holds), for the wall-time breakdown (timeline.hpp)
  double batch_gpu_seconds = 0.0;
  std::size_t batches = 0;
  sample_summary summary;
};

/// Samples `launch` (one launch, already checked for launch errors) on the tools' stream; with
/// `flush`, the tools' flusher evicts L2 before every sample, outside the timed region; with
/// plan.blocking_kernel, their blocking_kernel holds the stream from after the flush until the
/// sample's stop event is enqueued.
[[nodiscard]] sampling_outcome sample_adaptively(const std::function<void(cudaStream_t)>& launch,
                                                 sampling_tools& tools, bool flush,
                                                 const sampling_plan& plan);

}  // namespace kernelwatch::detail
