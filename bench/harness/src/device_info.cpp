#include <kernelwatch/counters.hpp>
#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/nvml.hpp>
#include <kernelwatch/device_info.hpp>

#include <cstdio>

namespace kernelwatch {
namespace {

int attribute(cudaDeviceAttr attr, int ordinal) {
  int value = 0;
  KW_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, ordinal));
  return value;
}

}  // namespace

double device_info::peak_bandwidth_bytes_per_second() const {
  return theoretical_peak_bandwidth(memory_clock_khz, memory_bus_width_bits);
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
  info.uuid = format_gpu_uuid(uuid);
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
  static const device_info info = [] {
    int ordinal = 0;
    KW_CUDA_CHECK(cudaGetDevice(&ordinal));
    return query_device_info(ordinal);
  }();
  return info;
}

}  // namespace kernelwatch
