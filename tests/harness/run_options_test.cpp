#include <kernelwatch/detail/run_options.hpp>

#include "../support/capture_reporter.hpp"

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <cstdlib>
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
  const kw::detail::run_options options = kw::detail::parse_run_options(args.argc, args.pointers.data());
  EXPECT_EQ(options.cache, kw::cache_mode::cold);
  EXPECT_EQ(options.device, 0);
  EXPECT_FALSE(options.list_only);
}

TEST(ParseRunOptions, TakesOwnFlagsOutAndLeavesGoogleBenchmarkFlags) {
  arguments args({"bench", "--benchmark_filter=copy", "--kernelwatch_cache=hot",
                  "--kernelwatch_device=3", "--benchmark_repetitions=5"});
  const kw::detail::run_options options = kw::detail::parse_run_options(args.argc, args.pointers.data());
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
    EXPECT_TRUE(kw::detail::parse_run_options(args.argc, args.pointers.data()).list_only) << flag;
    EXPECT_EQ(args.argc, 2) << "Google Benchmark must still see " << flag;
  }
  arguments off({"bench", "--benchmark_list_tests=false"});
  EXPECT_FALSE(kw::detail::parse_run_options(off.argc, off.pointers.data()).list_only);
}

// Whether a run only lists must be decided as Google Benchmark decides it (IsTruthyFlagValue,
// 1.7 and 1.8): where the two disagreed, Google Benchmark listed while kernelwatch prepared a
// GPU (exit 4 without one), or ran the benchmarks with no GPU context written.
TEST(ParseRunOptions, ReadsListingAsGoogleBenchmarkDoes) {
  const auto list_only = [](std::vector<std::string> values) {
    values.insert(values.begin(), "bench");
    arguments args(std::move(values));
    return kw::detail::parse_run_options(args.argc, args.pointers.data()).list_only;
  };
  for (const char* flag : {"--benchmark_list_tests=True", "--benchmark_list_tests=TRUE",
                           "--benchmark_list_tests=on", "--benchmark_list_tests=y",
                           "--benchmark_list_tests=t", "--benchmark_list_tests=2"}) {
    EXPECT_TRUE(list_only({flag})) << flag;
  }
  for (const char* flag : {"--benchmark_list_tests=False", "--benchmark_list_tests=NO",
                           "--benchmark_list_tests=off", "--benchmark_list_tests=f",
                           "--benchmark_list_tests=n", "--benchmark_list_tests=0",
                           "--benchmark_list_tests=-", "--benchmark_list_testsx"}) {
    EXPECT_FALSE(list_only({flag})) << flag;
  }
  // The last occurrence wins.
  EXPECT_FALSE(list_only({"--benchmark_list_tests", "--benchmark_list_tests=false"}));
  EXPECT_TRUE(list_only({"--benchmark_list_tests=false", "--benchmark_list_tests"}));
  // The environment variable is the flag's default.
  ASSERT_EQ(setenv("BENCHMARK_LIST_TESTS", "true", 1), 0);
  EXPECT_TRUE(list_only({}));
  EXPECT_FALSE(list_only({"--benchmark_list_tests=false"}));
  ASSERT_EQ(setenv("BENCHMARK_LIST_TESTS", "off", 1), 0);
  EXPECT_FALSE(list_only({}));
  ASSERT_EQ(unsetenv("BENCHMARK_LIST_TESTS"), 0);
  EXPECT_FALSE(list_only({}));
}

TEST(ParseRunOptions, RejectsBadValuesWithOneLineMessages) {
  const auto error_of = [](std::vector<std::string> values) -> std::string {
    arguments args(std::move(values));
    try {
      (void)kw::detail::parse_run_options(args.argc, args.pointers.data());
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
  EXPECT_EQ(error_of({"bench", "--kernelwatch_noise_target=2"}),
            "--kernelwatch_noise_target must be a number from 0 to 1, not '2'");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_max_time=fast"}),
            "--kernelwatch_max_time must be a number above 0, at most 3600, not 'fast'");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_min_samples=2.5"}),
            "--kernelwatch_min_samples must be a whole number from 1 to 1e+06, not '2.5'");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_throttle_threshold="}),
            "--kernelwatch_throttle_threshold must be a number from 0 to 1, not ''");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_inject=0.02"}),
            "--kernelwatch_inject must be REGEX:FRACTION, not '0.02'");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_inject=copy:-1"}),
            "--kernelwatch_inject's FRACTION must be a number from 0 to 10, not '-1'");
  EXPECT_EQ(error_of({"bench", "--kernelwatch_inject=(copy:0.1"}).rfind(
                "--kernelwatch_inject: bad regex '(copy': ", 0),
            0U);
}

