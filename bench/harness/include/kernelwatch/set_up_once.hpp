#pragma once
// A benchmark's inputs, made once for the repetitions of its instance instead of once per
// repetition. Google Benchmark calls a benchmark function again for every repetition;
// allocating, filling and freeing its buffers each time was 36 of the suite's 155 s of
// benchmark processes on an H100 (29.5 s of it the transfers' 1 GiB pinned and pageable host
// buffers; docs/measurement.md "Where the time goes"). What a sample times does not change:
// the set-up touches every page before the first sample either way.
//
//   struct copy_inputs {
//     explicit copy_inputs(std::size_t n) : in(n), out(n) { ... fill ... }
//     kernelwatch::device_buffer<float> in, out;
//   };
//   auto& inputs = kernelwatch::set_up_once<copy_inputs>(n);  // the same object each repetition
//
// set_up_once's object lives while its instance runs: made again when the instance comes back
// after another one made its own (`run` interleaves all instances' repetitions at random), so
// no other instance's buffers are allocated while a sample is timed. Keeping every instance's
// device buffers made large strided transposes and 64 Mi-element reductions 1.3-3.2 % slower
// in whole runs than alone (five H100 cards): a benchmark's time would depend on which others
// ran in its process. set_up_kept's object stays while other instances run (the least
// recently used freed first when device memory runs short): for set-ups that cost more than
// their repetition, of benchmarks whose time is not the device memory's, such as the
// transfers' pinned host buffers (PCIe and the host bound them).
//
// The correctness check runs at the instance's first repetition, on a fresh object; a later
// repetition may get the object as the previous one left it, so T must not rely on its
// outputs being reset.

#include <kernelwatch/detail/kept_set_ups.hpp>

#include <memory>
#include <typeindex>
#include <utility>

namespace kernelwatch {
namespace detail {

template <typename T, typename... Args>
T& set_up(bool past_its_instance, Args&&... args) {
  const std::type_index type(typeid(T));
  if (void* const found = find_kept_set_up(type)) {
    return *static_cast<T*>(found);
  }
  make_room_for_set_up();
  auto made = std::make_shared<T>(std::forward<Args>(args)...);
  T& object = *made;
  keep_set_up(type, std::move(made), past_its_instance);
  return object;
}

}  // namespace detail

/// The running instance's T, constructed from `args` at its first call (on this thread) and
/// returned again by the calls of its later repetitions until another instance makes its own.
template <typename T, typename... Args>
T& set_up_once(Args&&... args) {
  return detail::set_up<T>(false, std::forward<Args>(args)...);
}

/// As set_up_once, but the object is also kept while other instances run.
template <typename T, typename... Args>
T& set_up_kept(Args&&... args) {
  return detail::set_up<T>(true, std::forward<Args>(args)...);
}

}  // namespace kernelwatch
