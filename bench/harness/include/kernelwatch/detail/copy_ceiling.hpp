#pragma once
// The device's copy ceiling: the bandwidth (bytes read plus bytes written per second) of a large
// device-to-device cudaMemcpy, measured by the run itself. Bandwidth as a fraction of it
// (`ceiling_fraction`) compares two cards of one model on equal terms, where a fraction of the
// datasheet peak would also carry each card's own memory speed.

#include <cstddef>

namespace kernelwatch::detail {

/// Times device-to-device copies of `buffer_bytes` and returns the median bandwidth.
[[nodiscard]] double measure_copy_ceiling(std::size_t buffer_bytes);

/// The current device's ceiling, measured on first use (copies of max(512 MiB, 8 x L2)).
[[nodiscard]] double current_copy_ceiling();

}  // namespace kernelwatch::detail
