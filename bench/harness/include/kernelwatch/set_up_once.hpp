#pragma once
// A benchmark's inputs, made once per instance and process instead of once per repetition.
// Google Benchmark calls a benchmark function again for every repetition; allocating, filling
// and freeing its buffers each time was 36 of the suite's 155 s of benchmark processes on an
// H100 (29.5 s of it the transfers' 1 GiB pinned and pageable host buffers; docs/measurement.md
// "Where the time goes"). What a sample times does not change: the set-up touches every page
// before the first sample either way.
//
//   struct copy_inputs {
//     explicit copy_inputs(std::size_t n) : in(n), out(n) { ... fill ... }
//     kernelwatch::device_buffer<float> in, out;
//   };
//   auto& inputs = kernelwatch::set_up_once<copy_inputs>(n);  // the same object each repetition
//
// The object lives until another instance starts on this thread (it is destroyed first, so a
// family of 1 GiB instances never holds two) or the benchmarks end. The correctness check runs
// at the instance's first repetition, on a fresh object; a later repetition gets the object as
// the previous one left it, so T must not rely on its outputs being reset.

#include <memory>
#include <typeindex>
#include <utility>

namespace kernelwatch {
namespace detail {

/// The running instance's kept set-up of type `type` on this thread, or an empty pointer
/// (instance.cpp keeps it beside the instance's key).
[[nodiscard]] std::shared_ptr<void>& kept_set_up(std::type_index type);

}  // namespace detail

/// The running instance's T, constructed from `args` at its first call in this process (on
/// this thread) and returned again by the calls of its later repetitions.
template <typename T, typename... Args>
T& set_up_once(Args&&... args) {
  std::shared_ptr<void>& kept = detail::kept_set_up(std::type_index(typeid(T)));
  if (!kept) {
    kept = std::make_shared<T>(std::forward<Args>(args)...);
  }
  return *static_cast<T*>(kept.get());
}

}  // namespace kernelwatch
