#include <kernelwatch/detail/context.hpp>
#include <kernelwatch/detail/json_string.hpp>
#include <kernelwatch/device_info.hpp>

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <map>
#include <sstream>
#include <string>

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

// %g kept 6 significant digits: --kernelwatch_noise_target=0.0012345678 was recorded as
// 0.00123457, and a whole number of 9 digits as 1.23457e+08.
TEST(MakeContext, NumbersReadBackAsTheValuesTheRunUsed) {
  kw::detail::run_options options;
  options.sampling.noise_target = 0.0012345678;
  options.sampling.max_time = 1234.5678901;
  options.sampling.throttle_threshold = 0.1 + 0.2;
  options.hang_timeout = 123456789.0;
  options.inject = {"^copy/", 0.123456789};
  const kw::detail::context_entries entries = kw::detail::make_context(h100(), {}, options);
  const std::map<std::string, std::string> context(entries.begin(), entries.end());
  EXPECT_EQ(context.at("kernelwatch_noise_target"), "0.0012345678");
  EXPECT_EQ(context.at("kernelwatch_max_time"), "1234.5678901");
  EXPECT_EQ(context.at("kernelwatch_throttle_threshold"), "0.30000000000000004");
  EXPECT_EQ(context.at("kernelwatch_hang_timeout"), "123456789");
  EXPECT_EQ(context.at("kernelwatch_inject"), "^copy/:0.123456789");
  EXPECT_EQ(std::stod(context.at("kernelwatch_throttle_threshold")), 0.1 + 0.2);
}

// The context is strings; a number that is not finite is a fact not read, as everywhere else.
TEST(FormatNumber, WritesWholeNumbersExactlyOthersShortestAndNonFiniteAsUnknown) {
  EXPECT_EQ(kw::detail::format_number(0.25), "0.25");
  EXPECT_EQ(kw::detail::format_number(120.0), "120");
  EXPECT_EQ(kw::detail::format_number(1e6), "1000000");
  EXPECT_EQ(kw::detail::format_number(85899345920.0), "85899345920");
  EXPECT_EQ(kw::detail::format_number(-3.0), "-3");
  EXPECT_EQ(kw::detail::format_number(4.8143e12 + 0.5), "4814300000000.5");
  EXPECT_EQ(kw::detail::format_number(1e300), "1e+300");
  EXPECT_EQ(kw::detail::format_number(std::numeric_limits<double>::quiet_NaN()), "unknown");
  EXPECT_EQ(kw::detail::format_number(std::numeric_limits<double>::infinity()), "unknown");
  EXPECT_EQ(kw::detail::format_number(-std::numeric_limits<double>::infinity()), "unknown");
}

TEST(ThisBuild, RecordsCommitAndBuildType) {
  const kw::detail::build_info& build = kw::detail::this_build();
  EXPECT_FALSE(build.git_commit.empty());
  EXPECT_FALSE(build.build_type.empty());
  EXPECT_EQ(build.version, KERNELWATCH_TEST_EXPECTED_VERSION);
}

namespace {

// Google Benchmark's JSON of one empty benchmark, `context_test/<name>`, run once: its context
// is what add_to_benchmark_context added.
std::string json_of_one_run(const std::string& name) {
  benchmark::RegisterBenchmark(("context_test/" + name).c_str(), [](benchmark::State& state) {
    for (auto _ : state) {
    }
  })->Iterations(1);
  std::ostringstream output;
  benchmark::JSONReporter reporter;
  reporter.SetOutputStream(&output);
  reporter.SetErrorStream(&output);
  benchmark::RunSpecifiedBenchmarks(&reporter, "^context_test/" + name + "/");
  return output.str();
}

}  // namespace

TEST(AddToBenchmarkContext, LandsInTheJsonContext) {
  kw::detail::add_to_benchmark_context({{"gpu_name", "probe GPU"}, {"kernelwatch_cache_mode", "cold"}});
  const std::string output = json_of_one_run("probe");

  const nlohmann::json result = nlohmann::json::parse(output);
  EXPECT_EQ(result.at("context").at("gpu_name"), "probe GPU");
  EXPECT_EQ(result.at("context").at("kernelwatch_cache_mode"), "cold");
  ASSERT_EQ(result.at("benchmarks").size(), 1U);
  EXPECT_EQ(result.at("benchmarks")[0].at("run_name"), "context_test/probe/iterations:1");
}

