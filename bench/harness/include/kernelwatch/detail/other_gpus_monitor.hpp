#pragma once
// Whether another GPU of the host was busy while a benchmark ran: a background thread polls
// NVML's utilization of every GPU but the measured one. Another GPU's work shares the host's
// CPUs, memory and PCIe switches; the issue-12 host measured +1-2 us per short kernel with both
// of its GPUs running at once. The value is per benchmark row (counter
// other_gpus_max_utilization_percent): Google Benchmark writes the context before any benchmark
// runs, so a value known only at the end cannot go there.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kernelwatch::detail {

class other_gpus_monitor {
 public:
  /// Starts polling every GPU NVML lists except `measured_uuid`. Without NVML it polls
  /// nothing and window_max() has no answer; with no other GPU the answer is 0.
  explicit other_gpus_monitor(const std::string& measured_uuid,
                              std::chrono::milliseconds period = std::chrono::milliseconds(100));
  /// Stops and joins the thread.
  ~other_gpus_monitor();
  other_gpus_monitor(const other_gpus_monitor&) = delete;
  other_gpus_monitor& operator=(const other_gpus_monitor&) = delete;

  /// Forgets what was seen so far: a new window begins.
  void restart_window();
  /// The highest utilization (percent) of any other GPU since the window began, a poll made
  /// now included (so a window shorter than the period still has a sample).
  [[nodiscard]] std::optional<double> window_max();

  /// The monitor the benchmark main started, or nullptr (tests, listing).
  [[nodiscard]] static other_gpus_monitor* active() noexcept;

 private:
  void poll();

  std::vector<std::string> others_;
  bool readable_ = false;  // NVML answered for the list of GPUs
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<double> max_;
  std::thread thread_;
};

}  // namespace kernelwatch::detail
