#pragma once
// NVML is optional: loaded at run time when the driver ships it, so the harness builds and
// links without it and a missing library costs only the fields it would have filled.

#include <optional>
#include <string>
#include <vector>

namespace kernelwatch::detail {

/// The kernel driver's version ("580.159.04"), or an empty string without NVML.
[[nodiscard]] std::string nvml_driver_version();

/// The GPU's core temperature in degrees Celsius, found by its UUID ("GPU-..."); nothing
/// without NVML.
[[nodiscard]] std::optional<double> nvml_temperature_c(const std::string& gpu_uuid);

/// Whether NVML reports the GPU's clocks held down by power or heat right now (a software
/// power cap, thermal or hardware slowdown, power brake); nothing without NVML.
[[nodiscard]] std::optional<bool> nvml_clocks_slowed_down(const std::string& gpu_uuid);

/// A GPU as NVML lists it.
struct nvml_gpu {
  std::string uuid;
  std::string name;
};

/// Every GPU NVML sees, in NVML's order. NVML ignores CUDA_VISIBLE_DEVICES, so this is the
/// host's set of GPUs (as far as a container lets NVML see them); nothing without NVML.
[[nodiscard]] std::optional<std::vector<nvml_gpu>> nvml_gpus();

/// What a time can depend on besides the GPU model, per GPU; each field is empty where NVML
/// (or the driver, or this GPU) cannot say.
struct nvml_gpu_facts {
  std::optional<unsigned int> pcie_generation;  // the link's current state
  std::optional<unsigned int> pcie_width;
  std::optional<unsigned int> pcie_max_generation;  // what the GPU and its slot can train to
  std::optional<unsigned int> pcie_max_width;
  std::optional<unsigned int> nvlink_active_links;  // 0 where NVLink is absent or unsupported
  std::optional<unsigned int> application_sm_clock_mhz;
  std::optional<unsigned int> application_memory_clock_mhz;
  std::optional<unsigned int> max_sm_clock_mhz;
  std::optional<unsigned int> max_memory_clock_mhz;
  std::optional<double> power_limit_w;  // enforced
  std::optional<std::string> mig_mode;  // "enabled", "disabled" or "unsupported"
};

[[nodiscard]] nvml_gpu_facts nvml_facts(const std::string& gpu_uuid);

/// The percentage of NVML's last sample period in which a kernel ran on the GPU.
[[nodiscard]] std::optional<unsigned int> nvml_utilization_percent(const std::string& gpu_uuid);

/// The ids of the processes with a compute context on the GPU, as NVML numbers them (the
/// driver's PID namespace, which need not be this process's); nothing without NVML.
[[nodiscard]] std::optional<std::vector<unsigned int>> nvml_compute_pids(
    const std::string& gpu_uuid);

}  // namespace kernelwatch::detail
