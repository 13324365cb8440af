// The hang watchdog on a GPU: a benchmark whose kernel never finishes, run by the harness's own
// main with --kernelwatch_hang_timeout=2 in a child process, must end that process with
// exit_code_hang and one line naming it, wherever the main thread waits for the kernel.
#include <kernelwatch/detail/main.hpp>
#include <kernelwatch/kernelwatch.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kw = kernelwatch;

namespace {

// Spins until *flag is non-zero: a host-mapped flag that nobody ever sets, so a launch with
// `spin` never finishes.
__global__ void wait_for_flag(const volatile unsigned int* flag, bool spin) {
  if (spin) {
    while (*flag == 0) {
    }
  }
}

// Launch number state.range(0) (0: the first, the correctness launch; 20: inside the adaptive
// sampling, behind the blocking kernel) never finishes; with ->Threads(2) only thread 1's.
void hangs_at_launch(benchmark::State& state) {
  kw::pinned_buffer<unsigned int> flag(1);
  flag[0] = 0;
  const bool this_thread_hangs = state.threads() == 1 || state.thread_index() == 1;
  long long launches = 0;
  kw::measure(state).run([&](cudaStream_t stream) {
    const bool spin = this_thread_hangs && launches++ >= state.range(0);
    wait_for_flag<<<1, 1, 0, stream>>>(flag.data(), spin);
  });
}

// The harness's main in this (child) process, as a benchmark binary runs it.
int run_main(const std::string& filter) {
  std::vector<std::string> arguments{"kernelwatch_harness_tests", "--benchmark_filter=" + filter,
                                     "--kernelwatch_hang_timeout=2"};
  std::vector<char*> argv;
  for (std::string& argument : arguments) {
    argv.push_back(argument.data());
  }
  argv.push_back(nullptr);
  return kw::detail::benchmark_main(static_cast<int>(arguments.size()), argv.data());
}

}  // namespace

KW_GPU_BENCHMARK("watchdog_test/hangs_at_launch", hangs_at_launch)->Arg(0)->Arg(20);
KW_GPU_BENCHMARK("watchdog_test/one_thread_hangs", hangs_at_launch)->Arg(20)->Threads(2);

TEST(WatchdogGpuDeathTest, AKernelThatNeverFinishesEndsTheProcessNamingTheBenchmark) {
  KW_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no inherited CUDA state
  // Blocked in the synchronize after the first launch, before any sample.
  EXPECT_EXIT(run_main("^watchdog_test/hangs_at_launch/0/"),
              ::testing::ExitedWithCode(kw::detail::exit_code_hang),
              "kernelwatch: error: watchdog_test/hangs_at_launch/0 made no progress for 2 s "
              "\\(a kernel that never finishes\\?\\); the process ends\n$");
  // Blocked in a batch's stream synchronize, the sample enqueued behind the blocking kernel.
  EXPECT_EXIT(run_main("^watchdog_test/hangs_at_launch/20/"),
              ::testing::ExitedWithCode(kw::detail::exit_code_hang),
              "kernelwatch: error: watchdog_test/hangs_at_launch/20 made no progress for 2 s");
}

TEST(WatchdogGpuDeathTest, OneHungThreadOfSeveralEndsTheProcess) {
  KW_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Thread 0 finishes and waits at Google Benchmark's barrier for thread 1, which never comes.
  EXPECT_EXIT(run_main("^watchdog_test/one_thread_hangs/20/"),
              ::testing::ExitedWithCode(kw::detail::exit_code_hang),
              "kernelwatch: error: watchdog_test/one_thread_hangs/20 made no progress for 2 s");
}