// Invalid UTF-8 in a context value (a GPU or CPU name, a driver string) made Google Benchmark's
// whole result file unreadable: it escapes quotes and \b\f\n\r\t, nothing else.
TEST(AddToBenchmarkContext, WritesValidJsonWhateverTheBytes) {
  kw::detail::add_to_benchmark_context(
      {{"context_test_bytes", "GPU \xC0\xAF name\x01 \xE2\x82\xAC \xED\xA0\x80"}});
  const std::string output = json_of_one_run("bytes");

  const nlohmann::json result = nlohmann::json::parse(output, nullptr, false);
  ASSERT_FALSE(result.is_discarded()) << output;
  EXPECT_EQ(result.at("context").at("context_test_bytes"),
            "GPU \uFFFD\uFFFD name\uFFFD \u20AC \uFFFD\uFFFD\uFFFD");
}

namespace {

const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD

std::string quoted(const std::string& text) { return '"' + text + '"'; }

std::string replacements(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += replacement;
  }
  return text;
}

}  // namespace

// Each maximal ill-formed subpart becomes one U+FFFD (Unicode's practice, and Python's
// decode(errors="replace")), so the JSON line stays readable.
TEST(JsonString, ReplacesInvalidUtf8WithTheReplacementCharacter) {
  // overlong encodings ('/' in 2, 3 and 4 bytes)
  EXPECT_EQ(kw::detail::json_string("\xC0\xAF"), quoted(replacements(2)));
  EXPECT_EQ(kw::detail::json_string("\xE0\x80\xAF"), quoted(replacements(3)));
  EXPECT_EQ(kw::detail::json_string("\xF0\x80\x80\xAF"), quoted(replacements(4)));
  // lone continuation bytes
  EXPECT_EQ(kw::detail::json_string("a\x80" "b"), quoted("a" + replacement + "b"));
  EXPECT_EQ(kw::detail::json_string("\xBF\xBF"), quoted(replacements(2)));
  // truncated sequences: one replacement for the bytes that began a valid one
  EXPECT_EQ(kw::detail::json_string("\xC3"), quoted(replacement));
  EXPECT_EQ(kw::detail::json_string("\xE2\x82"), quoted(replacement));
  EXPECT_EQ(kw::detail::json_string("\xE2\x82" "z"), quoted(replacement + "z"));
  EXPECT_EQ(kw::detail::json_string("\xF0\x9F\x98" "\xC3\xA9"), quoted(replacement + "\xC3\xA9"));
  // surrogates, and beyond U+10FFFF
  EXPECT_EQ(kw::detail::json_string("\xED\xA0\x80"), quoted(replacements(3)));
  EXPECT_EQ(kw::detail::json_string("\xED\xBF\xBF"), quoted(replacements(3)));
  EXPECT_EQ(kw::detail::json_string("\xF4\x90\x80\x80"), quoted(replacements(4)));
  EXPECT_EQ(kw::detail::json_string("\xF5\xFF"), quoted(replacements(2)));
}

TEST(JsonString, KeepsValidMultiByteSequencesAndEscapesControlCharacters) {
  for (const std::string valid : {"\xC3\xA9", "\xE2\x82\xAC", "\xED\x9F\xBF", "\xEF\xBF\xBD",
                                  "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", "\x7F"}) {
    EXPECT_EQ(kw::detail::json_string(valid), quoted(valid));
  }
  EXPECT_EQ(kw::detail::json_string("a\x01\n\"\\"), R"("a\u0001\u000a\"\\")");
  const std::string line =
      kw::detail::json_string("x\xC0\xAF\xE2\x82\xAC\x01\xED\xA0\x80\xF0\x9F\x98\x80");
  const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << line;
  EXPECT_EQ(parsed, "x\uFFFD\uFFFD\u20AC\u0001\uFFFD\uFFFD\uFFFD\U0001F600");
}
