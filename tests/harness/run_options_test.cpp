#include <kernelwatch/run_options.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace kw = kernelwatch;

namespace {

// argv as a benchmark binary receives it, with storage that outlives the parse.
struct arguments {
  explicit arguments(std::vector<std::string> values) : storage(std::move(values)) {
    for (auto& value : storage) {
      pointers.push_back(value.data());
    }
    pointers.push_back(nullptr);
    argc = static_cast<int>(storage.size());
  }
  [[nodiscard]] std::vector<std::string> remaining() const {
    return {pointers.begin(), pointers.begin() + argc};
  }
  std::vector<std::string> storage;
  std::vector<char*> pointers;
  int argc = 0;
};

}  // namespace

TEST(ParseRunOptions, DefaultsAreColdCacheOnDeviceZero) {
  arguments args({"bench"});
  const kw::run_options options = kw::parse_run_options(args.argc, args.pointers.data());
  EXPECT_EQ(options.cache, kw::cache_mode::cold);
  EXPECT_EQ(options.device, 0);
  EXPECT_FALSE(options.list_only);
}

TEST(ParseRunOptions, TakesOwnFlagsOutAndLeavesGoogleBenchmarkFlags) {
  arguments args({"bench", "--benchmark_filter=copy", "--kernelwatch_cache=hot",
                  "--kernelwatch_device=3", "--benchmark_repetitions=5"});
  const kw::run_options options = kw::parse_run_options(args.argc, args.pointers.data());
  EXPECT_EQ(options.cache, kw::cache_mode::hot);
  EXPECT_EQ(options.device, 3);
  EXPECT_EQ(args.remaining(), (std::vector<std::string>{"bench", "--benchmark_filter=copy",
                                                        "--benchmark_repetitions=5"}));
  EXPECT_EQ(args.pointers[static_cast<std::size_t>(args.argc)], nullptr);
}

TEST(ParseRunOptions, NoticesListingInEverySpelling) {
  for (const char* flag : {"--benchmark_list_tests", "--benchmark_list_tests=true",
                           "--benchmark_list_tests=1", "--benchmark_list_tests=yes"}) {
    arguments args({"bench", flag});
    EXPECT_TRUE(kw::parse_run_options(args.argc, args.pointers.data()).list_only) << flag;
    EXPECT_EQ(args.argc, 2) << "Google Benchmark must still see " << flag;
  }
  arguments off({"bench", "--benchmark_list_tests=false"});
  EXPECT_FALSE(kw::parse_run_options(off.argc, off.pointers.data()).list_only);
}

TEST(ParseRunOptions, RejectsBadValuesWithOneLineMessages) {
  const auto error_of = [](std::vector<std::string> values) -> std::string {
    arguments args(std::move(values));
    try {
      (void)kw::parse_run_options(args.argc, args.pointers.data());
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of({"bench", "--kernelwatch_cache=warm"}),
            "--kernelwatch_cache must be 'cold' or 'hot', not 'warm'");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_device=x"}),
            "--kernelwatch_device: not a device ordinal: 'x'");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_device"}),
            "--kernelwatch_device needs a device ordinal");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_speed=11"}), "unknown flag '--kernelwatch_speed=11'");
}
