#pragma once
// The one message of a failed comparison, host or device (verify.hpp).

#include <kernelwatch/verify.hpp>

#include <cstddef>

namespace kernelwatch::detail {

/// Passes when `mismatches` is 0; otherwise "M of N elements differ; first at index I:
/// expected E, got A".
template <typename T>
[[nodiscard]] check_result mismatch_result(std::size_t mismatches, std::size_t n,
                                           std::size_t first, T expected, T actual);

}  // namespace kernelwatch::detail