TEST(ParseRunOptions, TakesMinTimeOutBecauseTheHarnessSamplesItself) {
  arguments args({"bench", "--benchmark_min_time=0.5", "--benchmark_repetitions=3"});
  const kw::detail::run_options options = kw::detail::parse_run_options(args.argc, args.pointers.data());
  EXPECT_TRUE(options.min_time_dropped);
  EXPECT_EQ(args.remaining(), (std::vector<std::string>{"bench", "--benchmark_repetitions=3"}));
  EXPECT_EQ(std::string(kw::detail::minimal_min_time_flag()).rfind("--benchmark_min_time=1e-9", 0), 0U);
}

// Google Benchmark 1.8 warns once per benchmark about 1.7's spelling ("1e-9") and 1.7 refuses
// 1.8's ("1e-9s"): the flag main adds must be this library's.
TEST(MinimalMinTime, IsSpelledAsThisGoogleBenchmarkWantsIt) {
  benchmark::RegisterBenchmark("min_time_probe", [](benchmark::State& state) {
    for (auto _ : state) {
    }
  });
  arguments args({"bench", kw::detail::minimal_min_time_flag()});
  benchmark::Initialize(&args.argc, args.pointers.data());
  EXPECT_EQ(args.argc, 1) << "Google Benchmark did not take " << args.storage[1];
  ::testing::internal::CaptureStderr();
  const auto runs = kernelwatch::testing::run_benchmarks("^min_time_probe$");
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(said.find("min_time"), std::string::npos) << said;
  ASSERT_EQ(runs.size(), 1U);
}

TEST(ParseRunOptions, SamplingDefaultsAndOverrides) {
  arguments defaults({"bench"});
  const kw::detail::sampling_options sampling =
      kw::detail::parse_run_options(defaults.argc, defaults.pointers.data()).sampling;
  EXPECT_DOUBLE_EQ(sampling.noise_target, 0.005);
  EXPECT_DOUBLE_EQ(sampling.max_time, 0.25);
  EXPECT_EQ(sampling.min_samples, 10);
  EXPECT_DOUBLE_EQ(sampling.throttle_threshold, 0.75);

  arguments args({"bench", "--kernelwatch_noise_target=0.001", "--kernelwatch_max_time=2",
                  "--kernelwatch_min_samples=50", "--kernelwatch_throttle_threshold=0.9",
                  "--kernelwatch_inject=^a:b/x:0.05"});
  const kw::detail::run_options options = kw::detail::parse_run_options(args.argc, args.pointers.data());
  EXPECT_DOUBLE_EQ(options.sampling.noise_target, 0.001);
  EXPECT_DOUBLE_EQ(options.sampling.max_time, 2.0);
  EXPECT_EQ(options.sampling.min_samples, 50);
  EXPECT_DOUBLE_EQ(options.sampling.throttle_threshold, 0.9);
  EXPECT_EQ(options.inject.pattern, "^a:b/x");  // the last colon splits: regexes may hold one
  EXPECT_DOUBLE_EQ(options.inject.fraction, 0.05);
  EXPECT_EQ(args.argc, 1);
}

// A budget of 0 seconds ended every repetition after its first sample, and one sample's
// interval has no width: `noise` read 0, a precision nobody measured. `kernelwatch run` refuses
// --max-time 0 too.
TEST(ParseRunOptions, MaxTimeMustBeAboveZero) {
  for (const char* value : {"0", "0.0", "-0", "-1"}) {
    arguments args({"bench", std::string("--kernelwatch_max_time=") + value});
    try {
      const auto options = kw::detail::parse_run_options(args.argc, args.pointers.data());
      ADD_FAILURE() << "'" << value << "' was taken as " << options.sampling.max_time << " s";
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(std::string(error.what()),
                std::string("--kernelwatch_max_time must be a number above 0, at most 3600, ") +
                    "not '" + value + "'");
    }
  }
  arguments smallest({"bench", "--kernelwatch_max_time=1e-6"});
  EXPECT_DOUBLE_EQ(
      kw::detail::parse_run_options(smallest.argc, smallest.pointers.data()).sampling.max_time,
      1e-6);
}

