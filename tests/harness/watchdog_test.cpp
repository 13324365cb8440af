// The hang watchdog's logic, without a GPU: the firing decision as a pure function, the
// watchdog's thread on a fake clock, and the real exit path in a child process.
#include <kernelwatch/detail/main.hpp>
#include <kernelwatch/detail/watchdog.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

namespace kwd = kernelwatch::detail;
using namespace std::chrono_literals;

namespace {

const kwd::progress_clock::time_point start{std::chrono::hours(1000)};

// A clock the test moves by hand.
class fake_clock {
 public:
  kwd::progress_clock::time_point now() const { return start + offset_.load(); }
  void advance(kwd::progress_clock::duration by) { offset_.store(offset_.load() + by); }
  kwd::watchdog::clock_function function() {
    return [this] { return now(); };
  }

 private:
  std::atomic<kwd::progress_clock::duration> offset_{kwd::progress_clock::duration::zero()};
};

// Records the first call of on_hang.
struct hang_record {
  std::promise<std::pair<std::string, double>> called;
  std::atomic<int> calls{0};
  kwd::watchdog::hang_function function() {
    return [this](const std::string& name, double seconds) {
      if (calls.fetch_add(1) == 0) {
        called.set_value({name, seconds});
      }
    };
  }
};

}  // namespace

TEST(HangDecision, FiresOnlyWhileABenchmarkRunsWithoutProgressForTheTimeout) {
  const kwd::progress_reading running{1, start};
  EXPECT_FALSE(kwd::hung(running, start + 119s, 120s));
  EXPECT_TRUE(kwd::hung(running, start + 120s, 120s));
  EXPECT_TRUE(kwd::hung(running, start + 1h, 120s));
  const kwd::progress_reading between_benchmarks{0, start};
  EXPECT_FALSE(kwd::hung(between_benchmarks, start + 1h, 120s));
  const kwd::progress_reading threads{3, start};
  EXPECT_TRUE(kwd::hung(threads, start + 2s, 2s));
  // A tick the watchdog reads as being in its future (another core's clock): no hang.
  EXPECT_FALSE(kwd::hung({1, start + 5s}, start, 2s));
}

TEST(BenchmarkProgress, CountsThreadsAndKeepsTheLatestTickOfAnyOfThem) {
  kwd::benchmark_progress progress;
  EXPECT_EQ(progress.read().running, 0);
  progress.enter("family/variant/1", start);
  progress.enter("family/variant/1", start + 1s);  // a second thread of ->Threads(2)
  EXPECT_EQ(progress.read().running, 2);
  EXPECT_EQ(progress.read().last, start + 1s);
  progress.tick(start + 7s);  // either thread's progress counts
  EXPECT_EQ(progress.read().last, start + 7s);
  progress.leave();
  EXPECT_EQ(progress.read().running, 1);
  EXPECT_EQ(progress.name(), "family/variant/1");
  progress.leave();
  EXPECT_FALSE(kwd::hung(progress.read(), start + 1h, 1s));
}

TEST(BenchmarkProgress, EnteringABenchmarkIsProgressItself) {
  kwd::benchmark_progress progress;
  progress.enter("first", start);
  progress.leave();
  progress.enter("second", start + 300s);  // long after the first one's last progress
  EXPECT_FALSE(kwd::hung(progress.read(), start + 301s, 120s));
  EXPECT_EQ(progress.name(), "second");
}

TEST(HangMessage, NamesTheBenchmarkAndTheTimeInOneLine) {
  EXPECT_EQ(kwd::hang_message("matmul/tiled/float/4096", 120.0),
            "kernelwatch: error: matmul/tiled/float/4096 made no progress for 120 s (a kernel "
            "that never finishes?); the process ends");
  EXPECT_EQ(kwd::hang_message("x", 0.5).find('\n'), std::string::npos);
}

TEST(Watchdog, FiresOnceNamingTheBenchmarkWhenTheClockPassesTheTimeout) {
  kwd::benchmark_progress progress;
  fake_clock clock;
  hang_record record;
  auto called = record.called.get_future();
  progress.enter("stuck/kernel/8", clock.now());
  kwd::watchdog watch(progress, 0.05, record.function(), clock.function());
  clock.advance(40ms);
  EXPECT_EQ(called.wait_for(100ms), std::future_status::timeout) << "fired before the timeout";
  clock.advance(20ms);
  ASSERT_EQ(called.wait_for(10s), std::future_status::ready);
  const auto [name, seconds] = called.get();
  EXPECT_EQ(name, "stuck/kernel/8");
  EXPECT_EQ(seconds, 0.05);
  clock.advance(1h);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(record.calls.load(), 1);
  progress.leave();
}

TEST(Watchdog, NeverFiresWhileProgressKeepsComing) {
  kwd::benchmark_progress progress;
  fake_clock clock;
  hang_record record;
  progress.enter("busy/kernel", clock.now());
  {
    kwd::watchdog watch(progress, 0.05, record.function(), clock.function());
    for (int i = 0; i < 40; ++i) {  // 40 x 30 ms of fake time: 24 timeouts, progress each step
      clock.advance(30ms);
      progress.tick(clock.now());
      std::this_thread::sleep_for(2ms);
    }
  }
  EXPECT_EQ(record.calls.load(), 0);
  progress.leave();
}

TEST(Watchdog, NeverFiresBetweenBenchmarks) {
  kwd::benchmark_progress progress;
  fake_clock clock;
  hang_record record;
  progress.enter("done", clock.now());
  progress.leave();
  kwd::watchdog watch(progress, 0.01, record.function(), clock.function());
  clock.advance(1h);  // Google Benchmark's own work between benchmarks, however long
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(record.calls.load(), 0);
}

TEST(Watchdog, StopsAtOnceWhenDestroyed) {
  kwd::benchmark_progress progress;
  const auto before = std::chrono::steady_clock::now();
  { kwd::watchdog watch(progress, 3600.0, [](const std::string&, double) {}); }
  EXPECT_LT(std::chrono::steady_clock::now() - before, 900ms) << "waited out its period";
}

TEST(WatchdogDeathTest, EndsTheProcessWithTheHangExitCodeAndOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        kwd::benchmark_progress progress;
        progress.enter("cpu/never_returns/3");
        const kwd::watchdog watch(progress, 0.2);  // the real clock and end_process_on_hang
        std::this_thread::sleep_for(60s);          // the main thread blocked, as in a synchronize
      },
      ::testing::ExitedWithCode(kwd::exit_code_hang),
      "^kernelwatch: error: cpu/never_returns/3 made no progress for 0.2 s \\(a kernel that "
      "never finishes\\?\\); the process ends\n$");
}
