#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/context.hpp>
#include <kernelwatch/detail/counters.hpp>
#include <kernelwatch/detail/nvml.hpp>
#include <kernelwatch/device_info.hpp>

#include <map>
#include <mutex>

namespace kernelwatch {
namespace {

int attribute(cudaDeviceAttr attr, int ordinal) {
  int value = 0;
  KW_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, ordinal));
  return value;
}

}  // namespace

double device_info::peak_bandwidth_bytes_per_second() const {
  return detail::theoretical_peak_bandwidth(memory_clock_khz, memory_bus_width_bits);
}

device_info query_device_info(int ordinal) {
  cudaDeviceProp properties{};
  KW_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));

  device_info info;
  info.ordinal = ordinal;
  info.name = properties.name;
  unsigned char uuid[16];
  for (int i = 0; i < 16; ++i) {
    uuid[i] = static_cast<unsigned char>(properties.uuid.bytes[i]);
  }
  info.uuid = detail::format_gpu_uuid(uuid);
  info.compute_capability_major = properties.major;
  info.compute_capability_minor = properties.minor;
  info.sm_count = properties.multiProcessorCount;
  info.l2_cache_bytes = static_cast<std::size_t>(properties.l2CacheSize);
  info.memory_bytes = properties.totalGlobalMem;
  // CUDA 13 removed the clock fields from cudaDeviceProp; the attributes remain.
  info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  info.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  info.sm_clock_khz = attribute(cudaDevAttrClockRate, ordinal);
  info.ecc_enabled = attribute(cudaDevAttrEccEnabled, ordinal) != 0;
  KW_CUDA_CHECK(cudaDriverGetVersion(&info.cuda_driver_api_version));
  KW_CUDA_CHECK(cudaRuntimeGetVersion(&info.cuda_runtime_version));
  info.driver_version = detail::nvml_driver_version();
  return info;
}

const device_info& current_device_info() {
  int ordinal = 0;
  KW_CUDA_CHECK(cudaGetDevice(&ordinal));
  // Once per device, not once per process: a benchmark may set another device than the one
  // before it, and its sampling tools (the L2 flush's size, the clock probe's SM count) and
  // peak bandwidth must be that device's. std::map keeps each entry where it is.
  static std::mutex mutex;
  static std::map<int, device_info> by_ordinal;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = by_ordinal.find(ordinal);
  if (found == by_ordinal.end()) {
    found = by_ordinal.emplace(ordinal, query_device_info(ordinal)).first;
  }
  return found->second;
}

}  // namespace kernelwatch
