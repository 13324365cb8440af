#include <kernelwatch/detail/nvml.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>

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
using nvml_count_fn = int (*)(unsigned int*);
using nvml_handle_by_index_fn = int (*)(unsigned int, nvml_device*);
using nvml_text_fn = int (*)(nvml_device, char*, unsigned int);  // UUID, name
using nvml_uint_fn = int (*)(nvml_device, unsigned int*);        // PCIe link, power limit
using nvml_clock_fn = int (*)(nvml_device, int, unsigned int*);  // by nvmlClockType_t
using nvml_nvlink_state_fn = int (*)(nvml_device, unsigned int, int*);
using nvml_mig_mode_fn = int (*)(nvml_device, unsigned int*, unsigned int*);
struct nvml_utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
using nvml_utilization_fn = int (*)(nvml_device, nvml_utilization*);
struct nvml_process_info {  // nvmlProcessInfo_t (nvmlProcessInfo_v2_t), of the _v3 query
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
using nvml_processes_fn = int (*)(nvml_device, unsigned int*, nvml_process_info*);
constexpr int nvml_success = 0;
constexpr int nvml_error_not_supported = 3;
constexpr int nvml_error_insufficient_size = 7;
constexpr int nvml_temperature_gpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int nvml_clock_sm = 1;         // NVML_CLOCK_SM
constexpr int nvml_clock_memory = 2;     // NVML_CLOCK_MEM
constexpr unsigned int nvml_nvlink_max_links = 18;  // NVML_NVLINK_MAX_LINKS (Hopper: 18)
constexpr unsigned int nvml_text_size = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE, ..._NAME_V2_...
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
    count_ = symbol<nvml_count_fn>("nvmlDeviceGetCount_v2");
    handle_by_index_ = symbol<nvml_handle_by_index_fn>("nvmlDeviceGetHandleByIndex_v2");
    uuid_ = symbol<nvml_text_fn>("nvmlDeviceGetUUID");
    name_ = symbol<nvml_text_fn>("nvmlDeviceGetName");
    pcie_generation_ = symbol<nvml_uint_fn>("nvmlDeviceGetCurrPcieLinkGeneration");
    pcie_width_ = symbol<nvml_uint_fn>("nvmlDeviceGetCurrPcieLinkWidth");
    pcie_max_generation_ = symbol<nvml_uint_fn>("nvmlDeviceGetMaxPcieLinkGeneration");
    pcie_max_width_ = symbol<nvml_uint_fn>("nvmlDeviceGetMaxPcieLinkWidth");
    power_limit_ = symbol<nvml_uint_fn>("nvmlDeviceGetEnforcedPowerLimit");
    application_clock_ = symbol<nvml_clock_fn>("nvmlDeviceGetApplicationsClock");
    max_clock_ = symbol<nvml_clock_fn>("nvmlDeviceGetMaxClockInfo");
    nvlink_state_ = symbol<nvml_nvlink_state_fn>("nvmlDeviceGetNvLinkState");
    mig_mode_ = symbol<nvml_mig_mode_fn>("nvmlDeviceGetMigMode");
    utilization_ = symbol<nvml_utilization_fn>("nvmlDeviceGetUtilizationRates");
    compute_processes_ = symbol<nvml_processes_fn>("nvmlDeviceGetComputeRunningProcesses_v3");
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

  [[nodiscard]] std::optional<std::vector<nvml_gpu>> gpus() const {
    unsigned int count = 0;
    if (!initialized_ || count_ == nullptr || handle_by_index_ == nullptr ||
        count_(&count) != nvml_success) {
      return std::nullopt;
    }
    std::vector<nvml_gpu> result;
    for (unsigned int i = 0; i < count; ++i) {
      nvml_device device = nullptr;
      if (handle_by_index_(i, &device) != nvml_success) {
        continue;  // a GPU NVML lists but cannot open (lost, or not ours): no UUID to give
      }
      result.push_back({text(uuid_, device).value_or("unknown"),
                        text(name_, device).value_or("unknown")});
    }
    return result;
  }

