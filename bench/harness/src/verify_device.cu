#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/element_types.hpp>
#include <kernelwatch/detail/mismatch.hpp>
#include <kernelwatch/device_buffer.hpp>
#include <kernelwatch/verify.hpp>

#include <algorithm>
#include <cstdint>

namespace kernelwatch {
namespace {

struct tally {
  unsigned long long mismatches;
  unsigned long long first;  // the smallest index that differs
};

// Written so that NaN, which compares false with everything, fails (as on the host).
template <typename T, bool Exact>
__device__ bool matches(T expected, T actual, double rel_tol, double abs_tol) {
  if constexpr (Exact) {
    return expected == actual;
  } else {
    const double difference = fabs(static_cast<double>(actual) - static_cast<double>(expected));
    return difference <= abs_tol + rel_tol * fabs(static_cast<double>(expected));
  }
}

template <typename T, bool Exact>
__global__ void count_mismatches(const T* expected, const T* actual, std::size_t n,
                                 std::size_t stride, double rel_tol, double abs_tol,
                                 tally* result) {
  unsigned long long mismatches = 0;
  unsigned long long first = ~0ULL;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += step) {
    if (!matches<T, Exact>(expected[i * stride], actual[i * stride], rel_tol, abs_tol)) {
      first = mismatches == 0 ? i : first;  // a thread's indices only grow
      ++mismatches;
    }
  }
  if (mismatches != 0) {
    atomicAdd(&result->mismatches, mismatches);
    atomicMin(&result->first, first);
  }
}

template <typename T>
T element(const T* array, std::size_t index) {
  T value{};
  KW_CUDA_CHECK(cudaMemcpy(&value, array + index, sizeof(T), cudaMemcpyDeviceToHost));
  return value;
}

template <typename T, bool Exact>
check_result compare_on_device(const T* expected, const T* actual, std::size_t n,
                               std::size_t stride, double rel_tol, double abs_tol) {
  constexpr int block = 256;
  constexpr std::size_t most_blocks = 4096;  // a grid-stride loop: enough to fill any GPU
  device_buffer<tally> result(1);
  const tally empty{0, ~0ULL};
  KW_CUDA_CHECK(cudaDeviceSynchronize());  // the kernel under test ran on another stream
  KW_CUDA_CHECK(cudaMemcpy(result.data(), &empty, sizeof empty, cudaMemcpyHostToDevice));
  if (n != 0) {
    const std::size_t blocks = std::min(most_blocks, (n + block - 1) / block);
    count_mismatches<T, Exact><<<static_cast<unsigned>(blocks), block>>>(
        expected, actual, n, stride, rel_tol, abs_tol, result.data());
    KW_CUDA_CHECK_LAUNCH();
  }
  tally found{};
  KW_CUDA_CHECK(cudaMemcpy(&found, result.data(), sizeof found, cudaMemcpyDeviceToHost));
  if (found.mismatches == 0) {
    return check_result::pass();
  }
  const std::size_t first = found.first * stride;
  return detail::mismatch_result(found.mismatches, n, found.first, element(expected, first),
                                 element(actual, first));
}

}  // namespace

template <typename T>
check_result compare_exact_on_device(const T* expected, const T* actual, std::size_t n,
                                     std::size_t stride) {
  return compare_on_device<T, true>(expected, actual, n, stride, 0.0, 0.0);
}

template <typename T>
check_result compare_close_on_device(const T* expected, const T* actual, std::size_t n,
                                     double rel_tol, double abs_tol, std::size_t stride) {
  return compare_on_device<T, false>(expected, actual, n, stride, rel_tol, abs_tol);
}

#define KW_INSTANTIATE_COMPARE_ON_DEVICE(T)                                                  \
  template check_result compare_exact_on_device<T>(const T*, const T*, std::size_t,          \
                                                   std::size_t);                             \
  template check_result compare_close_on_device<T>(const T*, const T*, std::size_t, double,  \
                                                   double, std::size_t);

KW_ELEMENT_TYPES(KW_INSTANTIATE_COMPARE_ON_DEVICE)
#undef KW_INSTANTIATE_COMPARE_ON_DEVICE

}  // namespace kernelwatch
