#pragma once
// What the benchmarks ran on: read once from the CUDA runtime (and NVML when present) and
// written into every result's context.

#include <cstddef>
#include <string>

namespace kernelwatch {

struct device_info {
  int ordinal = 0;
  std::string name;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  std::size_t l2_cache_bytes = 0;
  std::size_t memory_bytes = 0;
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int sm_clock_khz = 0;
  bool ecc_enabled = false;
  int cuda_driver_api_version = 0;  // e.g. 13000 for CUDA 13.0
  int cuda_runtime_version = 0;
  std::string driver_version;  // the kernel driver's own version ("580.159.04"); empty without NVML

  /// Theoretical peak DRAM bandwidth in bytes per second (read + write).
  [[nodiscard]] double peak_bandwidth_bytes_per_second() const;
};

/// Queries device `ordinal`. Throws cuda_error when there is no such device.
[[nodiscard]] device_info query_device_info(int ordinal);

/// The current CUDA device, queried once per device and process.
[[nodiscard]] const device_info& current_device_info();

}  // namespace kernelwatch
