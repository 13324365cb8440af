#pragma once
// Comparisons of a kernel's output with a reference, with messages that say what differed:
// the first bad index, both values, and how many elements are wrong. On the host, or on the
// GPU (`_on_device`) where copying the arrays back would cost more than timing the kernel.
// Defined in the harness for float, double, __half, __nv_bfloat16 (compared and shown as the
// float each holds) and the 8-, 16-, 32- and 64-bit integers; another type does not link.

#include <cstddef>
#include <string>
#include <vector>

namespace kernelwatch {

struct check_result {
  bool ok = true;
  std::string message;  // empty when ok

  static check_result pass() { return {}; }
  static check_result fail(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const noexcept { return ok; }
};

/// Bit-for-bit equality as values (NaN never equals): for copies and permutations.
template <typename T>
[[nodiscard]] check_result compare_exact(const T* expected, const T* actual, std::size_t n);

/// |actual - expected| <= abs_tol + rel_tol * |expected| for every element (NaN fails).
template <typename T>
[[nodiscard]] check_result compare_close(const T* expected, const T* actual, std::size_t n,
                                         double rel_tol, double abs_tol = 0.0);

/// compare_exact and compare_close on the GPU, with the same messages: `expected` and `actual`
/// are device pointers, and element i is expected[i * stride] against actual[i * stride].
/// Copying a 256 MiB output and its input back and comparing them on the host took about 1 s
/// a check on an H100 host (half of the suite's wall time, docs/measurement.md); this takes
/// milliseconds. Waits for all work on the device first, like device_buffer's helpers.
template <typename T>
[[nodiscard]] check_result compare_exact_on_device(const T* expected, const T* actual,
                                                   std::size_t n, std::size_t stride = 1);

template <typename T>
[[nodiscard]] check_result compare_close_on_device(const T* expected, const T* actual,
                                                   std::size_t n, double rel_tol,
                                                   double abs_tol = 0.0, std::size_t stride = 1);

template <typename T>
[[nodiscard]] check_result compare_exact(const std::vector<T>& expected,
                                         const std::vector<T>& actual) {
  if (expected.size() != actual.size()) {
    return check_result::fail("size differs: expected " + std::to_string(expected.size()) +
                              " elements, got " + std::to_string(actual.size()));
  }
  return compare_exact(expected.data(), actual.data(), expected.size());
}

template <typename T>
[[nodiscard]] check_result compare_close(const std::vector<T>& expected,
                                         const std::vector<T>& actual, double rel_tol,
                                         double abs_tol = 0.0) {
  if (expected.size() != actual.size()) {
    return check_result::fail("size differs: expected " + std::to_string(expected.size()) +
                              " elements, got " + std::to_string(actual.size()));
  }
  return compare_close(expected.data(), actual.data(), expected.size(), rel_tol, abs_tol);
}

}  // namespace kernelwatch
