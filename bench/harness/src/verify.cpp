#include <kernelwatch/detail/element_types.hpp>
#include <kernelwatch/detail/mismatch.hpp>
#include <kernelwatch/verify.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <type_traits>

namespace kernelwatch {
namespace {

template <typename T, typename Equal>
check_result compare(const T* expected, const T* actual, std::size_t n, Equal equal) {
  std::size_t mismatches = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!equal(expected[i], actual[i])) {
      if (mismatches == 0) {
        first = i;
      }
      ++mismatches;
    }
  }
  if (mismatches == 0) {
    return check_result::pass();  // (and no element to show: n may be 0)
  }
  return detail::mismatch_result(mismatches, n, first, expected[first], actual[first]);
}

}  // namespace

namespace detail {

template <typename T>
std::string show(T value) {
  if constexpr (is_half_precision_v<T>) {
    return show(static_cast<float>(value));  // the float it holds, exactly
  } else {
    std::ostringstream text;
    if constexpr (std::is_floating_point_v<T>) {
      text.precision(std::is_same_v<T, float> ? 9 : 17);  // enough digits to round-trip
    }
    text << +value;  // + prints 8-bit integers as numbers
    return text.str();
  }
}

template <typename T>
check_result mismatch_result(std::size_t mismatches, std::size_t n, std::size_t first,
                             T expected, T actual) {
  if (mismatches == 0) {
    return check_result::pass();
  }
  return check_result::fail(std::to_string(mismatches) + " of " + std::to_string(n) +
                            " elements differ; first at index " + std::to_string(first) +
                            ": expected " + show(expected) + ", got " + show(actual));
}

}  // namespace detail

template <typename T>
check_result compare_exact(const T* expected, const T* actual, std::size_t n) {
  return compare(expected, actual, n, [](T e, T a) { return e == a; });
}

template <typename T>
check_result compare_close(const T* expected, const T* actual, std::size_t n, double rel_tol,
                           double abs_tol) {
  return compare(expected, actual, n, [=](T e, T a) {
    const double difference = std::fabs(static_cast<double>(a) - static_cast<double>(e));
    // written so that NaN, which compares false with everything, fails
    return difference <= abs_tol + rel_tol * std::fabs(static_cast<double>(e));
  });
}

#define KW_INSTANTIATE_COMPARE(T)                                                   \
  template check_result compare_exact<T>(const T*, const T*, std::size_t);          \
  template check_result compare_close<T>(const T*, const T*, std::size_t, double, double); \
  template check_result detail::mismatch_result<T>(std::size_t, std::size_t, std::size_t, T, T);

KW_ELEMENT_TYPES(KW_INSTANTIATE_COMPARE)
#undef KW_INSTANTIATE_COMPARE

}  // namespace kernelwatch
