#include <kernelwatch/cuda_stream.hpp>
#include <kernelwatch/detail/fingerprint.hpp>
#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/pinned_buffer.hpp>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>

namespace kernelwatch::detail {
namespace {

constexpr const char* unknown = "unknown";

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

template <typename T>
std::string or_unknown(const std::optional<T>& value) {
  if (!value) {
    return unknown;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    return value->empty() ? unknown : *value;
  } else if constexpr (std::is_floating_point_v<T>) {
    return format_number(*value);
  } else {
    return std::to_string(*value);
  }
}

std::optional<int> sockets_from_sysfs() {
  std::set<std::string> packages;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/sys/devices/system/cpu", error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 3 && name.compare(0, 3, "cpu") == 0 &&
        std::isdigit(static_cast<unsigned char>(name[3])) != 0) {
      if (auto id = read_trimmed(entry.path().string() + "/topology/physical_package_id")) {
        packages.insert(*id);
      }
    }
  }
  if (packages.empty()) {
    return std::nullopt;
  }
  return static_cast<int>(packages.size());
}

}  // namespace

cpuinfo_facts parse_cpuinfo(std::string_view text) {
  cpuinfo_facts facts;
  std::set<std::string> physical_ids;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "model name" && !facts.model_name && !value.empty()) {
      facts.model_name = std::string(value);
    } else if (key == "physical id") {
      physical_ids.emplace(value);
    } else if (key == "flags" && !facts.hypervisor) {
      std::istringstream flags{std::string(value)};
      std::string flag;
      facts.hypervisor = false;
      while (flags >> flag) {
        if (flag == "hypervisor") {
          facts.hypervisor = true;
        }
      }
    }
  }
  if (!physical_ids.empty()) {
    facts.sockets = static_cast<int>(physical_ids.size());
  }
  return facts;
}

std::string describe_virtualization(std::optional<bool> hypervisor, std::string_view sys_vendor,
                                    std::string_view product_name) {
  if (!hypervisor) {
    return unknown;
  }
  if (!*hypervisor) {
    return "no";
  }
  std::string what(trim(sys_vendor));
  const std::string_view product = trim(product_name);
  if (!product.empty()) {
    what += (what.empty() ? "" : " ") + std::string(product);
  }
  return what.empty() ? "yes" : "yes (" + what + ")";
}

std::pair<std::string, std::string> join_gpus(std::vector<nvml_gpu> gpus) {
  std::sort(gpus.begin(), gpus.end(),
            [](const nvml_gpu& a, const nvml_gpu& b) { return a.uuid < b.uuid; });
  std::string uuids;
  std::string names;
  for (const nvml_gpu& gpu : gpus) {
    uuids += (uuids.empty() ? "" : ",") + gpu.uuid;
    names += (names.empty() ? "" : ",") + gpu.name;
  }
  return {uuids, names};
}

context_entries make_host_fingerprint(const host_facts& facts) {
  std::optional<int> sockets = facts.cpu.sockets ? facts.cpu.sockets : facts.sockets_from_sysfs;
  context_entries entries{
      {"host_cpu_model", or_unknown(facts.cpu.model_name)},
      {"host_cpu_sockets", or_unknown(sockets)},
      {"host_cpu_cores", or_unknown(facts.logical_cpus)},
      {"host_os_kernel", or_unknown(facts.kernel_release)},
      {"host_virtualized", facts.virtualized},
      {"host_machine_id", or_unknown(facts.machine_id)},
  };
  if (facts.gpus) {
    auto [uuids, names] = join_gpus(*facts.gpus);
    entries.emplace_back("host_gpu_count", std::to_string(facts.gpus->size()));
    entries.emplace_back("host_gpu_uuids", uuids.empty() ? unknown : uuids);
    entries.emplace_back("host_gpu_names", names.empty() ? unknown : names);
  } else {
    entries.emplace_back("host_gpu_count", unknown);
    entries.emplace_back("host_gpu_uuids", unknown);
    entries.emplace_back("host_gpu_names", unknown);
  }
  return entries;
}

