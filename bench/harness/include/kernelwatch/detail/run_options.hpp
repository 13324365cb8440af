#pragma once
// kernelwatch's own command-line flags. They are taken out of argv before Google Benchmark
// parses it, so both sets of flags can be given to any benchmark binary.

#include <kernelwatch/cache_mode.hpp>

#include <string>
#include <string_view>

namespace kernelwatch::detail {

/// The values a numeric option takes: finite, in [low, high] ((low, high] where `low_excluded`),
/// a whole number where `whole`.
struct number_range {
  double low;
  double high;
  bool whole = false;
  bool low_excluded = false;
};

/// The sampling options' ranges, from the command line or a benchmark's own override
/// (measurement::max_time(), ...). max_time above 0: a budget of 0 ended each repetition after
/// its first sample, whose noise then read 0, a precision that was never measured (kernelwatch
/// run refuses --max-time 0 for the same reason).
inline constexpr number_range noise_target_range{0.0, 1.0};
inline constexpr number_range max_time_range{0.0, 3600.0, false, true};
inline constexpr number_range min_samples_range{1.0, 1e6, true};

/// `value` where `range` holds it; else std::invalid_argument, one line: "<name> must be a
/// number from 0 to 1, not '<given>'".
[[nodiscard]] double check_number(std::string_view name, double value,
                                  const number_range& range, std::string_view given);

/// When a benchmark repetition has sampled enough (docs/measurement.md).
struct sampling_options {
  /// Stop once the 95 % confidence interval of the median is this narrow, relative to it.
  double noise_target = 0.005;
  /// ... or once this many seconds of wall time have gone into sampling one repetition.
  double max_time = 0.25;
  /// Samples taken before the stopping rule is looked at (the time budget still wins).
  int min_samples = 10;
  /// Samples taken while the SM clock ran below this fraction of its maximum are discarded.
  double throttle_threshold = 0.75;
};

/// A deliberate slowdown, for measuring the regression detector (kernelwatch selftest):
/// benchmarks whose instance name ("family/variant/arg values") matches `pattern` get a GPU
/// spin of `fraction` x their own median time inside the timed region. Fraction 0 launches
/// the same, empty, spin: a control with an identical launch structure.
struct injected_slowdown {
  std::string pattern;  // ECMAScript regex searched in the instance name; empty: none
  double fraction = 0.0;
  [[nodiscard]] bool enabled() const { return !pattern.empty(); }
};

/// --kernelwatch_keep_set_ups: declared (set_up_kept objects are kept while other instances
/// run, set_up_once ones only while their own instance runs), all (every object kept), or
/// running (none kept past its instance). `all` is how the harness of 7067794 ran: it made
/// large strided transposes and 64 Mi-element reductions 1.3-3.2 % slower in whole runs than
/// alone (five H100 cards), since the other instances' device buffers stay allocated.
enum class set_up_keeping { declared, all, running };

[[nodiscard]] const char* to_string(set_up_keeping keeping) noexcept;

struct run_options {
  cache_mode cache = cache_mode::cold;
  int device = 0;
  sampling_options sampling;
  injected_slowdown inject;
  /// Hold the stream while each sample is enqueued, so host submission latency stays out of
  /// the timed region (detail/blocking_kernel.hpp); host-bound benchmarks never do.
  bool blocking_kernel = true;
  /// End the process when a benchmark makes no progress for this many seconds: a kernel that
  /// never finishes (detail/watchdog.hpp); 0: never. 120 s: the longest legitimate sample of
  /// the suite is 0.18 s on an H200 (a pageable 1 GiB upload, baselines/nvidia-h200-sm90) and
  /// progress is reported after every batch of samples (the whole suite takes about 460 s), so
  /// it never fires on a real benchmark, and a hang costs the night two minutes instead of the
  /// CI job's timeout.
  double hang_timeout = 120.0;
  /// Which set-ups outlive their instance's repetitions (kernelwatch/set_up_once.hpp).
  set_up_keeping keep_set_ups = set_up_keeping::declared;
  bool list_only = false;  // --benchmark_list_tests: registration only, no GPU needed
  bool help = false;
  bool min_time_dropped = false;  // a --benchmark_min_time was taken out (see below)
};

/// Parses and removes --kernelwatch_* flags from argv; notes (without removing) the Google
/// Benchmark flags that change what kernelwatch must do, and removes --benchmark_min_time,
/// which kernelwatch's main replaces (minimal_min_time_flag). Throws std::invalid_argument with
/// a one-line message for an unknown --kernelwatch_ flag or a bad value.
[[nodiscard]] run_options parse_run_options(int& argc, char** argv);

/// Each repetition is one Google Benchmark iteration inside which the harness samples
/// adaptively, so Google Benchmark must not size iteration counts (that would repeat the whole
/// sampling). Iterations(1) on every benchmark would say so but adds "/iterations:1" to every
/// benchmark's name; the smallest minimum time, given as a flag, leaves the names alone.
[[nodiscard]] const char* minimal_min_time_flag();

/// The options of this process, as the benchmark binary's main set them.
[[nodiscard]] const run_options& current_run_options();
void set_current_run_options(const run_options& options);

[[nodiscard]] const char* to_string(cache_mode mode) noexcept;

/// The help text for kernelwatch's own flags.
[[nodiscard]] std::string run_options_help();

}  // namespace kernelwatch::detail
