// The named axis (register_gpu_variants): one benchmark per value, named and registered in the
// list's order, each timing the body with its own value. The bodies report their value as the
// skip message, so this runs without a GPU.
#include <kernelwatch/kernelwatch.hpp>

#include "../support/capture_reporter.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kw = kernelwatch;
using kernelwatch::testing::error_text;
using kernelwatch::testing::run_benchmarks;

namespace {

enum class shade { light, dark };

const char* shade_name(shade s) { return s == shade::light ? "light" : "dark"; }

void report(benchmark::State& /*state*/, const std::string& value) {
  throw std::runtime_error(value);
}

void report_shade(benchmark::State& /*state*/, shade s) {
  throw std::runtime_error(std::string("shade ") + shade_name(s));
}

template <typename T>
void report_type(benchmark::State& /*state*/) {
  throw std::runtime_error(std::to_string(sizeof(T)));
}

}  // namespace

// Not sorted: "b" before "a"; the axes depend on the value.
KW_GPU_BENCHMARK_VARIANTS("variants_test/named/{}/float",
                          std::vector<kw::named<std::string>>{{"b", "value b"}, {"a", "value"}},
                          report)
    .apply([](kw::benchmark_handle* handle, const std::string& value) {
      handle->Arg(static_cast<int64_t>(value.size()))->ArgName("n");
    });
KW_GPU_BENCHMARK_VARIANTS("variants_test/enum",
                          kw::named_values(std::vector{shade::dark, shade::light}, shade_name),
                          report_shade)
    .apply([](kw::benchmark_handle* handle) { handle->Arg(1)->Arg(2); });
KW_GPU_BENCHMARK_VARIANTS("variants_test/type",
                          {{"double", report_type<double>}, {"float", report_type<float>}});

// A value named from bytes that are not UTF-8 (a file name, say): "caf\xC3\xA9" is UTF-8,
// "\xFF" and the cut-off "\xE2\x82" are not.
KW_GPU_BENCHMARK_VARIANTS("variant_bytes_test/{}",
                          {{"caf\xC3\xA9\xFF", report_type<char>},
                           {"\xE2\x82/x", report_type<short>}});

TEST(Variants, EachValueIsOneBenchmarkNamedAndRunInTheListsOrder) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& run : run_benchmarks("^variants_test/")) {
    found.emplace_back(run.benchmark_name(), error_text(run));
  }
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"variants_test/named/b/float/n:7/manual_time", "value b"},
      {"variants_test/named/a/float/n:5/manual_time", "value"},
      {"variants_test/enum/dark/1/manual_time", "shade dark"},
      {"variants_test/enum/dark/2/manual_time", "shade dark"},
      {"variants_test/enum/light/1/manual_time", "shade light"},
      {"variants_test/enum/light/2/manual_time", "shade light"},
      {"variants_test/type/double/manual_time", "8"},
      {"variants_test/type/float/manual_time", "4"},
  };
  EXPECT_EQ(found, expected);
}

// Google Benchmark writes names as they are, and one such byte made the result file
// unreadable JSON: each ill-formed sequence is one U+FFFD (as valid_utf8 makes it).
TEST(Variants, NamesAreUtf8WhateverTheBytesTheyWereGiven) {
  std::vector<std::string> found;
  for (const auto& run : run_benchmarks("^variant_bytes_test/")) {
    found.push_back(run.benchmark_name());
  }
  const std::vector<std::string> expected = {"variant_bytes_test/caf\u00E9\uFFFD/manual_time",
                                             "variant_bytes_test/\uFFFD/x/manual_time"};
  EXPECT_EQ(found, expected);
}

TEST(Variants, TheValueGoesWhereTheNameSaysElseAtTheEnd) {
  EXPECT_EQ(kw::variant_name("transpose", "tiled"), "transpose/tiled");
  EXPECT_EQ(kw::variant_name("reduction/sum/{}/float", "cub"), "reduction/sum/cub/float");
}
