#pragma once
// The hang watchdog. A kernel that never finishes (an endless loop, blocks waiting on each
// other, a wait on a flag nobody sets) blocks the host in a CUDA synchronize for ever: without a
// watchdog the process waits until CI's job timeout kills it hours later, and nothing says which
// benchmark hung. So every benchmark thread reports progress (entering a benchmark, each
// completed batch of samples, each iteration: one relaxed atomic store of a steady_clock tick,
// no lock), and a thread of the watchdog looks every so often: when a benchmark has run for the
// hang timeout with no progress, it prints one line naming it and ends the process with
// exit_code_hang. It is a thread of its own, so it fires wherever the benchmark is blocked
// (a stream or event synchronize, behind the blocking kernel, a Google Benchmark barrier).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace kernelwatch::detail {

using progress_clock = std::chrono::steady_clock;

/// What the watchdog reads of the running benchmarks.
struct progress_reading {
  int running = 0;                  // benchmark threads inside a benchmark now
  progress_clock::time_point last;  // the latest progress any of them reported
};

/// The firing decision: a benchmark is running and nothing progressed for `timeout` or longer.
[[nodiscard]] bool hung(const progress_reading& seen, progress_clock::time_point now,
                        progress_clock::duration timeout) noexcept;

/// Progress of the benchmarks running in a process, reported by every benchmark thread (with
/// ->Threads(n), any thread's progress counts: a thread that hangs stops the others at Google
/// Benchmark's barrier, so the run as a whole stops progressing).
class benchmark_progress {
 public:
  /// A benchmark thread starts instance `name` (which counts as progress).
  void enter(const std::string& name, progress_clock::time_point now = progress_clock::now());
  /// ... and is done with it.
  void leave() noexcept;
  /// Something completed (a batch of samples, an iteration).
  void tick(progress_clock::time_point now = progress_clock::now()) noexcept {
    last_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  }
  [[nodiscard]] progress_reading read() const noexcept;
  /// The instance entered last: the one the hang message names.
  [[nodiscard]] std::string name() const;

 private:
  std::atomic<int> running_{0};
  std::atomic<progress_clock::rep> last_{0};
  mutable std::mutex mutex_;  // for name_ only, taken once per benchmark, never per sample
  std::string name_;
};

/// This process's progress: entered by registration.cpp around every GPU benchmark, ticked by
/// the measurement, watched by the watchdog benchmark_main starts.
[[nodiscard]] benchmark_progress& process_progress() noexcept;

/// enter() for the lifetime of the scope, then leave().
class progress_scope {
 public:
  progress_scope(benchmark_progress& progress, const std::string& name) : progress_(progress) {
    progress_.enter(name);
  }
  ~progress_scope() { progress_.leave(); }
  progress_scope(const progress_scope&) = delete;
  progress_scope& operator=(const progress_scope&) = delete;

 private:
  benchmark_progress& progress_;
};

/// "kernelwatch: error: NAME made no progress for S s (a kernel that never finishes?); the
/// process ends"
[[nodiscard]] std::string hang_message(const std::string& name, double seconds);

/// What the watchdog does by default: writes hang_message to stderr and ends the process at
/// once with exit_code_hang. std::_Exit: the main thread is blocked inside a CUDA synchronize,
/// and an ordinary exit would run destructors and atexit handlers (CUDA's own) that wait on
/// the GPU too.
[[noreturn]] void end_process_on_hang(const std::string& name, double seconds) noexcept;

class watchdog {
 public:
  using hang_function = std::function<void(const std::string& name, double seconds)>;
  using clock_function = std::function<progress_clock::time_point()>;

  /// Starts watching `progress` (which must outlive the watchdog): `on_hang` is called once,
  /// from the watchdog's thread, when hung() says so. It looks every timeout / 10 (at most
  /// every second), so it fires at most 10 % late.
  watchdog(const benchmark_progress& progress, double timeout_seconds,
           hang_function on_hang = end_process_on_hang,
           clock_function clock = [] { return progress_clock::now(); });
  /// Stops and joins the thread.
  ~watchdog();
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  void watch();

  const benchmark_progress& progress_;
  double timeout_seconds_;
  progress_clock::duration timeout_;
  hang_function on_hang_;
  clock_function clock_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything it reads is set
};

}  // namespace kernelwatch::detail
