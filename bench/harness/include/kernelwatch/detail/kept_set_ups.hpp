#pragma once
// The objects of set_up_once and set_up_kept (kernelwatch/set_up_once.hpp), kept per thread
// between the calls Google Benchmark makes of one instance. `run` interleaves the repetitions of
// all instances at random, so an instance's next repetition usually comes after other
// instances': set_up_kept objects stay meanwhile, the least recently used freed first when the
// device runs short of memory (a coalescing instance holds 512 MiB, a 1 Gi-element double dot
// product 16 GiB) or more than max_kept_set_ups are kept; set_up_once objects are freed as
// soon as another instance makes one (--kernelwatch_keep_set_ups changes both).

#include <cstddef>
#include <functional>
#include <memory>
#include <typeindex>

namespace kernelwatch::detail {

inline constexpr std::size_t max_kept_set_ups = 256;

/// The running instance's kept object of `type` on this thread (now the most recently used),
/// or nullptr.
[[nodiscard]] void* find_kept_set_up(std::type_index type);

/// Frees other instances' objects that are not to be kept: called as each instance starts,
/// so that no instance is timed beside another's set_up_once buffers, whether it makes one or
/// not.
void release_set_ups_of_other_instances();

/// The release above, then, least recently used first, more while memory is short or too many
/// are kept: called before a new object is made, so that it finds the room.
void make_room_for_set_up();

/// Keeps `object` as the running instance's of `type`; `past_its_instance`: also while other
/// instances run (set_up_kept).
void keep_set_up(std::type_index type, std::shared_ptr<void> object, bool past_its_instance);

/// Frees every object this thread keeps; main calls it once the benchmarks have run, while the
/// CUDA runtime can still free them.
void drop_kept_set_ups();

/// Whether memory is short: by default, less than half of the device's memory is free. Tests
/// replace it (an empty function restores the default).
void set_memory_short_test(std::function<bool()> test);

}  // namespace kernelwatch::detail
