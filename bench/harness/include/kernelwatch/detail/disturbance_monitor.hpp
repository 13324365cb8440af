#pragma once
// What else ran while a benchmark ran: a background thread polls NVML every 100 ms.
// - The utilization of every GPU but the measured one. Another GPU's work shares the host's
//   CPUs, memory and PCIe switches; the issue-12 host measured +1-2 us per short kernel with
//   both of its GPUs running at once.
// - The processes computing on the measured GPU besides this one. Their kernels share its time
//   with the samples: on GPU-fe9a1c25 (H200) another process's matrix multiplies made the matmul
//   benchmarks 68-115 % slower. `kernelwatch run` also asks nvidia-smi between its rounds, but a
//   process that comes and goes inside one round is seen only here.
// The values are per benchmark row (counters other_gpus_max_utilization_percent,
// other_processes_on_gpu): Google Benchmark writes the context before any benchmark runs, so a
// value known only at the end cannot go there.

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kernelwatch::detail {

/// What one window saw.
struct disturbance {
  /// The highest utilization (percent) of any other GPU; 0 with no other GPU, nothing without
  /// NVML.
  std::optional<double> other_gpus_max_utilization_percent;
  /// The other processes computing on the measured GPU ("pid 2603: python3"); nothing where NVML
  /// cannot tell: without NVML, or where its list never held this process (NVML numbers
  /// processes in the driver's PID namespace, which need not be this process's).
  std::optional<std::vector<std::string>> other_processes;
  /// Those of other_processes no earlier window saw.
  std::vector<std::string> first_seen;
};

class disturbance_monitor {
 public:
  /// Starts polling. Without NVML it polls nothing and every window says nothing.
  explicit disturbance_monitor(const std::string& measured_uuid,
                               std::chrono::milliseconds period = std::chrono::milliseconds(100));
  /// Stops and joins the thread.
  ~disturbance_monitor();
  disturbance_monitor(const disturbance_monitor&) = delete;
  disturbance_monitor& operator=(const disturbance_monitor&) = delete;

  /// Forgets what was seen so far: a new window begins.
  void restart_window();
  /// What was seen since the window began, a poll made now included (so a window shorter than
  /// the period still has a sample).
  [[nodiscard]] disturbance window();

  /// The monitor the benchmark main started, or nullptr (tests, listing).
  [[nodiscard]] static disturbance_monitor* active() noexcept;

 private:
  void poll();

  std::string measured_;
  std::vector<std::string> others_;  // the other GPUs
  bool readable_ = false;            // NVML answered for the list of GPUs
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<double> max_;
  bool processes_known_ = false;  // a poll of this window listed this process
  std::set<unsigned int> window_pids_;  // the other processes of this window
  std::map<unsigned int, std::string> named_;  // every other process seen: its name
  std::set<unsigned int> said_;  // those a window has returned
  std::thread thread_;
};

}  // namespace kernelwatch::detail
