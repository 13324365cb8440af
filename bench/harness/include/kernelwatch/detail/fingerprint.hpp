#pragma once
// The fingerprint: what a time can depend on beyond the GPU model (the host, the GPU's link,
// clocks and power limit, the host's other GPUs), written into every result's context
// (docs/results.md, "Fingerprint"). A fact that cannot be read is written as "unknown", never
// left out. Reading (read_*) and formatting (make_*) are apart so the formatting is tested on
// canned text.

#include <kernelwatch/detail/context.hpp>
#include <kernelwatch/detail/nvml.hpp>
#include <kernelwatch/device_info.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kernelwatch::detail {

/// What /proc/cpuinfo says; empty where it says nothing (an Arm host has no "model name", a
/// VM may lack "physical id", and only x86 has the "hypervisor" flag).
struct cpuinfo_facts {
  std::optional<std::string> model_name;  // of the first CPU
  std::optional<int> sockets;             // distinct "physical id" values
  std::optional<bool> hypervisor;         // the "hypervisor" flag; empty without a "flags" line
};

[[nodiscard]] cpuinfo_facts parse_cpuinfo(std::string_view text);

/// "yes (<sys_vendor> <product_name>)" (either may be empty), "no", or "unknown".
[[nodiscard]] std::string describe_virtualization(std::optional<bool> hypervisor,
                                                  std::string_view sys_vendor,
                                                  std::string_view product_name);

/// The GPUs sorted by UUID: their UUIDs and their names, each comma-separated, in one order.
[[nodiscard]] std::pair<std::string, std::string> join_gpus(std::vector<nvml_gpu> gpus);

struct host_facts {
  cpuinfo_facts cpu;
  std::optional<int> sockets_from_sysfs;  // distinct physical_package_id, when cpuinfo lacks them
  std::optional<long> logical_cpus;       // online
  std::optional<std::string> kernel_release;
  std::string virtualized = "unknown";
  std::optional<std::string> machine_id;
  std::optional<std::vector<nvml_gpu>> gpus;  // all of the host's, as NVML sees them
};

struct gpu_facts {
  std::optional<std::string> pci_bus_id;  // "0000:19:00.0", lower case as in /sys
  std::optional<std::string> numa_node;   // "-1": the platform gives the slot no NUMA node
  nvml_gpu_facts nvml;
};

[[nodiscard]] context_entries make_host_fingerprint(const host_facts& facts);
[[nodiscard]] context_entries make_gpu_fingerprint(const gpu_facts& facts);

/// The text of a small file (/proc, /sys, /etc), whitespace trimmed; empty when unreadable.
[[nodiscard]] std::optional<std::string> read_trimmed(const std::string& path);

[[nodiscard]] host_facts read_host_facts();

/// Of the current device. Runs a few host-to-device copies while NVML reads the PCIe link: an
/// idle link trains down to a lower generation, and would read differently at every start.
[[nodiscard]] gpu_facts read_gpu_facts(const device_info& device);

}  // namespace kernelwatch::detail
