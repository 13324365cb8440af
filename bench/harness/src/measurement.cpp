#include <kernelwatch/detail/adaptive_sampler.hpp>
#include <kernelwatch/detail/copy_ceiling.hpp>
#include <kernelwatch/detail/disturbance_monitor.hpp>
#include <kernelwatch/detail/instance.hpp>
#include <kernelwatch/detail/kernel_record.hpp>
#include <kernelwatch/detail/run_options.hpp>
#include <kernelwatch/detail/sampling_tools.hpp>
#include <kernelwatch/detail/timeline.hpp>
#include <kernelwatch/detail/watchdog.hpp>
#include <kernelwatch/device_info.hpp>
#include <kernelwatch/measurement.hpp>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <string>

namespace kernelwatch {
namespace {

void launch_checked(const launch_function& launch, cudaStream_t stream) {
  launch(stream);
  KW_CUDA_CHECK_LAUNCH();
}

// Sampling per repetition of a host-bound benchmark, at most (unless it sets max_time). Its
// repetitions' medians spread far more than one repetition's samples can narrow: on an H100
// host (GPU-18b292b3, 2026-11-27) pageable copies' medians spread 4-20 % between repetitions
// (robust CV) while each repetition's 95 % interval was 0.6-8 % wide at the run's 0.25 s, and
// across hosts they move 30-98 %. A quarter of a second of more samples bought nothing there;
// these benchmarks were 83 s of the suite's 120 s of samples.
constexpr double host_bound_max_time = 0.1;

std::optional<double> injected_fraction(const detail::injected_slowdown& inject,
                                        const std::string& instance) {
  if (inject.enabled() && std::regex_search(instance, std::regex(inject.pattern))) {
    return inject.fraction;
  }
  return std::nullopt;
}

// An override is checked as its flag is (run_options.hpp), when it is set: a max_time of 0 took
// one sample and reported a noise nobody measured, a NaN or infinite one made the deadline
// an undefined conversion.
double checked_override(const char* setter, double value, const detail::number_range& range) {
  const std::string& instance = detail::current_instance();
  char given[32];
  std::snprintf(given, sizeof(given), "%g", value);
  return detail::check_number((instance.empty() ? "" : "benchmark " + instance + ": ") + setter,
                              value, range, given);
}

}  // namespace

measurement& measurement::noise_target(double relative_width) {
  noise_target_ = checked_override("noise_target()", relative_width, detail::noise_target_range);
  return *this;
}

measurement& measurement::max_time(double seconds) {
  max_time_ = checked_override("max_time()", seconds, detail::max_time_range);
  return *this;
}

measurement& measurement::min_samples(int count) {
  min_samples_ =
      static_cast<int>(checked_override("min_samples()", count, detail::min_samples_range));
  return *this;
}

void measurement::run(const launch_function& launch) {
  const std::string& instance = detail::current_instance();
  detail::timeline_mark("measure_start", instance);  // the benchmark's set-up is behind us
  // Setup (fills, copies, memsets) may still be running on other streams; the harness's own
  // stream is non-blocking and would not wait for it.
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  detail::sampling_tools& tools = detail::thread_sampling_tools();  // sampling_tools.hpp
  const cudaStream_t stream = tools.stream();
  const bool cold = cache_.value_or(detail::current_run_options().cache) == cache_mode::cold;

  detail::benchmark_progress& progress = detail::process_progress();  // watchdog.hpp

  // Correctness before timing: a fast wrong kernel must never report a time. Once per
  // instance and process: Google Benchmark calls the same instance several times, and a
  // host reference over hundreds of MiB costs more than the timing itself. Module loading,
  // first-touch page mapping and clock ramp-up stay out of the samples: the first repetition
  // warms up with warmup_launches_; a later one finds them done and launches once, which
  // matters for the host-bound copies, whose launch is up to 0.1 s (the check's launch and two
  // warm-ups were 14 s of the transfers' 90 s on an H100, GPU-fbb49afb).
  const bool first = instance.empty() || !detail::instance_prepared(instance);
  if (first) {
    launch_checked(launch, stream);
    KW_CUDA_CHECK(cudaStreamSynchronize(stream));
    progress.tick();
    if (verify_) {
      const check_result result = verify_();
      if (!result.ok) {
        state_.SkipWithError(("wrong result: " + result.message).c_str());
        return;
      }
      progress.tick();  // a host reference may take seconds
    }
  }
  detail::timeline_mark("verified", instance);
  const int warmups = first ? warmup_launches_ : std::min(warmup_launches_, 1);
  for (int i = 0; i < warmups; ++i) {
    launch_checked(launch, stream);
  }
  KW_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress.tick();
  if (!instance.empty()) {
    detail::mark_instance_prepared(instance);
  }
  detail::record_kernels(launch, instance);  // untimed; only when asked (kernel_record.hpp)
  detail::timeline_mark("warmed", instance);

  const detail::run_options& options = detail::current_run_options();
  detail::sampling_plan plan{options.sampling, injected_fraction(options.inject, instance),
                             options.blocking_kernel && !host_bound_};
  plan.options.noise_target = noise_target_.value_or(plan.options.noise_target);
  plan.options.max_time = max_time_.value_or(
      host_bound_ ? std::min(plan.options.max_time, host_bound_max_time) : plan.options.max_time);
  plan.options.min_samples = min_samples_.value_or(plan.options.min_samples);
  const auto checked = [&](cudaStream_t on) { launch_checked(launch, on); };

  // One Google Benchmark iteration per repetition unless the registration asks for more;
  // each is a whole adaptive sampling whose median is the iteration's time.
  double gpu_seconds = 0.0;
  double samples = 0.0;
  double throttled = 0.0;
  double noise = 0.0;
  double cv = 0.0;
  double clock_hz = 0.0;
  double sampled_seconds = 0.0;  // the kept samples' own GPU time, and that of their batches
  double batch_gpu_seconds = 0.0;
  double batches = 0.0;
  std::optional<double> temperature;
  detail::disturbance_monitor* const monitor = detail::disturbance_monitor::active();
  if (monitor != nullptr) {
    monitor->restart_window();
  }
  for (auto _ : state_) {
    const detail::sampling_outcome outcome =
        detail::sample_adaptively(checked, tools, cold, plan);
    state_.SetIterationTime(outcome.summary.median);
    progress.tick();
    gpu_seconds += outcome.summary.median;
    samples += static_cast<double>(outcome.seconds.size());
    throttled += static_cast<double>(outcome.throttled);
    noise = std::max(noise, outcome.summary.relative_width);
    cv = std::max(cv, outcome.summary.cv);
    clock_hz = outcome.mean_sm_clock_hz;
    temperature = outcome.temperature_c;
    for (const double seconds : outcome.seconds) {
      sampled_seconds += seconds;
    }
    batch_gpu_seconds += outcome.batch_gpu_seconds;
    batches += static_cast<double>(outcome.batches);
  }
  detail::timeline_mark("sampled", instance,
                        {{"samples", samples},
                         {"sample_s", sampled_seconds},
                         {"batch_gpu_s", batch_gpu_seconds},
                         {"batches", batches},
                         {"median_s", gpu_seconds}});

  const auto launches = static_cast<double>(state_.iterations());
  // How the median was arrived at: what compare's noise floor and selftest read.
  state_.counters["samples"] = samples;
  state_.counters["samples_throttled"] = throttled;
  state_.counters["noise"] = noise;
  state_.counters["sample_cv"] = cv;
  if (clock_hz > 0.0) {
    state_.counters["sm_clock_mhz"] = clock_hz * 1e-6;
  }
  if (temperature) {
    state_.counters["gpu_temperature_c"] = *temperature;
  }
  if (monitor != nullptr) {
    const detail::disturbance seen = monitor->window();
    if (seen.other_gpus_max_utilization_percent) {
      state_.counters["other_gpus_max_utilization_percent"] =
          *seen.other_gpus_max_utilization_percent;
    }
    if (seen.other_processes) {
      state_.counters["other_processes_on_gpu"] =
          static_cast<double>(seen.other_processes->size());
    }
    // `run` reads this line to name the process in its result (runner/occupants.py,
    // HARNESS_LINE; a test there reads this format): keep its shape.
    for (const std::string& other : seen.first_seen) {
      std::fprintf(stderr,
                   "kernelwatch: warning: another process computes on this GPU (%s) during %s: "
                   "it shares the GPU's time with the samples, which may be slowed\n",
                   other.c_str(), instance.c_str());
    }
  }
  if (host_bound_) {
    state_.counters["host_bound"] = 1.0;
  }
  // Rates as plain counters, already divided by gpu_seconds (the manual time Google Benchmark
  // accumulated): one tested function computes every rate the result holds.
  const detail::bandwidth_ceilings ceilings{
      peak_bandwidth_.value_or(current_device_info().peak_bandwidth_bytes_per_second()),
      detail::current_copy_ceiling()};
  const auto rates = detail::compute_counters(work_, launches, gpu_seconds, ceilings);
  for (const auto& [name, value] : rates) {
    state_.counters[name] = value;
  }
  for (const auto& [name, value] : counters_) {
    state_.counters[name] = value;
  }
}

}  // namespace kernelwatch
