#include <kernelwatch/detail/sampling_tools.hpp>
#include <kernelwatch/device_info.hpp>

#include <map>
#include <memory>

namespace kernelwatch::detail {
namespace {

// Per device: a benchmark may set another device than the one before it.
thread_local std::map<int, std::unique_ptr<sampling_tools>> tools_by_device;

}  // namespace

sampling_tools::sampling_tools() : probe_(current_device_info().sm_count) {}

l2_flusher& sampling_tools::flusher() {
  if (!flusher_) {
    flusher_.emplace();
  }
  return *flusher_;
}

std::vector<cuda_event>& sampling_tools::events(std::size_t count) {
  while (events_.size() < count) {
    events_.emplace_back();
  }
  return events_;
}

sampling_tools& thread_sampling_tools() {
  int device = 0;
  KW_CUDA_CHECK(cudaGetDevice(&device));
  std::unique_ptr<sampling_tools>& tools = tools_by_device[device];
  if (!tools) {
    tools = std::make_unique<sampling_tools>();
  }
  return *tools;
}

void drop_sampling_tools() { tools_by_device.clear(); }

}  // namespace kernelwatch::detail
