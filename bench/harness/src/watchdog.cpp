#include <kernelwatch/detail/main.hpp>
#include <kernelwatch/detail/watchdog.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace kernelwatch::detail {

bool hung(const progress_reading& seen, progress_clock::time_point now,
          progress_clock::duration timeout) noexcept {
  return seen.running > 0 && now - seen.last >= timeout;
}

void benchmark_progress::enter(const std::string& name, progress_clock::time_point now) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    name_ = name;
  }
  // The tick before the count: a watchdog that sees the benchmark running sees its start too,
  // never the previous benchmark's last progress.
  last_.store(now.time_since_epoch().count());
  running_.fetch_add(1);
}

void benchmark_progress::leave() noexcept { running_.fetch_sub(1); }

progress_reading benchmark_progress::read() const noexcept {
  progress_reading seen;
  seen.running = running_.load();
  seen.last = progress_clock::time_point(progress_clock::duration(last_.load()));
  return seen;
}

std::string benchmark_progress::name() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return name_;
}

benchmark_progress& process_progress() noexcept {
  static benchmark_progress progress;
  return progress;
}

std::string hang_message(const std::string& name, double seconds) {
  char text[64];
  std::snprintf(text, sizeof(text), "%g", seconds);
  return "kernelwatch: error: " + (name.empty() ? std::string("a benchmark") : name) +
         " made no progress for " + text +
         " s (a kernel that never finishes?); the process ends";
}

void end_process_on_hang(const std::string& name, double seconds) noexcept {
  try {
    const std::string message = hang_message(name, seconds) + '\n';
    // write(2), not stdio: the main thread may hold stderr's lock.
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
  } catch (...) {
    static constexpr char fallback[] = "kernelwatch: error: a benchmark made no progress\n";
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, fallback, sizeof(fallback) - 1);
  }
  // What the console reporter printed so far, unless the main thread is inside a write of its
  // own (it would hold the lock for ever if that write is what hangs).
  if (ftrylockfile(stdout) == 0) {
    std::fflush(stdout);
    funlockfile(stdout);
  }
  std::_Exit(exit_code_hang);
}

watchdog::watchdog(const benchmark_progress& progress, double timeout_seconds,
                   hang_function on_hang, clock_function clock)
    : progress_(progress),
      timeout_seconds_(timeout_seconds),
      timeout_(std::chrono::duration_cast<progress_clock::duration>(
          std::chrono::duration<double>(timeout_seconds))),
      on_hang_(std::move(on_hang)),
      clock_(std::move(clock)),
      thread_([this] { watch(); }) {}

watchdog::~watchdog() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void watchdog::watch() {
  const auto period = std::clamp<progress_clock::duration>(
      timeout_ / 10, std::chrono::milliseconds(1), std::chrono::seconds(1));
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    // The clock before the progress: progress made in between only makes the wait look
    // shorter, never longer.
    const progress_clock::time_point now = clock_();
    if (hung(progress_.read(), now, timeout_)) {
      lock.unlock();
      on_hang_(progress_.name(), timeout_seconds_);
      return;  // once: a test's on_hang returns
    }
  }
}

}  // namespace kernelwatch::detail
