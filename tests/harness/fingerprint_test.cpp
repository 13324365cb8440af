#include <kernelwatch/detail/fingerprint.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace kwd = kernelwatch::detail;

namespace {

// Two sockets, two logical CPUs each, as an x86 VM's /proc/cpuinfo prints them (trimmed).
constexpr const char* two_socket_vm = R"(processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Platinum 8480+
physical id	: 0
flags		: fpu vme de pse tsc msr hypervisor lahf_lm

processor	: 1
model name	: Intel(R) Xeon(R) Platinum 8480+
physical id	: 0
flags		: fpu vme de pse tsc msr hypervisor lahf_lm

processor	: 2
model name	: Intel(R) Xeon(R) Platinum 8480+
physical id	: 1
flags		: fpu vme de pse tsc msr hypervisor lahf_lm

processor	: 3
model name	: Intel(R) Xeon(R) Platinum 8480+
physical id	: 1
flags		: fpu vme de pse tsc msr hypervisor lahf_lm
)";

// Bare metal: no hypervisor flag ("hypervisor" only as part of no other flag name).
constexpr const char* bare_metal = R"(processor	: 0
model name	: AMD EPYC 9654 96-Core Processor
physical id	: 0
flags		: fpu vme svm hypervisor_x
)";

// An Arm host (Grace): no model name, no physical id, no flags line.
constexpr const char* arm = R"(processor	: 0
BogoMIPS	: 2000.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32
CPU implementer	: 0x41
CPU part	: 0xd4f
)";

std::map<std::string, std::string> as_map(const kernelwatch::detail::context_entries& entries) {
  std::map<std::string, std::string> map(entries.begin(), entries.end());
  EXPECT_EQ(map.size(), entries.size()) << "duplicate keys";
  return map;
}

}  // namespace

