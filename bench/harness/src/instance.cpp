#include <kernelwatch/detail/instance.hpp>
#include <kernelwatch/set_up_once.hpp>

#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace kernelwatch::detail {
namespace {

thread_local std::string running_instance;

// One instance's set-ups per thread: a repetition finds its own; the next instance frees them.
struct kept_set_ups {
  std::string instance;
  std::map<std::type_index, std::shared_ptr<void>> objects;
};
thread_local kept_set_ups kept;

struct prepared_instances {
  std::mutex mutex;
  std::set<std::string> keys;
};

prepared_instances& prepared() {
  static prepared_instances instances;
  return instances;
}

}  // namespace

const std::string& current_instance() { return running_instance; }

instance_scope::instance_scope(std::string key)
    : previous_(std::exchange(running_instance, std::move(key))) {
  if (kept.instance != running_instance) {
    kept.objects.clear();  // before this instance allocates its own
    kept.instance = running_instance;
  }
}

instance_scope::~instance_scope() { running_instance = std::move(previous_); }

bool instance_prepared(const std::string& key) {
  std::lock_guard<std::mutex> lock(prepared().mutex);
  return prepared().keys.count(key) != 0;
}

void mark_instance_prepared(const std::string& key) {
  std::lock_guard<std::mutex> lock(prepared().mutex);
  prepared().keys.insert(key);
}

std::shared_ptr<void>& kept_set_up(std::type_index type) {
  if (kept.instance != running_instance) {  // outside any instance_scope (a test's own call)
    kept.objects.clear();
    kept.instance = running_instance;
  }
  return kept.objects[type];
}

void drop_kept_set_ups() {
  kept.objects.clear();
  kept.instance.clear();
}

}  // namespace kernelwatch::detail
