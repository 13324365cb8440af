#include <kernelwatch/detail/disturbance_monitor.hpp>
#include <kernelwatch/detail/nvml.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>

namespace kernelwatch::detail {
namespace {

std::atomic<disturbance_monitor*> active_monitor{nullptr};

// As nvidia-smi names a compute process: its command's first word (argv[0]), else its
// short name; "unknown" once it is gone.
std::string process_name(unsigned int pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string name;
  std::ifstream cmdline(proc + "/cmdline");
  if (std::getline(cmdline, name, '\0') && !name.empty()) {
    return name;
  }
  std::ifstream comm(proc + "/comm");
  if (std::getline(comm, name) && !name.empty()) {
    return name;
  }
  return "unknown";
}

}  // namespace

disturbance_monitor::disturbance_monitor(const std::string& measured_uuid,
                                         std::chrono::milliseconds period)
    : measured_(measured_uuid) {
  if (const auto gpus = nvml_gpus()) {
    readable_ = true;
    for (const nvml_gpu& gpu : *gpus) {
      if (gpu.uuid != measured_uuid) {
        others_.push_back(gpu.uuid);
      }
    }
  }
  if (readable_) {
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

disturbance_monitor::~disturbance_monitor() {
  disturbance_monitor* self = this;
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

void disturbance_monitor::poll() {
  std::optional<double> highest;
  for (const std::string& uuid : others_) {
    if (const auto percent = nvml_utilization_percent(uuid)) {
      highest = std::max(highest.value_or(0.0), static_cast<double>(*percent));
    }
  }
  // Only a list that holds this process numbers processes as this process does (its PID
  // namespace): any other would name this process itself as another.
  const auto pids = nvml_compute_pids(measured_);
  const auto own = static_cast<unsigned int>(getpid());
  const bool known = pids && std::find(pids->begin(), pids->end(), own) != pids->end();
  std::map<unsigned int, std::string> names;
  if (known) {
    for (const unsigned int pid : *pids) {
      if (pid != own) {
        names.emplace(pid, process_name(pid));  // read outside the lock
      }
    }
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (highest) {
    max_ = std::max(max_.value_or(0.0), *highest);
  }
  if (known) {
    processes_known_ = true;
    for (const auto& [pid, name] : names) {
      window_pids_.insert(pid);
      named_.emplace(pid, name);  // the name first seen (a pid reused later keeps it: rare)
    }
  }
}

void disturbance_monitor::restart_window() {
  const std::lock_guard<std::mutex> lock(mutex_);
  max_.reset();
  processes_known_ = false;
  window_pids_.clear();
}

disturbance disturbance_monitor::window() {
  disturbance seen;
  if (!readable_) {
    return seen;
  }
  poll();
  const std::lock_guard<std::mutex> lock(mutex_);
  seen.other_gpus_max_utilization_percent = others_.empty() ? std::optional<double>(0.0) : max_;
  if (processes_known_) {
    seen.other_processes.emplace();
    for (const unsigned int pid : window_pids_) {
      std::string named = "pid " + std::to_string(pid) + ": " + named_.at(pid);
      if (said_.insert(pid).second) {
        seen.first_seen.push_back(named);
      }
      seen.other_processes->push_back(std::move(named));
    }
  }
  return seen;
}

disturbance_monitor* disturbance_monitor::active() noexcept { return active_monitor.load(); }

}  // namespace kernelwatch::detail
