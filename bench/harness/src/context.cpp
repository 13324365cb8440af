#include <kernelwatch/detail/context.hpp>
#include <kernelwatch/detail/json_string.hpp>

#include <benchmark/benchmark.h>

#include <charconv>
#include <cmath>
#include <cstdio>

namespace kernelwatch::detail {

std::string format_number(double value) {
  if (!std::isfinite(value)) {
    return "unknown";
  }
  if (value == std::trunc(value) && std::fabs(value) < 0x1p53) {
    return std::to_string(static_cast<long long>(value));  // every digit, no exponent
  }
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof(text), value).ptr);
}

context_entries make_context(const device_info& device, const build_info& build,
                             const run_options& options) {
  const auto count = [](auto value) { return std::to_string(value); };
  context_entries entries{
      {"gpu_name", device.name},
      {"gpu_uuid", device.uuid},
      {"gpu_compute_capability", count(device.compute_capability_major) + "." +
                                     count(device.compute_capability_minor)},
      {"gpu_sm_count", count(device.sm_count)},
      {"gpu_l2_cache_bytes", count(device.l2_cache_bytes)},
      {"gpu_memory_bytes", count(device.memory_bytes)},
      {"gpu_memory_clock_khz", count(device.memory_clock_khz)},
      {"gpu_memory_bus_width_bits", count(device.memory_bus_width_bits)},
      {"gpu_peak_bandwidth_bytes_per_second",
       count(std::llround(device.peak_bandwidth_bytes_per_second()))},
      {"gpu_sm_clock_khz", count(device.sm_clock_khz)},
      {"gpu_ecc", device.ecc_enabled ? "on" : "off"},
      {"gpu_driver_version", device.driver_version.empty() ? "unknown" : device.driver_version},
      {"cuda_driver_api_version", format_cuda_version(device.cuda_driver_api_version)},
      {"cuda_runtime_version", format_cuda_version(device.cuda_runtime_version)},
      {"kernelwatch_git_commit", build.git_commit},
      {"kernelwatch_build_type", build.build_type},
      {"kernelwatch_version", build.version},
      {"kernelwatch_cache_mode", to_string(options.cache)},
      {"kernelwatch_noise_target", format_number(options.sampling.noise_target)},
      {"kernelwatch_max_time", format_number(options.sampling.max_time)},
      {"kernelwatch_min_samples", count(options.sampling.min_samples)},
      {"kernelwatch_throttle_threshold", format_number(options.sampling.throttle_threshold)},
      {"kernelwatch_blocking_kernel", options.blocking_kernel ? "true" : "false"},
      {"kernelwatch_hang_timeout", format_number(options.hang_timeout)},
      {"kernelwatch_keep_set_ups", to_string(options.keep_set_ups)},
  };
  if (options.inject.enabled()) {
    entries.emplace_back("kernelwatch_inject",
                         options.inject.pattern + ":" + format_number(options.inject.fraction));
  }
  return entries;
}

std::string format_gpu_uuid(const unsigned char (&bytes)[16]) {
  // 8-4-4-4-12 hex digits, as nvidia-smi -L prints it
  char text[64];
  std::snprintf(text, sizeof(text),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14],
                bytes[15]);
  return text;
}

std::string format_cuda_version(int encoded) {
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
}

void add_to_benchmark_context(const context_entries& entries) {
  for (const auto& [key, value] : entries) {
    // Google Benchmark writes the value as it is, escaping only quotes, backslashes and
    // \b\f\n\r\t: what else would make its JSON invalid is replaced by U+FFFD.
    std::string written;
    for (const char ch : valid_utf8(value)) {
      const bool escaped = ch == '\b' || ch == '\f' || ch == '\n' || ch == '\r' || ch == '\t';
      if (static_cast<unsigned char>(ch) < 0x20 && !escaped) {
        written += "\xEF\xBF\xBD";
      } else {
        written += ch;
      }
    }
    benchmark::AddCustomContext(key, written);
  }
}

}  // namespace kernelwatch::detail