  [[nodiscard]] nvml_gpu_facts facts(const std::string& uuid) const {
    nvml_gpu_facts facts;
    nvml_device device = handle(uuid);
    if (device == nullptr) {
      return facts;
    }
    facts.pcie_generation = number(pcie_generation_, device);
    facts.pcie_width = number(pcie_width_, device);
    facts.pcie_max_generation = number(pcie_max_generation_, device);
    facts.pcie_max_width = number(pcie_max_width_, device);
    facts.application_sm_clock_mhz = clock(application_clock_, device, nvml_clock_sm);
    facts.application_memory_clock_mhz = clock(application_clock_, device, nvml_clock_memory);
    facts.max_sm_clock_mhz = clock(max_clock_, device, nvml_clock_sm);
    facts.max_memory_clock_mhz = clock(max_clock_, device, nvml_clock_memory);
    if (const auto milliwatts = number(power_limit_, device)) {
      facts.power_limit_w = *milliwatts / 1000.0;
    }
    if (nvlink_state_ != nullptr) {
      // Links a GPU does not have answer with an error; only "active" ones count.
      unsigned int active = 0;
      for (unsigned int link = 0; link < nvml_nvlink_max_links; ++link) {
        int state = 0;
        if (nvlink_state_(device, link, &state) == nvml_success && state != 0) {
          ++active;
        }
      }
      facts.nvlink_active_links = active;
    }
    if (mig_mode_ != nullptr) {
      unsigned int current = 0;
      unsigned int pending = 0;
      const int status = mig_mode_(device, &current, &pending);
      if (status == nvml_success) {
        facts.mig_mode = current != 0 ? "enabled" : "disabled";
      } else if (status == nvml_error_not_supported) {
        facts.mig_mode = "unsupported";
      }
    }
    return facts;
  }

  [[nodiscard]] std::optional<unsigned int> utilization_percent(const std::string& uuid) const {
    nvml_device device = handle(uuid);
    nvml_utilization rates{};
    if (device != nullptr && utilization_ != nullptr &&
        utilization_(device, &rates) == nvml_success) {
      return rates.gpu;
    }
    return std::nullopt;
  }

  [[nodiscard]] std::optional<std::vector<unsigned int>> compute_pids(
      const std::string& uuid) const {
    nvml_device device = handle(uuid);
    if (device == nullptr || compute_processes_ == nullptr) {
      return std::nullopt;
    }
    // Asked again, larger, while the list grows between asking for its size and reading it.
    std::vector<nvml_process_info> found(8);
    for (int attempt = 0; attempt < 4; ++attempt) {
      auto count = static_cast<unsigned int>(found.size());
      const int status = compute_processes_(device, &count, found.data());
      if (status == nvml_success) {
        std::vector<unsigned int> pids;
        for (unsigned int i = 0; i < count && i < found.size(); ++i) {
          pids.push_back(found[i].pid);
        }
        return pids;
      }
      if (status != nvml_error_insufficient_size) {
        return std::nullopt;
      }
      found.resize(std::max<std::size_t>(count, found.size()) * 2);
    }
    return std::nullopt;
  }

 private:
  static std::optional<std::string> text(nvml_text_fn query, nvml_device device) {
    char buffer[nvml_text_size] = {};
    if (query != nullptr && query(device, buffer, sizeof(buffer)) == nvml_success) {
      return std::string(buffer);
    }
    return std::nullopt;
  }

  static std::optional<unsigned int> number(nvml_uint_fn query, nvml_device device) {
    unsigned int value = 0;
    if (query != nullptr && query(device, &value) == nvml_success) {
      return value;
    }
    return std::nullopt;
  }

  static std::optional<unsigned int> clock(nvml_clock_fn query, nvml_device device, int type) {
    unsigned int mhz = 0;
    if (query != nullptr && query(device, type, &mhz) == nvml_success) {
      return mhz;
    }
    return std::nullopt;
  }

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
  nvml_count_fn count_ = nullptr;
  nvml_handle_by_index_fn handle_by_index_ = nullptr;
  nvml_text_fn uuid_ = nullptr;
  nvml_text_fn name_ = nullptr;
  nvml_uint_fn pcie_generation_ = nullptr;
  nvml_uint_fn pcie_width_ = nullptr;
  nvml_uint_fn pcie_max_generation_ = nullptr;
  nvml_uint_fn pcie_max_width_ = nullptr;
  nvml_uint_fn power_limit_ = nullptr;
  nvml_clock_fn application_clock_ = nullptr;
  nvml_clock_fn max_clock_ = nullptr;
  nvml_nvlink_state_fn nvlink_state_ = nullptr;
  nvml_mig_mode_fn mig_mode_ = nullptr;
  nvml_utilization_fn utilization_ = nullptr;
  nvml_processes_fn compute_processes_ = nullptr;
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

std::optional<std::vector<nvml_gpu>> nvml_gpus() { return nvml().gpus(); }

nvml_gpu_facts nvml_facts(const std::string& gpu_uuid) { return nvml().facts(gpu_uuid); }

std::optional<unsigned int> nvml_utilization_percent(const std::string& gpu_uuid) {
  return nvml().utilization_percent(gpu_uuid);
}

std::optional<std::vector<unsigned int>> nvml_compute_pids(const std::string& gpu_uuid) {
  return nvml().compute_pids(gpu_uuid);
}

}  // namespace kernelwatch::detail
