#include <kernelwatch/cuda_event.hpp>
#include <kernelwatch/detail/adaptive_sampler.hpp>
#include <kernelwatch/detail/gpu_clock.hpp>
#include <kernelwatch/detail/nvml.hpp>
#include <kernelwatch/detail/sampling_tools.hpp>
#include <kernelwatch/detail/watchdog.hpp>
#include <kernelwatch/device_info.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kernelwatch::detail {
namespace {

using wall_clock = std::chrono::steady_clock;

// Fewer samples say nothing about their spread; more per batch buy nothing once a batch's
// GPU time dwarfs the synchronize and the probes (about 2 ms does).
constexpr std::size_t fewest_samples = 3;
constexpr std::size_t largest_batch = 512;
constexpr double batch_seconds = 2e-3;
// A GPU slowed down for this many budgets in a row is reported as an error, not measured.
constexpr double throttle_patience = 10.0;

struct batch {
  std::vector<double> seconds;
  clock_probe::reading clock;
};

class sampler {
 public:
  sampler(const std::function<void(cudaStream_t)>& launch, sampling_tools& tools, bool flush,
          bool inject, bool hold)
      : launch_(launch),
        tools_(tools),
        stream_(tools.stream()),
        flusher_(flush ? &tools.flusher() : nullptr),
        blocker_(hold ? &tools.blocker() : nullptr),
        inject_(inject) {
    if (blocker_ != nullptr && inject_) {
      launch_spin(stream_, 0);  // loaded before any hold (blocking_kernel.hpp says why)
    }
  }

  // spin_cycles < 0: no spin kernel at all (the kernel's own time, for the calibration).
  batch run(std::size_t count, long long spin_cycles) {
    std::vector<cuda_event>& events = tools_.events(2 * count);
    clock_probe& probe = tools_.probe();
    probe.record(stream_, true);
    for (std::size_t i = 0; i < count; ++i) {
      if (flusher_ != nullptr) {
        flusher_->flush(stream_);
      }
      if (blocker_ != nullptr) {
        blocker_->hold(stream_);  // released once the sample is enqueued: see blocking_kernel.hpp
      }
      try {
        events[2 * i].record(stream_);
        launch_(stream_);
        if (inject_ && spin_cycles >= 0) {
          launch_spin(stream_, spin_cycles);
        }
        events[2 * i + 1].record(stream_);
      } catch (...) {
        if (blocker_ != nullptr) {
          blocker_->release();
        }
        throw;
      }
      if (blocker_ != nullptr) {
        blocker_->release();
      }
    }
    probe.record(stream_, false);
    KW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    // The hang watchdog's progress: once per batch (about 2 ms of GPU work), a relaxed store.
    process_progress().tick();
    if (blocker_ != nullptr) {
      blocker_->check();
    }
    batch result{{}, probe.read()};
    gpu_seconds_ += result.clock.elapsed_ns * 1e-9;
    ++batches_;
    for (std::size_t i = 0; i < count; ++i) {
      result.seconds.push_back(elapsed_seconds(events[2 * i], events[2 * i + 1]));
    }
    return result;
  }

  [[nodiscard]] double gpu_seconds() const noexcept { return gpu_seconds_; }
  [[nodiscard]] std::size_t batches() const noexcept { return batches_; }

 private:
  const std::function<void(cudaStream_t)>& launch_;
  sampling_tools& tools_;
  cudaStream_t stream_;
  l2_flusher* flusher_;
  blocking_kernel* blocker_;
  bool inject_;
  double gpu_seconds_ = 0.0;
  std::size_t batches_ = 0;
};

// GPU time per sample, probes and flushes included; the events' sum when no SM was stamped.
double seconds_per_sample(const batch& taken) {
  double timed = 0.0;
  for (double seconds : taken.seconds) {
    timed += seconds;
  }
  return std::max({taken.clock.elapsed_ns * 1e-9, timed, 1e-7}) /
         static_cast<double>(taken.seconds.size());
}

// A batch is set aside when its SMs ran well under their maximum clock and NVML blames power
// or heat. A low clock alone is not enough: SMs idle during a host-device copy clock down.
bool slowed_down(const clock_probe::reading& clock, double threshold) {
  const device_info& device = current_device_info();
  const double max_clock_hz = device.sm_clock_khz * 1e3;
  if (clock.sm_clock_hz <= 0.0 || clock.sm_clock_hz >= threshold * max_clock_hz) {
    return false;
  }
  return nvml_clocks_slowed_down(device.uuid).value_or(false);
}

}  // namespace

