#pragma once
// What every sample needs whatever the benchmark: a stream, the L2 flusher, the blocking
// kernel, the clock probe and the events. Made once per thread and device, not once per
// repetition: made per repetition (two page-locked allocations and their frees, a buffer twice
// the L2, a stream, the hold kernel's attributes, an event per sample), they were a fixed
// 2.0-2.5 ms of host time in every repetition of every family while the GPU idled, a quarter
// of a coalescing repetition's wall time (H100 GPU-7692141e, c2e9ee4, scripts/gpu/breakdown.sh).

#include <kernelwatch/cuda_event.hpp>
#include <kernelwatch/cuda_stream.hpp>
#include <kernelwatch/detail/blocking_kernel.hpp>
#include <kernelwatch/detail/gpu_clock.hpp>
#include <kernelwatch/detail/l2_flush.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace kernelwatch::detail {

class sampling_tools {
 public:
  sampling_tools();
  sampling_tools(const sampling_tools&) = delete;
  sampling_tools& operator=(const sampling_tools&) = delete;

  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_.get(); }
  [[nodiscard]] blocking_kernel& blocker() noexcept { return blocker_; }
  [[nodiscard]] clock_probe& probe() noexcept { return probe_; }
  /// Made at the first cold benchmark: a warm one needs none.
  [[nodiscard]] l2_flusher& flusher();
  /// At least `count` events.
  [[nodiscard]] std::vector<cuda_event>& events(std::size_t count);

 private:
  cuda_stream stream_;
  blocking_kernel blocker_;
  clock_probe probe_;
  std::optional<l2_flusher> flusher_;
  std::vector<cuda_event> events_;
};

/// This thread's tools for the current device, made at the first call.
[[nodiscard]] sampling_tools& thread_sampling_tools();

/// Frees this thread's tools: after a benchmark's error, which may leave a hold timed out or
/// the stream in a bad state (the next benchmark makes new ones), and in main once the
/// benchmarks have run, while the CUDA runtime can still free them.
void drop_sampling_tools();

}  // namespace kernelwatch::detail
