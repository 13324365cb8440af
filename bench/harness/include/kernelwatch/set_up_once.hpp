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
// Objects are kept per thread for every instance (repetitions are interleaved at random) until
// the benchmarks end; when the device runs short of memory, other instances' least recently
// used ones are freed first (detail/kept_set_ups.hpp), and made again when needed. The
// correctness check runs at the instance's first repetition, on a fresh object; a later
// repetition gets the object as the previous one left it, so T must not rely on its outputs
// being reset.

#include <kernelwatch/detail/kept_set_ups.hpp>

#include <memory>
#include <typeindex>
#include <utility>

namespace kernelwatch {

/// The running instance's T, constructed from `args` at its first call in this process (on
/// this thread) and returned again by the calls of its later repetitions.
template <typename T, typename... Args>
T& set_up_once(Args&&... args) {
  const std::type_index type(typeid(T));
  if (void* const found = detail::find_kept_set_up(type)) {
    return *static_cast<T*>(found);
  }
  detail::make_room_for_set_up();
  auto made = std::make_shared<T>(std::forward<Args>(args)...);
  T& object = *made;
  detail::keep_set_up(type, std::move(made));
  return object;
}

}  // namespace kernelwatch
