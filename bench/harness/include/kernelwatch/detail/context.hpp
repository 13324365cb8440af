#pragma once
// The "context" block of a result file: which GPU, driver, runtime and build produced it.
// Keys are documented in docs/results.md; tools rely on them, so renaming one is a breaking change.

#include <kernelwatch/detail/run_options.hpp>
#include <kernelwatch/device_info.hpp>

#include <string>
#include <utility>
#include <vector>

namespace kernelwatch::detail {

struct build_info {
  std::string git_commit;  // of the source tree the binary was built from; "-dirty" if modified
  std::string build_type;
  std::string version;  // kernelwatch's own version
};

/// Build facts of this binary. kernelwatch_add_benchmark() (CMake) writes them at build time
/// from the consuming project's git tree; a binary linked without it reports commit "unknown".
[[nodiscard]] const build_info& this_build();

using context_entries = std::vector<std::pair<std::string, std::string>>;

[[nodiscard]] context_entries make_context(const device_info& device, const build_info& build,
                                           const run_options& options);

/// A number as context text: a whole number with all its digits, another the shortest text
/// that reads back as the same double (%g kept 6 digits), "unknown" for NaN and infinity (a
/// fact not read, as the fingerprint says it; the tools read these keys with float() and take
/// a value that is not a number for none).
[[nodiscard]] std::string format_number(double value);

/// Adds every entry to Google Benchmark's context (benchmark::AddCustomContext), each value
/// made valid for its JSON.
void add_to_benchmark_context(const context_entries& entries);

/// Formats the 16 bytes of a cudaUUID_t the way nvidia-smi does.
[[nodiscard]] std::string format_gpu_uuid(const unsigned char (&bytes)[16]);

/// "13.0" from 13000: the encoding of cudaDriverGetVersion and cudaRuntimeGetVersion.
[[nodiscard]] std::string format_cuda_version(int encoded);

}  // namespace kernelwatch::detail
