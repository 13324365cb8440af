#pragma once
// kernelwatch's own command-line flags. They are taken out of argv before Google Benchmark
// parses it, so both sets of flags can be given to any benchmark binary.

#include <string>

namespace kernelwatch {

/// cold: evict L2 before each timed launch (what an application sees);
/// hot: time back-to-back launches whose inputs may still be in L2.
enum class cache_mode { cold, hot };

struct run_options {
  cache_mode cache = cache_mode::cold;
  int device = 0;
  bool list_only = false;  // --benchmark_list_tests: registration only, no GPU needed
  bool help = false;
};

/// Parses and removes --kernelwatch_* flags from argv; notes (without removing) the Google
/// Benchmark flags that change what kernelwatch must do. Throws std::invalid_argument with a
/// one-line message for an unknown --kernelwatch_ flag or a bad value.
[[nodiscard]] run_options parse_run_options(int& argc, char** argv);

/// The options of this process, as the benchmark binary's main set them.
[[nodiscard]] const run_options& current_run_options();
void set_current_run_options(const run_options& options);

[[nodiscard]] const char* to_string(cache_mode mode) noexcept;

/// The help text for kernelwatch's own flags.
[[nodiscard]] std::string run_options_help();

}  // namespace kernelwatch
