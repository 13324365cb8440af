#include <kernelwatch/detail/instance.hpp>

#include <mutex>
#include <set>
#include <utility>

namespace kernelwatch::detail {
namespace {

thread_local std::string running_instance;

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
    : previous_(std::exchange(running_instance, std::move(key))) {}

instance_scope::~instance_scope() { running_instance = std::move(previous_); }

bool instance_prepared(const std::string& key) {
  std::lock_guard<std::mutex> lock(prepared().mutex);
  return prepared().keys.count(key) != 0;
}

void mark_instance_prepared(const std::string& key) {
  std::lock_guard<std::mutex> lock(prepared().mutex);
  prepared().keys.insert(key);
}

}  // namespace kernelwatch::detail
