#include <kernelwatch/detail/disturbance_monitor.hpp>
#include <kernelwatch/detail/nvml.hpp>
#include <kernelwatch/device_info.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/gpu_test.hpp"

extern char** environ;

namespace kwd = kernelwatch::detail;

TEST(DisturbanceMonitor, IsActiveForItsLifetimeOnly) {
  EXPECT_EQ(kwd::disturbance_monitor::active(), nullptr);
  {
    kwd::disturbance_monitor monitor("GPU-none", std::chrono::milliseconds(5));
    EXPECT_EQ(kwd::disturbance_monitor::active(), &monitor);
  }
  EXPECT_EQ(kwd::disturbance_monitor::active(), nullptr);
}

TEST(DisturbanceMonitor, ReportsAPercentageOrNothingWithoutNvml) {
  const auto gpus = kwd::nvml_gpus();
  std::string measured = "GPU-none";
  if (gpus && !gpus->empty()) {
    measured = gpus->front().uuid;  // the others are watched
  }
  kwd::disturbance_monitor monitor(measured, std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto busiest = monitor.window().other_gpus_max_utilization_percent;
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

TEST(DisturbanceMonitor, SaysNothingOfProcessesOnAGpuNvmlCannotList) {
  // No list (no such GPU, or no NVML): nothing can be said, not "none".
  kwd::disturbance_monitor monitor("GPU-none", std::chrono::milliseconds(5));
  EXPECT_FALSE(monitor.window().other_processes);
}

// A process that comes and goes between two polls of `kernelwatch run` (one a round) is seen
// here: it holds a context on the measured GPU for 400 ms, polled every 20 ms.
TEST(DisturbanceMonitor, SeesAProcessThatComesAndGoesInsideAWindow) {
  KW_REQUIRE_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // this process's context, which NVML lists
  const std::string uuid = kernelwatch::current_device_info().uuid;
  if (!kwd::nvml_compute_pids(uuid)) {
    GTEST_SKIP() << "NVML does not list the processes on " << uuid;
  }
  kwd::disturbance_monitor monitor(uuid, std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!monitor.window().other_processes) {
    GTEST_SKIP() << "NVML numbers processes in another PID namespace than this one's";
  }

  // CTest runs the GPU tests side by side (tools/kw test), so others may come and go too: only
  // the occupant's own entry is looked for.
  monitor.restart_window();
  std::string program = KERNELWATCH_TEST_GPU_OCCUPANT;
  std::string hold = "400";
  char* arguments[] = {program.data(), hold.data(), nullptr};
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, program.c_str(), nullptr, nullptr, arguments, environ), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the occupant failed";
  // (named by its program, or "unknown" where it was gone before its name was read)
  const std::string occupant = "pid " + std::to_string(child) + ": ";
  const auto has_occupant = [&](const std::vector<std::string>& seen) {
    return std::any_of(seen.begin(), seen.end(),
                       [&](const std::string& entry) { return entry.rfind(occupant, 0) == 0; });
  };

  const kwd::disturbance during = monitor.window();  // the occupant is gone by now
  ASSERT_TRUE(during.other_processes);
  EXPECT_TRUE(has_occupant(*during.other_processes)) << "not seen: " << occupant;
  EXPECT_TRUE(has_occupant(during.first_seen)) << "said when first seen";

  monitor.restart_window();
  const kwd::disturbance after = monitor.window();
  ASSERT_TRUE(after.other_processes);
  EXPECT_FALSE(has_occupant(*after.other_processes)) << "a new window forgets it";
  EXPECT_FALSE(has_occupant(after.first_seen));
}
