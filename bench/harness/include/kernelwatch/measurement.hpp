#pragma once
// Timing one GPU benchmark: verify once, warm up, then sample CUDA-event-timed launches until
// the median is known well enough (docs/measurement.md); the median is the iteration's manual
// time, with counters derived from the declared work and the sampling itself.
//
//   kernelwatch::measure(state)
//       .bytes_read(n * sizeof(float))
//       .bytes_written(n * sizeof(float))
//       .verify([&] { return kernelwatch::compare_exact(expected, out.to_host()); })
//       .run([&](cudaStream_t stream) { my_kernel<<<grid, block, 0, stream>>>(...); });

#include <kernelwatch/cache_mode.hpp>
#include <kernelwatch/detail/counters.hpp>
#include <kernelwatch/verify.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kernelwatch {

/// Enqueues the work to time on the given stream. Work on other streams must be joined back
/// into it (an event recorded there, waited on here) so the timing events enclose it.
using launch_function = std::function<void(cudaStream_t)>;
using verify_function = std::function<check_result()>;

class measurement {
 public:
  explicit measurement(benchmark::State& state) : state_(state) {}

  measurement& bytes_read(std::size_t bytes) { work_.bytes_read = bytes; return *this; }
  measurement& bytes_written(std::size_t bytes) { work_.bytes_written = bytes; return *this; }
  measurement& elements(std::size_t count) { work_.elements = count; return *this; }
  measurement& flops(double count) { work_.flops = count; return *this; }
  /// A custom rate counter: `amount` per launch, reported per second of GPU time (e.g.
  /// "shared_bytes_per_second" for traffic that never reaches DRAM).
  measurement& rate_counter(std::string name, double amount) {
    work_.rates.emplace_back(std::move(name), amount);
    return *this;
  }
  /// A custom plain counter reported as is (registers per thread, occupancy, ...).
  measurement& counter(std::string name, double value) {
    counters_.emplace_back(std::move(name), value);
    return *this;
  }
  /// The bandwidth that peak_fraction is a fraction of: the device's theoretical DRAM peak by
  /// default; 0 for traffic that never touches DRAM at its own speed (PCIe transfers), which
  /// then reports no peak_fraction.
  measurement& peak_bandwidth(double bytes_per_second) {
    peak_bandwidth_ = bytes_per_second;
    return *this;
  }
  /// Overrides the run's --kernelwatch_cache for this benchmark, for kernels whose lesson
  /// needs one mode (a shared-memory kernel that touches no DRAM need not flush).
  measurement& cache(cache_mode mode) { cache_ = mode; return *this; }
  /// Declares that the timed work includes the host's own work, so the host decides the time
  /// as much as the GPU does (a pageable cudaMemcpy copies through a staging buffer on the
  /// host; a pinned one is paced by the host's PCIe root). Its rows carry the counter
  /// host_bound = 1, which compare reads: against another host, its change is reported but does
  /// not fail the run unless the hosts' fingerprints match. The stream is never held behind a
  /// blocking kernel for it (detail/blocking_kernel.hpp): required when the launch makes the
  /// host wait for the GPU, which would deadlock behind the hold. Its sampling stops after
  /// 0.1 s a repetition (or --kernelwatch_max_time, if shorter; max_time() overrides): the
  /// host's spread between repetitions dwarfs what more samples would narrow.
  measurement& host_bound() { host_bound_ = true; return *this; }
  measurement& warmup_launches(int count) { warmup_launches_ = count; return *this; }
  /// Override the run's sampling flags (--kernelwatch_noise_target, _max_time, _min_samples)
  /// for this benchmark: a noisy host-side transfer may deserve a larger budget, say. They
  /// take what the flags take; anything else throws std::invalid_argument in the flag's words,
  /// naming the benchmark, which is then skipped with that error.
  measurement& noise_target(double relative_width);
  measurement& max_time(double seconds);
  measurement& min_samples(int count);
  /// Called after the first launch has completed; a failed check marks the benchmark with
  /// SkipWithError("wrong result: ...") and nothing is timed.
  measurement& verify(verify_function check) { verify_ = std::move(check); return *this; }

  /// Runs the benchmark loop. Throws cuda_error on a CUDA failure (the registration wrapper
  /// turns it into SkipWithError, or stops the run if the CUDA context is lost).
  void run(const launch_function& launch);

 private:
  benchmark::State& state_;
  detail::work_per_launch work_;
  std::optional<cache_mode> cache_;
  std::optional<double> peak_bandwidth_;
  int warmup_launches_ = 2;
  bool host_bound_ = false;
  std::optional<double> noise_target_;
  std::optional<double> max_time_;
  std::optional<int> min_samples_;
  verify_function verify_;
  std::vector<std::pair<std::string, double>> counters_;
};

[[nodiscard]] inline measurement measure(benchmark::State& state) { return measurement(state); }

/// Marks the running benchmark as its family's reference: the one benchmark the report's trends
/// follow for its family, and the variant its figure draws the others against (docs/report.md).
/// Its rows carry the counter reference = 1, so the report reads the reference from the results
/// and no figure restates its name. Called in the body, under a condition where one instance
/// of several is the reference.
inline void mark_reference(benchmark::State& state) { state.counters["reference"] = 1.0; }

}  // namespace kernelwatch
