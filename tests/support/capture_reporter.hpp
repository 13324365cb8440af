#pragma once
// Runs registered benchmarks in-process and keeps what Google Benchmark reported, so tests can
// assert on errors, times and counters. Bridges the Run fields that differ between Google
// Benchmark 1.7 (error_occurred/error_message) and 1.8 (skipped/skip_message).

#include <kernelwatch/detail/kept_set_ups.hpp>
#include <kernelwatch/detail/sampling_tools.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <utility>
#include <vector>

namespace kernelwatch::testing {

class capture_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      runs_.push_back(run);
    }
  }
  [[nodiscard]] const std::vector<Run>& runs() const { return runs_; }

 private:
  std::vector<Run> runs_;
};

namespace detail {
template <typename R>
auto error_text(const R& run, int) -> decltype(run.skip_message, std::string()) {
  return run.skipped ? run.skip_message : std::string();
}
template <typename R>
auto error_text(const R& run, long) -> decltype(run.error_message, std::string()) {
  return run.error_occurred ? run.error_message : std::string();
}
}  // namespace detail

/// The run's error or skip message; empty when it ran.
inline std::string error_text(const benchmark::BenchmarkReporter::Run& run) {
  return detail::error_text(run, 0);
}

/// Runs the benchmarks whose names match `filter` and returns their runs.
inline std::vector<benchmark::BenchmarkReporter::Run> run_benchmarks(const std::string& filter) {
  capture_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, filter);
  kernelwatch::detail::drop_kept_set_ups();  // as kernelwatch's main does: no set-up outlives its run
  kernelwatch::detail::drop_sampling_tools();
  return reporter.runs();
}

}  // namespace kernelwatch::testing
