#pragma once
// Which benchmark instance (family name + its arguments) is running on this thread. Google
// Benchmark calls a benchmark function several times per instance (to size the iteration
// count, then once per repetition); the key lets the harness do once-per-instance work once.

#include <string>

namespace kernelwatch::detail {

/// The running instance's key, e.g. "coalescing/offset/float/3"; empty outside a benchmark.
[[nodiscard]] const std::string& current_instance();

/// Sets current_instance() for the lifetime of the scope.
class instance_scope {
 public:
  explicit instance_scope(std::string key);
  ~instance_scope();
  instance_scope(const instance_scope&) = delete;
  instance_scope& operator=(const instance_scope&) = delete;

 private:
  std::string previous_;
};

/// True once `key` has been checked and warmed up in this process: its later repetitions
/// skip the check and warm up with one launch (measurement.cpp says why).
[[nodiscard]] bool instance_prepared(const std::string& key);
void mark_instance_prepared(const std::string& key);

}  // namespace kernelwatch::detail