sampling_outcome sample_adaptively(const std::function<void(cudaStream_t)>& launch,
                                   sampling_tools& tools, bool flush, const sampling_plan& plan) {
  const sampling_options& options = plan.options;
  sampler sample(launch, tools, flush, plan.injected_fraction.has_value(), plan.blocking_kernel);
  const auto started = wall_clock::now();
  const auto budget = std::chrono::duration<double>(options.max_time);
  const auto deadline = started + std::chrono::duration_cast<wall_clock::duration>(budget);
  const auto give_up = started + std::chrono::duration_cast<wall_clock::duration>(
                                     budget * throttle_patience);

  // A first sample sizes the batches. With an injected slowdown, spin-free samples first give
  // the median the spin is a fraction of, and samples with an empty spin the cost of launching
  // it (about 1.5 us on an H200; without subtracting it, "2 %" slowed a 100 us kernel by 3.7 %,
  // seen on GPU-54f59374). Neither is kept. The slowdown cannot be smaller than that launch.
  long long spin_cycles = 0;
  batch first = sample.run(1, plan.injected_fraction ? -1 : 0);
  if (plan.injected_fraction) {
    const std::size_t count = std::max<std::size_t>(fewest_samples, 5);
    const double bare = summarize_samples(sample.run(count, -1).seconds).median;
    batch empty_spin = sample.run(count, 0);
    const double launch_cost = summarize_samples(empty_spin.seconds).median - bare;
    const double clock_hz = empty_spin.clock.sm_clock_hz > 0.0
                                ? empty_spin.clock.sm_clock_hz
                                : current_device_info().sm_clock_khz * 1e3;
    const double spin_seconds = *plan.injected_fraction * bare - std::max(launch_cost, 0.0);
    // Fraction 0 (selftest's control) launches no spin: the control is a plain run.
    spin_cycles = *plan.injected_fraction > 0.0
                      ? std::llround(std::max(spin_seconds, 0.0) * clock_hz)
                      : -1;
    first = sample.run(1, spin_cycles);
  }

  sampling_outcome outcome;
  double clock_sum = 0.0;
  std::size_t clocked = 0;
  const auto keep = [&](const batch& taken) {
    if (slowed_down(taken.clock, options.throttle_threshold)) {
      outcome.throttled += taken.seconds.size();
      return;
    }
    outcome.seconds.insert(outcome.seconds.end(), taken.seconds.begin(), taken.seconds.end());
    if (taken.clock.sm_clock_hz > 0.0) {
      clock_sum += taken.clock.sm_clock_hz * static_cast<double>(taken.seconds.size());
      clocked += taken.seconds.size();
    }
  };
  keep(first);
  double per_sample = seconds_per_sample(first);
  const auto min_samples = static_cast<std::size_t>(std::max(options.min_samples, 1));
  for (;;) {
    const auto now = wall_clock::now();
    const std::size_t kept = outcome.seconds.size();
    if (kept >= fewest_samples) {
      if (kept >= min_samples &&
          summarize_samples(outcome.seconds).relative_width <= options.noise_target) {
        break;
      }
      if (now >= deadline) {
        break;
      }
    } else if (now >= give_up) {
      if (kept > 0) {
        break;  // a few samples between slowdowns: better than none, and counted as such
      }
      throw std::runtime_error(
          "the GPU stayed slowed down by power or heat (SM clock under " +
          std::to_string(static_cast<int>(options.throttle_threshold * 100)) +
          " % of its maximum) for " + std::to_string(outcome.throttled) +
          " samples; nothing measured");
    }
    // About batch_seconds of GPU work per batch; more while the minimum count is not reached,
    // as far as the budget allows; never under the fewest samples that have a spread.
    const double fit = std::max(1.0, std::chrono::duration<double>(deadline - now).count() /
                                         per_sample);
    double count = std::clamp(batch_seconds / per_sample, 1.0, fit);
    if (kept < min_samples) {
      count = std::max(count, std::min(static_cast<double>(min_samples - kept), fit));
    }
    if (kept < fewest_samples) {
      count = std::max(count, static_cast<double>(fewest_samples - kept));
    }
    const batch taken = sample.run(
        std::min(static_cast<std::size_t>(count), largest_batch), spin_cycles);
    per_sample = seconds_per_sample(taken);
    keep(taken);
  }
  outcome.summary = summarize_samples(outcome.seconds);
  outcome.mean_sm_clock_hz = clocked > 0 ? clock_sum / static_cast<double>(clocked) : 0.0;
  outcome.temperature_c = nvml_temperature_c(current_device_info().uuid);
  outcome.batch_gpu_seconds = sample.gpu_seconds();
  outcome.batches = sample.batches();
  return outcome;
}

}  // namespace kernelwatch::detail