TEST(ParseCpuinfo, ReadsModelSocketsAndHypervisorFlag) {
  const kwd::cpuinfo_facts facts = kwd::parse_cpuinfo(two_socket_vm);
  EXPECT_EQ(facts.model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(facts.sockets, 2);
  EXPECT_EQ(facts.hypervisor, true);
}

TEST(ParseCpuinfo, MatchesTheHypervisorFlagWholeOnly) {
  const kwd::cpuinfo_facts facts = kwd::parse_cpuinfo(bare_metal);
  EXPECT_EQ(facts.model_name, "AMD EPYC 9654 96-Core Processor");
  EXPECT_EQ(facts.sockets, 1);
  EXPECT_EQ(facts.hypervisor, false);
}

TEST(ParseCpuinfo, SaysNothingWhereArmCpuinfoIsSilent) {
  const kwd::cpuinfo_facts facts = kwd::parse_cpuinfo(arm);
  EXPECT_FALSE(facts.model_name);
  EXPECT_FALSE(facts.sockets);
  EXPECT_FALSE(facts.hypervisor);
  EXPECT_FALSE(kwd::parse_cpuinfo("").model_name);
}

TEST(DescribeVirtualization, NamesTheVendorWhenVirtual) {
  EXPECT_EQ(kwd::describe_virtualization(true, "Amazon EC2\n", " p5.48xlarge"),
            "yes (Amazon EC2 p5.48xlarge)");
  EXPECT_EQ(kwd::describe_virtualization(true, "QEMU", ""), "yes (QEMU)");
  EXPECT_EQ(kwd::describe_virtualization(true, "", ""), "yes");
  EXPECT_EQ(kwd::describe_virtualization(false, "Dell Inc.", "PowerEdge XE9680"), "no");
  EXPECT_EQ(kwd::describe_virtualization(std::nullopt, "QEMU", "x"), "unknown");
}

TEST(JoinGpus, SortsByUuidAndKeepsNamesInStep) {
  const auto [uuids, names] =
      kwd::join_gpus({{"GPU-bbbb", "NVIDIA H200"}, {"GPU-aaaa", "NVIDIA H100 80GB HBM3"}});
  EXPECT_EQ(uuids, "GPU-aaaa,GPU-bbbb");
  EXPECT_EQ(names, "NVIDIA H100 80GB HBM3,NVIDIA H200");
}

TEST(MakeHostFingerprint, WritesEveryKeyWithUnknownForWhatWasNotRead) {
  const auto nothing = as_map(kwd::make_host_fingerprint({}));
  for (const char* key : {"host_cpu_model", "host_cpu_sockets", "host_cpu_cores", "host_os_kernel",
                          "host_virtualized", "host_machine_id", "host_gpu_count",
                          "host_gpu_uuids", "host_gpu_names"}) {
    ASSERT_EQ(nothing.count(key), 1U) << key;
    EXPECT_EQ(nothing.at(key), "unknown") << key;
  }
  EXPECT_EQ(nothing.size(), 9U);

  kwd::host_facts facts;
  facts.cpu = kwd::parse_cpuinfo(two_socket_vm);
  facts.logical_cpus = 4;
  facts.kernel_release = "6.8.0-60-generic";
  facts.virtualized = "no";
  facts.machine_id = "0123456789abcdef0123456789abcdef";
  facts.gpus = std::vector<kwd::nvml_gpu>{{"GPU-2", "NVIDIA H200"}, {"GPU-1", "NVIDIA H200"}};
  const auto host = as_map(kwd::make_host_fingerprint(facts));
  EXPECT_EQ(host.at("host_cpu_model"), "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(host.at("host_cpu_sockets"), "2");
  EXPECT_EQ(host.at("host_cpu_cores"), "4");
  EXPECT_EQ(host.at("host_os_kernel"), "6.8.0-60-generic");
  EXPECT_EQ(host.at("host_machine_id"), "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(host.at("host_gpu_count"), "2");
  EXPECT_EQ(host.at("host_gpu_uuids"), "GPU-1,GPU-2");
  EXPECT_EQ(host.at("host_gpu_names"), "NVIDIA H200,NVIDIA H200");
}

TEST(MakeHostFingerprint, TakesSocketsFromSysfsWhenCpuinfoHasNone) {
  kwd::host_facts facts;
  facts.cpu = kwd::parse_cpuinfo(arm);
  facts.sockets_from_sysfs = 1;
  EXPECT_EQ(as_map(kwd::make_host_fingerprint(facts)).at("host_cpu_sockets"), "1");
}

TEST(MakeGpuFingerprint, WritesEveryKeyWithUnknownForWhatWasNotRead) {
  const auto nothing = as_map(kwd::make_gpu_fingerprint({}));
  EXPECT_EQ(nothing.size(), 13U);
  for (const auto& [key, value] : nothing) {
    EXPECT_EQ(value, "unknown") << key;
  }

  kwd::gpu_facts facts;
  facts.pci_bus_id = "0000:19:00.0";
  facts.numa_node = "0";
  facts.nvml.pcie_generation = 5;
  facts.nvml.pcie_width = 16;
  facts.nvml.pcie_max_generation = 5;
  facts.nvml.pcie_max_width = 16;
  facts.nvml.nvlink_active_links = 0;
  facts.nvml.application_sm_clock_mhz = 1980;
  facts.nvml.application_memory_clock_mhz = 3201;
  facts.nvml.max_sm_clock_mhz = 1980;
  facts.nvml.max_memory_clock_mhz = 3201;
  facts.nvml.power_limit_w = 700.0;
  facts.nvml.mig_mode = "disabled";
  const std::map<std::string, std::string> expected = {
      {"gpu_pci_bus_id", "0000:19:00.0"},
      {"gpu_numa_node", "0"},
      {"gpu_pcie_generation", "5"},
      {"gpu_pcie_width", "16"},
      {"gpu_pcie_max_generation", "5"},
      {"gpu_pcie_max_width", "16"},
      {"gpu_nvlink_active_links", "0"},
      {"gpu_application_sm_clock_mhz", "1980"},
      {"gpu_application_memory_clock_mhz", "3201"},
      {"gpu_max_sm_clock_mhz", "1980"},
      {"gpu_max_memory_clock_mhz", "3201"},
      {"gpu_power_limit_w", "700"},
      {"gpu_mig_mode", "disabled"},
  };
  EXPECT_EQ(as_map(kwd::make_gpu_fingerprint(facts)), expected);

  facts.nvml.power_limit_w = 1234.5678;  // %g wrote 1234.57
  EXPECT_EQ(as_map(kwd::make_gpu_fingerprint(facts)).at("gpu_power_limit_w"), "1234.5678");
}

TEST(ReadHostFacts, ReadsThisHostWithoutFailing) {
  // Whatever this machine is, the kernel release and CPU count are always readable on Linux.
  const kwd::host_facts facts = kwd::read_host_facts();
  ASSERT_TRUE(facts.kernel_release);
  EXPECT_FALSE(facts.kernel_release->empty());
  ASSERT_TRUE(facts.logical_cpus);
  EXPECT_GT(*facts.logical_cpus, 0);
  EXPECT_FALSE(kwd::read_trimmed("/nonexistent/kernelwatch"));
}

// A bus id that cannot be read is written as "unknown"; its error stayed the runtime's last
// error, and the first benchmark's launch check threw it as that benchmark's failure.
TEST(ReadGpuFacts, LeavesNoErrorForALaterLaunchCheckToFind) {
  KW_REQUIRE_GPU();
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  kernelwatch::device_info no_such_device = kernelwatch::current_device_info();
  no_such_device.ordinal = 4096;
  const kwd::gpu_facts facts = kwd::read_gpu_facts(no_such_device);
  EXPECT_FALSE(facts.pci_bus_id.has_value());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
