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

}  // namespace

template <typename T>
void fill_random(T* data, std::size_t n, std::uint64_t seed, T lo, T hi, cudaStream_t stream) {
  // The device cannot throw: a NaN or infinite bound, or lo > hi, filled NaN, or integers from
  // a span that wrapped around, far outside [lo, hi).
  bool finite = true;
  if constexpr (std::is_floating_point_v<T>) {
    finite = std::isfinite(lo) && std::isfinite(hi);
  }
  if (!finite || !(lo <= hi)) {
    std::ostringstream message;
    message << "fill_random: the bounds must be finite, with lo <= hi, not [" << lo << ", " << hi
            << ")";
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

template void fill_random<float>(float*, std::size_t, std::uint64_t, float, float, cudaStream_t);
template void fill_random<double>(double*, std::size_t, std::uint64_t, double, double,
                                  cudaStream_t);
template void fill_random<std::int32_t>(std::int32_t*, std::size_t, std::uint64_t, std::int32_t,
                                        std::int32_t, cudaStream_t);
template void fill_random<std::uint32_t>(std::uint32_t*, std::size_t, std::uint64_t,
                                         std::uint32_t, std::uint32_t, cudaStream_t);
template void fill_random<std::int64_t>(std::int64_t*, std::size_t, std::uint64_t, std::int64_t,
                                        std::int64_t, cudaStream_t);

}  // namespace kernelwatch
