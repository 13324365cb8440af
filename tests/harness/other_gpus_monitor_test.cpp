#include <kernelwatch/detail/nvml.hpp>
#include <kernelwatch/detail/other_gpus_monitor.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kwd = kernelwatch::detail;

TEST(OtherGpusMonitor, IsActiveForItsLifetimeOnly) {
  EXPECT_EQ(kwd::other_gpus_monitor::active(), nullptr);
  {
    kwd::other_gpus_monitor monitor("GPU-none", std::chrono::milliseconds(5));
    EXPECT_EQ(kwd::other_gpus_monitor::active(), &monitor);
  }
  EXPECT_EQ(kwd::other_gpus_monitor::active(), nullptr);
}

TEST(OtherGpusMonitor, ReportsAPercentageOrNothingWithoutNvml) {
  const auto gpus = kwd::nvml_gpus();
  std::string measured = "GPU-none";
  if (gpus && !gpus->empty()) {
    measured = gpus->front().uuid;  // the others are watched
  }
  kwd::other_gpus_monitor monitor(measured, std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto busiest = monitor.window_max();
  if (!gpus) {
    EXPECT_FALSE(busiest) << "no NVML here, so nothing can be said";
    return;
  }
  ASSERT_TRUE(busiest || gpus->size() > 1);  // only another GPU's unreadable utilization is silent
  if (gpus->size() == 1) {
    EXPECT_EQ(*busiest, 0.0) << "a lone GPU has no other GPU to be busy";
  } else if (busiest) {
    EXPECT_GE(*busiest, 0.0);
    EXPECT_LE(*busiest, 100.0);
  }
  monitor.restart_window();
}
