#pragma once
// Reproducible random inputs. The value at an index is a pure function of (seed, index), so a
// host reference regenerates any input element without copying the device buffer back, and a
// device fill of hundreds of MiB takes microseconds rather than seconds of host work.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

#include <kernelwatch/detail/element_types.hpp>

namespace kernelwatch {

/// SplitMix64 finalizer: a full-avalanche bijection on 64 bits, cheap on both sides.
KW_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

/// Uniform in [lo, hi) (hi > lo), or lo where lo == hi; the same value on host and device.
template <typename T>
KW_HOST_DEVICE inline T random_value(std::uint64_t seed, std::uint64_t index, T lo, T hi) {
  const std::uint64_t bits = mix64(mix64(seed) ^ index);
  if constexpr (detail::is_half_precision_v<T>) {
    // A float of [lo, hi) rounded to the nearest, the same on both sides: hi itself may come.
    return T(random_value<float>(seed, index, static_cast<float>(lo), static_cast<float>(hi)));
  } else if constexpr (std::is_floating_point_v<T>) {
    // Take as many bits as the mantissa holds, so that every value is exact and the host and
    // the device agree bit for bit.
    constexpr int mantissa_bits = std::is_same_v<T, float> ? 24 : 53;
    const T unit = static_cast<T>(bits >> (64 - mantissa_bits)) /
                   static_cast<T>(std::uint64_t{1} << mantissa_bits);
    // One fused multiply-add on both sides: a separate multiply and add could be contracted
    // into an FMA by nvcc and not by the host compiler, and the two would round differently.
#if defined(__CUDA_ARCH__)
    return fma(hi - lo, unit, lo);
#else
    return std::fma(hi - lo, unit, lo);
#endif
  } else {
    // In the unsigned type: hi - lo overflows a signed one for wide ranges. Wraps to the same
    // values as signed arithmetic wherever that does not overflow.
    using U = std::make_unsigned_t<T>;
    const U span = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
    if (span == 0) {
      return lo;  // a constant input; bits % 0 is undefined
    }
    return static_cast<T>(static_cast<U>(static_cast<U>(lo) + static_cast<U>(bits % span)));
  }
}

/// Fills data[0, n) on the device with random_value(seed, i, lo, hi); asynchronous on stream.
/// Defined in the harness for float, double, __half, __nv_bfloat16 and the 8-, 16-, 32- and
/// 64-bit integers (another type does not link). Bounds that are not finite, or lo > hi, throw
/// std::invalid_argument before anything is launched.
template <typename T>
void fill_random(T* data, std::size_t n, std::uint64_t seed, T lo, T hi,
                 cudaStream_t stream = nullptr);

}  // namespace kernelwatch
