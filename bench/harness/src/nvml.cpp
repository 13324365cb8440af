#include <kernelwatch/detail/nvml.hpp>

#include <dlfcn.h>

namespace kernelwatch::detail {
namespace {

// The few NVML entry points used, declared here because the CUDA toolkit does not always ship
// nvml.h. nvmlReturn_t is an int enum in which 0 means success; nvmlDevice_t is a pointer.
using nvml_device = void*;
using nvml_init_fn = int (*)();
using nvml_shutdown_fn = int (*)();
using nvml_driver_version_fn = int (*)(char*, unsigned int);
using nvml_handle_by_uuid_fn = int (*)(const char*, nvml_device*);
using nvml_temperature_fn = int (*)(nvml_device, int, unsigned int*);
using nvml_clock_reasons_fn = int (*)(nvml_device, unsigned long long*);
constexpr int nvml_temperature_gpu = 0;  // NVML_TEMPERATURE_GPU
// nvmlClocksEventReason*: SwPowerCap, HwSlowdown, SwThermalSlowdown, HwThermalSlowdown,
// HwPowerBrakeSlowdown. Left out: GpuIdle, the application clock setting, sync boost.
constexpr unsigned long long nvml_slowdown_reasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

// The library, opened and initialized once per process on first use, shut down at exit.
class nvml_library {
 public:
  nvml_library() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) {
      return;
    }
    auto init = symbol<nvml_init_fn>("nvmlInit_v2");
    shutdown_ = symbol<nvml_shutdown_fn>("nvmlShutdown");
    driver_version_ = symbol<nvml_driver_version_fn>("nvmlSystemGetDriverVersion");
    handle_by_uuid_ = symbol<nvml_handle_by_uuid_fn>("nvmlDeviceGetHandleByUUID");
    temperature_ = symbol<nvml_temperature_fn>("nvmlDeviceGetTemperature");
    // Renamed in driver 535; older drivers only have the "throttle" spelling.
    clock_reasons_ = symbol<nvml_clock_reasons_fn>("nvmlDeviceGetCurrentClocksEventReasons");
    if (clock_reasons_ == nullptr) {
      clock_reasons_ = symbol<nvml_clock_reasons_fn>("nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    initialized_ = init != nullptr && shutdown_ != nullptr && init() == 0;
  }
  ~nvml_library() {
    if (initialized_) {
      shutdown_();
    }
    if (library_ != nullptr) {
      dlclose(library_);
    }
  }
  nvml_library(const nvml_library&) = delete;
  nvml_library& operator=(const nvml_library&) = delete;

  [[nodiscard]] std::string driver_version() const {
    char buffer[96] = {};
    if (initialized_ && driver_version_ != nullptr &&
        driver_version_(buffer, sizeof(buffer)) == 0) {
      return buffer;
    }
    return {};
  }

  [[nodiscard]] std::optional<double> temperature_c(const std::string& uuid) const {
    nvml_device device = handle(uuid);
    unsigned int celsius = 0;
    if (device != nullptr && temperature_ != nullptr &&
        temperature_(device, nvml_temperature_gpu, &celsius) == 0) {
      return static_cast<double>(celsius);
    }
    return std::nullopt;
  }

  [[nodiscard]] std::optional<bool> slowed_down(const std::string& uuid) const {
    nvml_device device = handle(uuid);
    unsigned long long reasons = 0;
    if (device != nullptr && clock_reasons_ != nullptr && clock_reasons_(device, &reasons) == 0) {
      return (reasons & nvml_slowdown_reasons) != 0;
    }
    return std::nullopt;
  }

 private:
  [[nodiscard]] nvml_device handle(const std::string& uuid) const {
    nvml_device device = nullptr;
    if (initialized_ && handle_by_uuid_ != nullptr && handle_by_uuid_(uuid.c_str(), &device) == 0) {
      return device;
    }
    return nullptr;
  }

  template <typename F>
  F symbol(const char* name) const {
    return reinterpret_cast<F>(dlsym(library_, name));
  }

  void* library_ = nullptr;
  bool initialized_ = false;
  nvml_shutdown_fn shutdown_ = nullptr;
  nvml_driver_version_fn driver_version_ = nullptr;
  nvml_handle_by_uuid_fn handle_by_uuid_ = nullptr;
  nvml_temperature_fn temperature_ = nullptr;
  nvml_clock_reasons_fn clock_reasons_ = nullptr;
};

const nvml_library& nvml() {
  static const nvml_library library;
  return library;
}

}  // namespace

std::string nvml_driver_version() { return nvml().driver_version(); }

std::optional<double> nvml_temperature_c(const std::string& gpu_uuid) {
  return nvml().temperature_c(gpu_uuid);
}

std::optional<bool> nvml_clocks_slowed_down(const std::string& gpu_uuid) {
  return nvml().slowed_down(gpu_uuid);
}

}  // namespace kernelwatch::detail
