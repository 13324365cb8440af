#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/random.hpp>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace kernelwatch {
namespace {

template <typename T>
__global__ void fill_random_kernel(T* data, std::size_t n, std::uint64_t seed, T lo, T hi) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    data[i] = random_value<T>(seed, i, lo, hi);
  }
}

// A bound as the message shows it: half precision as its float, 8-bit integers as numbers.
template <typename T>
auto printable(T value) {
  if constexpr (detail::is_half_precision_v<T>) {
    return static_cast<float>(value);
  } else if constexpr (sizeof(T) == 1) {
    return static_cast<int>(value);
  } else {
    return value;
  }
}

}  // namespace

template <typename T>
void fill_random(T* data, std::size_t n, std::uint64_t seed, T lo, T hi, cudaStream_t stream) {
  // The device cannot throw: a NaN or infinite bound, or lo > hi, filled NaN, or integers from
  // a span that wrapped around, far outside [lo, hi).
  bool finite = true;
  if constexpr (std::is_floating_point_v<T>) {
    finite = std::isfinite(lo) && std::isfinite(hi);
  } else if constexpr (detail::is_half_precision_v<T>) {
    finite = std::isfinite(static_cast<float>(lo)) && std::isfinite(static_cast<float>(hi));
  }
  if (!finite || !(lo <= hi)) {
    std::ostringstream message;
    message << "fill_random: the bounds must be finite, with lo <= hi, not [" << printable(lo)
            << ", " << printable(hi) << ")";
    throw std::invalid_argument(message.str());
  }
  if (n == 0) {
    return;
  }
  constexpr int block = 256;
  constexpr std::size_t max_blocks = 65536;  // grid-stride beyond this: enough to fill any GPU
  const std::size_t blocks = std::min<std::size_t>((n + block - 1) / block, max_blocks);
  fill_random_kernel<<<static_cast<unsigned int>(blocks), block, 0, stream>>>(data, n, seed, lo,
                                                                              hi);
  KW_CUDA_CHECK_LAUNCH();
}

#define KW_INSTANTIATE_FILL_RANDOM(T) \
  template void fill_random<T>(T*, std::size_t, std::uint64_t, T, T, cudaStream_t);
KW_ELEMENT_TYPES(KW_INSTANTIATE_FILL_RANDOM)
#undef KW_INSTANTIATE_FILL_RANDOM

}  // namespace kernelwatch
