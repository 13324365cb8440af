#include <kernelwatch/cuda_event.hpp>
#include <kernelwatch/cuda_stream.hpp>
#include <kernelwatch/detail/instance.hpp>
#include <kernelwatch/device_info.hpp>
#include <kernelwatch/l2_flush.hpp>
#include <kernelwatch/measurement.hpp>

namespace kernelwatch {
namespace {

void launch_checked(const launch_function& launch, cudaStream_t stream) {
  launch(stream);
  KW_CUDA_CHECK_LAUNCH();
}

}  // namespace

void measurement::run(const launch_function& launch) {
  // Setup (fills, copies, memsets) may still be running on other streams; the harness's own
  // stream is non-blocking and would not wait for it.
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  cuda_stream stream;
  std::optional<l2_flusher> flusher;
  if (cache_.value_or(current_run_options().cache) == cache_mode::cold) {
    flusher.emplace();
  }

  // Correctness before timing: a fast wrong kernel must never report a time. Once per
  // instance and process: Google Benchmark calls the same instance several times, and a
  // host reference over hundreds of MiB costs more than the timing itself.
  launch_checked(launch, stream.get());
  stream.synchronize();
  const std::string& instance = detail::current_instance();
  if (verify_ && (instance.empty() || !detail::instance_verified(instance))) {
    const check_result result = verify_();
    if (!result.ok) {
      state_.SkipWithError(("wrong result: " + result.message).c_str());
      return;
    }
    detail::mark_instance_verified(instance);
  }
  // Module loading, first-touch page mapping and clock ramp-up stay out of the samples.
  for (int i = 0; i < warmup_launches_; ++i) {
    launch_checked(launch, stream.get());
  }
  stream.synchronize();

  cuda_event start;
  cuda_event stop;
  double gpu_seconds = 0.0;
  for (auto _ : state_) {
    if (flusher) {
      flusher->flush(stream.get());
    }
    start.record(stream.get());
    launch_checked(launch, stream.get());
    stop.record(stream.get());
    stop.synchronize();
    const double seconds = elapsed_seconds(start, stop);
    state_.SetIterationTime(seconds);
    gpu_seconds += seconds;
  }

  // Google Benchmark divides rate counters by the manual time it accumulated, which is
  // gpu_seconds, so the totals per repetition go in as they are.
  const auto launches = static_cast<double>(state_.iterations());
  using benchmark::Counter;
  if (work_.bytes() > 0) {
    state_.counters["bytes_per_second"] =
        Counter(static_cast<double>(work_.bytes()) * launches, Counter::kIsRate);
    const double peak =
        peak_bandwidth_.value_or(current_device_info().peak_bandwidth_bytes_per_second());
    if (peak > 0.0) {
      state_.counters["peak_fraction"] =
          compute_counters(work_, launches, gpu_seconds, peak).peak_fraction;
    }
  }
  if (work_.elements > 0) {
    state_.counters["elements_per_second"] =
        Counter(static_cast<double>(work_.elements) * launches, Counter::kIsRate);
  }
  if (work_.flops > 0.0) {
    state_.counters["flop_per_second"] = Counter(work_.flops * launches, Counter::kIsRate);
  }
  for (const auto& [name, amount] : rate_counters_) {
    state_.counters[name] = Counter(amount * launches, Counter::kIsRate);
  }
  for (const auto& [name, value] : counters_) {
    state_.counters[name] = value;
  }
}

}  // namespace kernelwatch
