#include <kernelwatch/detail/context.hpp>
#include <kernelwatch/device_info.hpp>

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

namespace kw = kernelwatch;

namespace {

kw::device_info h100() {
  kw::device_info device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  device.compute_capability_major = 9;
  device.compute_capability_minor = 0;
  device.sm_count = 132;
  device.l2_cache_bytes = 52'428'800;
  device.memory_bytes = 85'520'809'984;
  device.memory_clock_khz = 2'619'000;
  device.memory_bus_width_bits = 5120;
  device.sm_clock_khz = 1'980'000;
  device.ecc_enabled = true;
  device.cuda_driver_api_version = 13000;
  device.cuda_runtime_version = 13000;
  device.driver_version = "580.159.04";
  return device;
}

}  // namespace

TEST(FormatCudaVersion, SplitsMajorAndMinor) {
  EXPECT_EQ(kw::detail::format_cuda_version(13000), "13.0");
  EXPECT_EQ(kw::detail::format_cuda_version(12090), "12.9");
  EXPECT_EQ(kw::detail::format_cuda_version(11080), "11.8");
}

TEST(FormatGpuUuid, PrintsLikeNvidiaSmi) {
  const unsigned char bytes[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                   0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  EXPECT_EQ(kw::detail::format_gpu_uuid(bytes), "GPU-01234567-89ab-cdef-fedc-ba9876543210");
}

TEST(MakeContext, HasEveryDocumentedKeyWithItsValue) {
  kw::detail::run_options options;
  options.cache = kw::cache_mode::hot;
  const kw::detail::build_info build{"0123abc-dirty", "Release", "0.1.0"};
  const kw::detail::context_entries entries = kw::detail::make_context(h100(), build, options);
  const std::map<std::string, std::string> context(entries.begin(), entries.end());
  EXPECT_EQ(context.size(), entries.size()) << "duplicate keys";
  const std::map<std::string, std::string> expected = {
      {"gpu_name", "NVIDIA H100 80GB HBM3"},
      {"gpu_uuid", "GPU-01234567-89ab-cdef-0123-456789abcdef"},
      {"gpu_compute_capability", "9.0"},
      {"gpu_sm_count", "132"},
      {"gpu_l2_cache_bytes", "52428800"},
      {"gpu_memory_bytes", "85520809984"},
      {"gpu_memory_clock_khz", "2619000"},
      {"gpu_memory_bus_width_bits", "5120"},
      {"gpu_peak_bandwidth_bytes_per_second", "3352320000000"},
      {"gpu_sm_clock_khz", "1980000"},
      {"gpu_ecc", "on"},
      {"gpu_driver_version", "580.159.04"},
      {"cuda_driver_api_version", "13.0"},
      {"cuda_runtime_version", "13.0"},
      {"kernelwatch_git_commit", "0123abc-dirty"},
      {"kernelwatch_build_type", "Release"},
      {"kernelwatch_version", "0.1.0"},
      {"kernelwatch_cache_mode", "hot"},
      {"kernelwatch_noise_target", "0.005"},
      {"kernelwatch_max_time", "0.25"},
      {"kernelwatch_min_samples", "10"},
      {"kernelwatch_throttle_threshold", "0.75"},
      {"kernelwatch_blocking_kernel", "true"},
      {"kernelwatch_hang_timeout", "120"},
      {"kernelwatch_keep_set_ups", "declared"},
  };
  EXPECT_EQ(context, expected);
}

TEST(MakeContext, RecordsAnInjectedSlowdownSoNobodyMistakesTheRunForAReal) {
  kw::detail::run_options options;
  options.inject = {"^transpose/", 0.02};
  const kw::detail::context_entries entries = kw::detail::make_context(h100(), {}, options);
  const std::map<std::string, std::string> context(entries.begin(), entries.end());
  EXPECT_EQ(context.at("kernelwatch_inject"), "^transpose/:0.02");
  EXPECT_EQ(kw::detail::make_context(h100(), {}, {}).size(), entries.size() - 1);
  options.keep_set_ups = kw::detail::set_up_keeping::running;
  const kw::detail::context_entries kept = kw::detail::make_context(h100(), {}, options);
  const std::map<std::string, std::string> kept_context(kept.begin(), kept.end());
  EXPECT_EQ(kept_context.at("kernelwatch_keep_set_ups"), "running");
}

TEST(MakeContext, UnknownDriverVersionIsSaidNotLeftEmpty) {
  kw::device_info device = h100();
  device.driver_version.clear();
  const kw::detail::context_entries entries = kw::detail::make_context(device, {}, {});
  const std::map<std::string, std::string> context(entries.begin(), entries.end());
  EXPECT_EQ(context.at("gpu_driver_version"), "unknown");
}

TEST(ThisBuild, RecordsCommitAndBuildType) {
  const kw::detail::build_info& build = kw::detail::this_build();
  EXPECT_FALSE(build.git_commit.empty());
  EXPECT_FALSE(build.build_type.empty());
  EXPECT_EQ(build.version, KERNELWATCH_TEST_EXPECTED_VERSION);
}

TEST(AddToBenchmarkContext, LandsInTheJsonContext) {
  kw::detail::add_to_benchmark_context({{"gpu_name", "probe GPU"}, {"kernelwatch_cache_mode", "cold"}});
  benchmark::RegisterBenchmark("context_test/probe", [](benchmark::State& state) {
    for (auto _ : state) {
    }
  })->Iterations(1);
  std::ostringstream output;
  benchmark::JSONReporter reporter;
  reporter.SetOutputStream(&output);
  reporter.SetErrorStream(&output);
  benchmark::RunSpecifiedBenchmarks(&reporter, "^context_test/probe/");

  const nlohmann::json result = nlohmann::json::parse(output.str());
  EXPECT_EQ(result.at("context").at("gpu_name"), "probe GPU");
  EXPECT_EQ(result.at("context").at("kernelwatch_cache_mode"), "cold");
  ASSERT_EQ(result.at("benchmarks").size(), 1U);
  EXPECT_EQ(result.at("benchmarks")[0].at("run_name"), "context_test/probe/iterations:1");
}
