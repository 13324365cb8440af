#include <kernelwatch/detail/instance.hpp>
#include <kernelwatch/detail/kept_set_ups.hpp>
#include <kernelwatch/detail/run_options.hpp>

#include <cuda_runtime_api.h>

#include <list>
#include <string>
#include <utility>

namespace kernelwatch::detail {
namespace {

struct kept_object {
  std::string instance;
  std::type_index type;
  std::shared_ptr<void> object;
  bool past_its_instance;  // set_up_kept's
};

// Least recently used first. A list: moving an entry to the back keeps the others in place.
thread_local std::list<kept_object> kept;

std::function<bool()>& memory_short_test() {
  static std::function<bool()> test;
  return test;
}

bool device_memory_short() {
  std::size_t free = 0;
  std::size_t total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();  // not sticky; with no device the set-up itself will say why
    return false;
  }
  return free < total / 2;
}

bool memory_short() {
  const std::function<bool()>& test = memory_short_test();
  return test ? test() : device_memory_short();
}

}  // namespace

void* find_kept_set_up(std::type_index type) {
  const std::string& instance = current_instance();
  for (auto entry = kept.begin(); entry != kept.end(); ++entry) {
    if (entry->type == type && entry->instance == instance) {
      kept.splice(kept.end(), kept, entry);
      return kept.back().object.get();
    }
  }
  return nullptr;
}

void release_set_ups_of_other_instances() {
  const std::string& instance = current_instance();
  const set_up_keeping keeping = current_run_options().keep_set_ups;
  const auto keep_past_its_instance = [keeping](const kept_object& entry) {
    return keeping == set_up_keeping::all ||
           (keeping == set_up_keeping::declared && entry.past_its_instance);
  };
  // The running instance's own objects stay: its function holds references to them.
  kept.remove_if([&](const kept_object& entry) {
    return entry.instance != instance && !keep_past_its_instance(entry);
  });
}

void make_room_for_set_up() {
  release_set_ups_of_other_instances();
  const std::string& instance = current_instance();
  auto entry = kept.begin();
  while (entry != kept.end() && (kept.size() >= max_kept_set_ups || memory_short())) {
    entry = entry->instance == instance ? std::next(entry) : kept.erase(entry);
  }
}

void keep_set_up(std::type_index type, std::shared_ptr<void> object, bool past_its_instance) {
  kept.push_back(kept_object{current_instance(), type, std::move(object), past_its_instance});
}

void drop_kept_set_ups() { kept.clear(); }

void set_memory_short_test(std::function<bool()> test) { memory_short_test() = std::move(test); }

}  // namespace kernelwatch::detail
