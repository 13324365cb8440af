#pragma once
// The element types the harness's comparisons (verify.hpp) and random inputs (random.hpp) are
// defined for: C++'s floating-point and fixed-width integer types, and CUDA's half and bfloat16.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define KW_HOST_DEVICE __host__ __device__
#else
#define KW_HOST_DEVICE
#endif

namespace kernelwatch::detail {

template <typename T>
inline constexpr bool is_half_precision_v =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

/// X(T) for each of them: the harness instantiates its templates so.
#define KW_ELEMENT_TYPES(X)                                                                  \
  X(float)                                                                                   \
  X(double)                                                                                  \
  X(__half)                                                                                  \
  X(__nv_bfloat16)                                                                           \
  X(std::int8_t)                                                                             \
  X(std::uint8_t)                                                                            \
  X(std::int16_t)                                                                            \
  X(std::uint16_t)                                                                           \
  X(std::int32_t)                                                                            \
  X(std::uint32_t)                                                                           \
  X(std::int64_t)                                                                            \
  X(std::uint64_t)

}  // namespace kernelwatch::detail
