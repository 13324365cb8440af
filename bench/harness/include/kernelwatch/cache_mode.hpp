#pragma once
// Whether a timed launch finds its inputs in L2: the run's --kernelwatch_cache, which a
// benchmark may override for itself (measurement::cache).

namespace kernelwatch {

/// cold: evict L2 before each timed launch (what an application sees);
/// hot: time back-to-back launches whose inputs may still be in L2.
enum class cache_mode { cold, hot };

}  // namespace kernelwatch
