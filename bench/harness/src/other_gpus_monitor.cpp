#include <kernelwatch/detail/nvml.hpp>
#include <kernelwatch/detail/other_gpus_monitor.hpp>

#include <algorithm>
#include <atomic>

namespace kernelwatch::detail {
namespace {

std::atomic<other_gpus_monitor*> active_monitor{nullptr};

}  // namespace

other_gpus_monitor::other_gpus_monitor(const std::string& measured_uuid,
                                       std::chrono::milliseconds period) {
  if (const auto gpus = nvml_gpus()) {
    readable_ = true;
    for (const nvml_gpu& gpu : *gpus) {
      if (gpu.uuid != measured_uuid) {
        others_.push_back(gpu.uuid);
      }
    }
  }
  if (!others_.empty()) {
    thread_ = std::thread([this, period] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!stopping_) {
        lock.unlock();
        poll();
        lock.lock();
        wake_.wait_for(lock, period, [this] { return stopping_; });
      }
    });
  }
  active_monitor.store(this);
}

other_gpus_monitor::~other_gpus_monitor() {
  other_gpus_monitor* self = this;
  active_monitor.compare_exchange_strong(self, nullptr);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void other_gpus_monitor::poll() {
  std::optional<double> highest;
  for (const std::string& uuid : others_) {
    if (const auto percent = nvml_utilization_percent(uuid)) {
      highest = std::max(highest.value_or(0.0), static_cast<double>(*percent));
    }
  }
  if (highest) {
    const std::lock_guard<std::mutex> lock(mutex_);
    max_ = std::max(max_.value_or(0.0), *highest);
  }
}

void other_gpus_monitor::restart_window() {
  const std::lock_guard<std::mutex> lock(mutex_);
  max_.reset();
}

std::optional<double> other_gpus_monitor::window_max() {
  if (!readable_) {
    return std::nullopt;
  }
  if (others_.empty()) {
    return 0.0;
  }
  poll();
  const std::lock_guard<std::mutex> lock(mutex_);
  return max_;
}

other_gpus_monitor* other_gpus_monitor::active() noexcept { return active_monitor.load(); }

}  // namespace kernelwatch::detail