context_entries make_gpu_fingerprint(const gpu_facts& facts) {
  const nvml_gpu_facts& nvml = facts.nvml;
  return {
      {"gpu_pci_bus_id", or_unknown(facts.pci_bus_id)},
      {"gpu_numa_node", or_unknown(facts.numa_node)},
      {"gpu_pcie_generation", or_unknown(nvml.pcie_generation)},
      {"gpu_pcie_width", or_unknown(nvml.pcie_width)},
      {"gpu_pcie_max_generation", or_unknown(nvml.pcie_max_generation)},
      {"gpu_pcie_max_width", or_unknown(nvml.pcie_max_width)},
      {"gpu_nvlink_active_links", or_unknown(nvml.nvlink_active_links)},
      {"gpu_application_sm_clock_mhz", or_unknown(nvml.application_sm_clock_mhz)},
      {"gpu_application_memory_clock_mhz", or_unknown(nvml.application_memory_clock_mhz)},
      {"gpu_max_sm_clock_mhz", or_unknown(nvml.max_sm_clock_mhz)},
      {"gpu_max_memory_clock_mhz", or_unknown(nvml.max_memory_clock_mhz)},
      {"gpu_power_limit_w", or_unknown(nvml.power_limit_w)},
      {"gpu_mig_mode", or_unknown(nvml.mig_mode)},
  };
}

std::optional<std::string> read_trimmed(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) {
    return std::nullopt;
  }
  return std::string(trim(text.str()));
}

host_facts read_host_facts() {
  host_facts facts;
  if (const auto cpuinfo = read_trimmed("/proc/cpuinfo")) {
    facts.cpu = parse_cpuinfo(*cpuinfo);
  }
  if (!facts.cpu.sockets) {
    facts.sockets_from_sysfs = sockets_from_sysfs();
  }
  if (const long online = sysconf(_SC_NPROCESSORS_ONLN); online > 0) {
    facts.logical_cpus = online;
  }
  if (utsname name{}; uname(&name) == 0) {
    facts.kernel_release = name.release;
  }
  facts.virtualized =
      describe_virtualization(facts.cpu.hypervisor,
                              read_trimmed("/sys/class/dmi/id/sys_vendor").value_or(""),
                              read_trimmed("/sys/class/dmi/id/product_name").value_or(""));
  facts.machine_id = read_trimmed("/etc/machine-id");
  facts.gpus = nvml_gpus();
  return facts;
}

gpu_facts read_gpu_facts(const device_info& device) {
  gpu_facts facts;
  char bus_id[64] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), device.ordinal) == cudaSuccess) {
    std::string id(bus_id);
    std::transform(id.begin(), id.end(), id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    facts.numa_node = read_trimmed("/sys/bus/pci/devices/" + id + "/numa_node");
    facts.pci_bus_id = id;
  } else {
    (void)cudaGetLastError();  // "unknown" says it; the first benchmark's launch check must not
  }
  // 8 x 32 MiB is about 5 ms at PCIe Gen5 speed: longer than NVML's reads take.
  constexpr std::size_t chunk = std::size_t{32} << 20;
  try {
    const pinned_buffer<unsigned char> host(chunk);
    device_buffer<unsigned char> target(chunk);
    const cuda_stream stream;
    for (int i = 0; i < 8; ++i) {
      KW_CUDA_CHECK(cudaMemcpyAsync(target.data(), host.data(), chunk, cudaMemcpyHostToDevice,
                                    stream.get()));
    }
    facts.nvml = nvml_facts(device.uuid);
    stream.synchronize();
  } catch (const cuda_error&) {
    facts.nvml = nvml_facts(device.uuid);  // the link may read idle; better than nothing
  }
  return facts;
}

}  // namespace kernelwatch::detail
