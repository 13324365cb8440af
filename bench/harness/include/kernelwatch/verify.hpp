#pragma once
// Comparisons of a kernel's output with a host reference, with messages that say what
// differed: the first bad index, both values, and how many elements are wrong.

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