TEST(ParseRunOptions, BlockingKernelIsOnUnlessSwitchedOff) {
  const auto parse = [](std::vector<std::string> values) {
    arguments args(std::move(values));
    return kw::detail::parse_run_options(args.argc, args.pointers.data()).blocking_kernel;
  };
  EXPECT_TRUE(parse({"bench"}));
  EXPECT_TRUE(parse({"bench", "--kernelwatch_blocking_kernel"}));
  EXPECT_TRUE(parse({"bench", "--kernelwatch_blocking_kernel=true"}));
  EXPECT_TRUE(parse({"bench", "--kernelwatch_blocking_kernel=1"}));
  EXPECT_FALSE(parse({"bench", "--kernelwatch_blocking_kernel=false"}));
  EXPECT_FALSE(parse({"bench", "--kernelwatch_blocking_kernel=no"}));
  arguments bad({"bench", "--kernelwatch_blocking_kernel=maybe"});
  try {
    (void)kw::detail::parse_run_options(bad.argc, bad.pointers.data());
    FAIL() << "'maybe' must be refused";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()),
              "--kernelwatch_blocking_kernel must be true or false, not 'maybe'");
  }
}

TEST(ParseRunOptions, HangTimeoutIsTwoMinutesZeroForNeverAndRefusesNonsense) {
  const auto parse = [](std::vector<std::string> values) {
    arguments args(std::move(values));
    return kw::detail::parse_run_options(args.argc, args.pointers.data()).hang_timeout;
  };
  EXPECT_DOUBLE_EQ(parse({"bench"}), 120.0);
  EXPECT_DOUBLE_EQ(parse({"bench", "--kernelwatch_hang_timeout=2.5"}), 2.5);
  EXPECT_DOUBLE_EQ(parse({"bench", "--kernelwatch_hang_timeout=0"}), 0.0);
  for (const char* value : {"-1", "soon", "", "inf"}) {
    arguments bad({"bench", std::string("--kernelwatch_hang_timeout=") + value});
    try {
      (void)kw::detail::parse_run_options(bad.argc, bad.pointers.data());
      ADD_FAILURE() << "'" << value << "' must be refused";
    } catch (const std::invalid_argument& error) {
      EXPECT_EQ(std::string(error.what()),
                std::string("--kernelwatch_hang_timeout must be a number from 0 to 86400, not '") +
                    value + "'");
    }
  }
  EXPECT_NE(kw::detail::run_options_help().find("--kernelwatch_hang_timeout=S"),
            std::string::npos);
}

TEST(ParseRunOptions, KeepSetUpsIsDeclaredByDefaultAndRefusesOtherValues) {
  using kw::detail::set_up_keeping;
  const auto parse = [](std::vector<std::string> values) {
    arguments args(std::move(values));
    return kw::detail::parse_run_options(args.argc, args.pointers.data()).keep_set_ups;
  };
  EXPECT_EQ(parse({"bench"}), set_up_keeping::declared);
  EXPECT_EQ(parse({"bench", "--kernelwatch_keep_set_ups=declared"}), set_up_keeping::declared);
  EXPECT_EQ(parse({"bench", "--kernelwatch_keep_set_ups=all"}), set_up_keeping::all);
  EXPECT_EQ(parse({"bench", "--kernelwatch_keep_set_ups=running"}), set_up_keeping::running);
  arguments bad({"bench", "--kernelwatch_keep_set_ups=some"});
  try {
    (void)kw::detail::parse_run_options(bad.argc, bad.pointers.data());
    FAIL() << "'some' must be refused";
  } catch (const std::invalid_argument& error) {
    EXPECT_EQ(std::string(error.what()),
              "--kernelwatch_keep_set_ups must be 'declared', 'all' or 'running', not 'some'");
  }
}
