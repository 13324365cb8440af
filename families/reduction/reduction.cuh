#pragma once
// Reduction and dot product: the classic lesson ("CUDA by Example"'s shared-cache dot product,
// Harris's "Optimizing Parallel Reduction"). Four block-level reductions that differ only in how
// a block combines its threads' values (naive serial sum, interleaved addressing, sequential
// addressing, warp shuffle), each as a multi-pass reduction; a single-pass vectorized grid-stride
// reduction with one atomic per block; CUB; and a read-only streaming kernel that loads the same
// bytes in the same pattern as the vectorized one and does no arithmetic: the speed of light.
// Launchers return the first failing call's cudaError_t; the device pieces are usable directly.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kernelwatch::kernels {

inline constexpr int reduction_block_size = 256;  // threads per block, every variant
inline constexpr int reduction_unroll = 4;        // 16-byte loads in flight per thread (vectorized)

enum class reduction_variant {
  naive,         // thread 0 of each block sums the block's cache serially
  interleaved,   // tree over the cache, if (tid % (2 * s) == 0): divergent warps, bank conflicts
  sequential,    // tree with s = blockDim / 2, s >>= 1: the seed's shared-cache reduction
  warp_shuffle,  // __shfl_down_sync within warps, shared memory only between warps
  vectorized,    // single pass: 16-byte grid-stride loads, warp-shuffle block sum, one atomicAdd
  cub,           // cub::DeviceReduce (Sum; TransformReduce over a[i] * b[i] for the dot product)
};

/// How far every variant's result may be from the exact value, relative, where no term is
/// negative (the bench's inputs: values in [0, 1)). float adds its partials in an order the
/// atomics and CUB choose; measured on an H200 at 1 Mi, 64 Mi and 1 Gi elements, three
/// processes: at most 9.1e-7 (the vectorized sum, whose blocks' atomics land in any order),
/// and 2.2e-15 in double. The bounds leave 11x and 450x of that.
template <typename T>
inline constexpr double reduction_relative_error_bound = std::is_same_v<T, float> ? 1e-5 : 1e-12;

[[nodiscard]] inline const char* to_string(reduction_variant variant) noexcept {
  switch (variant) {
    case reduction_variant::naive: return "naive";
    case reduction_variant::interleaved: return "interleaved";
    case reduction_variant::sequential: return "sequential";
    case reduction_variant::warp_shuffle: return "warp_shuffle";
    case reduction_variant::vectorized: return "vectorized";
    case reduction_variant::cub: return "cub";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// Inputs: what term i of the reduction is. The same kernels compute a sum (term a[i]) and a dot
// product (term a[i] * b[i]); `vector` is what one 16-byte load per input array brings in.

template <typename T>
struct vector16;
template <>
struct vector16<float> { using type = float4; };
template <>
struct vector16<double> { using type = double2; };
template <typename T>
using vector16_t = typename vector16<T>::type;

__device__ inline float lane_sum(const float4& v) { return (v.x + v.y) + (v.z + v.w); }
__device__ inline double lane_sum(const double2& v) { return v.x + v.y; }
__device__ inline float lane_dot(const float4& a, const float4& b) {
  return (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w);
}
__device__ inline double lane_dot(const double2& a, const double2& b) {
  return a.x * b.x + a.y * b.y;
}
// Bit patterns, so that a NaN sentinel can be found.
__device__ inline bool same_bits(float x, float y) {
  return __float_as_uint(x) == __float_as_uint(y);
}
__device__ inline bool same_bits(double x, double y) {
  return __double_as_longlong(x) == __double_as_longlong(y);
}
__device__ inline bool any_lane_is(const float4& v, float s) {
  return same_bits(v.x, s) | same_bits(v.y, s) | same_bits(v.z, s) | same_bits(v.w, s);
}
__device__ inline bool any_lane_is(const double2& v, double s) {
  return same_bits(v.x, s) | same_bits(v.y, s);
}

/// Term i is a[i].
template <typename T>
struct elements_of {
  using value_type = T;
  using vector = vector16_t<T>;
  static constexpr int width = sizeof(vector) / sizeof(T);  // elements per 16-byte vector
  const T* a;

  __device__ T operator()(std::size_t i) const { return a[i]; }
  __device__ vector load(std::size_t v) const { return reinterpret_cast<const vector*>(a)[v]; }
  __device__ static T reduce(const vector& x) { return lane_sum(x); }
  __device__ bool is(std::size_t i, T sentinel) const { return same_bits(a[i], sentinel); }
  __device__ static bool any_is(const vector& x, T sentinel) { return any_lane_is(x, sentinel); }
};

/// Term i is a[i] * b[i].
template <typename T>
struct products_of {
  using value_type = T;
  struct vector {
    vector16_t<T> a;
    vector16_t<T> b;
  };
  static constexpr int width = sizeof(vector16_t<T>) / sizeof(T);
  const T* a;
  const T* b;

  __device__ T operator()(std::size_t i) const { return a[i] * b[i]; }
  __device__ vector load(std::size_t v) const {
    return {reinterpret_cast<const vector16_t<T>*>(a)[v],
            reinterpret_cast<const vector16_t<T>*>(b)[v]};
  }
  __device__ static T reduce(const vector& x) { return lane_dot(x.a, x.b); }
  __device__ bool is(std::size_t i, T sentinel) const {
    return same_bits(a[i], sentinel) | same_bits(b[i], sentinel);
  }
  __device__ static bool any_is(const vector& x, T sentinel) {
    return any_lane_is(x.a, sentinel) | any_lane_is(x.b, sentinel);
  }
};

// ---------------------------------------------------------------------------------------------
// Block-level sums. Each returns the block's total in thread 0 (other threads: unspecified).
// blockDim.x must be a power of two no larger than the cache (the kernels' __launch_bounds__
// enforce the bound); the cache holds one value per thread and is synchronized before the call.

/// One thread adds every value, the other threads wait: blockDim.x dependent adds.
template <typename T>
__device__ T block_sum_naive(const T* cache) {
  T total = T(0);
  if (threadIdx.x == 0) {
    for (unsigned int k = 0; k < blockDim.x; ++k) {
      total += cache[k];
    }
  }
  return total;
}

/// Neighbours at distance s combine: the active threads of a warp thin out (divergence), and
/// their accesses stride 2s words apart (bank conflicts). Harris's reduce0.
template <typename T>
__device__ T block_sum_interleaved(T* cache) {
  const unsigned int tid = threadIdx.x;
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) {
      cache[tid] += cache[tid + s];
    }
    __syncthreads();
  }
  return cache[0];
}

/// The lower half adds the upper half: active threads stay contiguous (whole warps retire) and
/// accesses are conflict-free. The seed's loop; Harris's reduce2.
template <typename T>
__device__ T block_sum_sequential(T* cache) {
  const unsigned int tid = threadIdx.x;
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      cache[tid] += cache[tid + s];
    }
    __syncthreads();
  }
  return cache[0];
}

/// Sum over the 32 lanes, in lane 0. Every lane of the warp must call it.
template <typename T>
__device__ T warp_sum(T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    value += __shfl_down_sync(0xFFFFFFFFU, value, offset);
  }
  return value;
}

/// Warps reduce in registers; one shared word per warp; the first warp reduces those. Needs no
/// cache, and blockDim.x a multiple of 32, at most BlockSize. Call at most once per kernel (its
/// shared words are not guarded for reuse).
template <typename T, int BlockSize>
__device__ T block_sum_shuffle(T value) {
  static_assert(BlockSize % 32 == 0, "whole warps");
  __shared__ T warp_sums[BlockSize / 32];
  const unsigned int lane = threadIdx.x % 32;
  const unsigned int warp = threadIdx.x / 32;
  value = warp_sum(value);
  if (lane == 0) {
    warp_sums[warp] = value;
  }
  __syncthreads();
  if (warp == 0) {
    value = lane < blockDim.x / 32 ? warp_sums[lane] : T(0);
    value = warp_sum(value);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Kernels.

/// One pass of a multi-pass reduction: partials[blockIdx.x] = the sum of the block's terms.
/// Each thread first sums a grid-stride sweep of the terms (one term when the grid covers n,
/// as the launcher sizes it), then the block combines its threads' values with `Variant`
/// (naive, interleaved, sequential or warp_shuffle). blockDim.x: a power of two, <= BlockSize.
template <reduction_variant Variant, int BlockSize, typename Input>
__global__ void __launch_bounds__(BlockSize)
    block_reduce_kernel(typename Input::value_type* __restrict__ partials, Input input,
                        std::size_t n) {
  using T = typename Input::value_type;
  static_assert(Variant == reduction_variant::naive || Variant == reduction_variant::interleaved ||
                    Variant == reduction_variant::sequential ||
                    Variant == reduction_variant::warp_shuffle,
                "a block-level variant");
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  T value = T(0);
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += threads) {
    value += input(i);
  }
  T total;
  if constexpr (Variant == reduction_variant::warp_shuffle) {
    total = block_sum_shuffle<T, BlockSize>(value);
  } else {
    __shared__ T cache[BlockSize];
    cache[threadIdx.x] = value;
    __syncthreads();
    if constexpr (Variant == reduction_variant::naive) {
      total = block_sum_naive(cache);
    } else if constexpr (Variant == reduction_variant::interleaved) {
      total = block_sum_interleaved(cache);
    } else {
      total = block_sum_sequential(cache);
    }
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = total;
  }
}

/// Visits the 16-byte vectors [0, vectors) of `input` in a grid-stride loop: each thread issues
/// Unroll loads before it visits the first of them, so several loads per thread are in flight.
/// visit(slot, vector, index), slot in [0, Unroll).
template <int Unroll, typename Input, typename Visit>
__device__ void for_each_vector(const Input& input, std::size_t vectors, Visit&& visit) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t v = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; v + (Unroll - 1) * threads < vectors; v += Unroll * threads) {
    typename Input::vector x[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k) {
      x[k] = input.load(v + k * threads);
    }
#pragma unroll
    for (int k = 0; k < Unroll; ++k) {
      visit(k, x[k], v + k * threads);
    }
  }
  for (; v < vectors; v += threads) {
    visit(0, input.load(v), v);
  }
}

/// *result += the sum of all n terms: 16-byte loads, one accumulator per load slot, a
/// warp-shuffle block sum, one atomicAdd per block. *result must be zero before the launch.
/// The input arrays must be 16-byte aligned; the n % width trailing terms are added by the
/// first threads of the grid. blockDim.x: a multiple of 32, at most BlockSize.
template <int BlockSize, int Unroll, typename Input>
__global__ void __launch_bounds__(BlockSize)
    vectorized_reduce_kernel(typename Input::value_type* __restrict__ result, Input input,
                             std::size_t n) {
  using T = typename Input::value_type;
  const std::size_t vectors = n / Input::width;
  T accumulators[Unroll] = {};
  for_each_vector<Unroll>(input, vectors,
                          [&](int slot, const typename Input::vector& x, std::size_t) {
                            accumulators[slot] += Input::reduce(x);
                          });
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t tail = vectors * Input::width + thread;
  if (tail < n) {
    accumulators[0] += input(tail);
  }
  T value = T(0);
#pragma unroll
  for (int k = 0; k < Unroll; ++k) {
    value += accumulators[k];
  }
  const T total = block_sum_shuffle<T, BlockSize>(value);
  if (threadIdx.x == 0) {
    atomicAdd(result, total);
  }
}

/// The read-only reference: loads every term's inputs exactly as vectorized_reduce_kernel does
/// and only compares bit patterns with `sentinel`; *first_match is lowered (atomicMin) to the
/// index of each element equal to it. A sentinel that never occurs (a NaN among finite data)
/// means no store at all, yet the compiler cannot drop a load.
template <int BlockSize, int Unroll, typename Input>
__global__ void __launch_bounds__(BlockSize)
    streaming_read_kernel(Input input, std::size_t n, typename Input::value_type sentinel,
                          unsigned long long* __restrict__ first_match) {
  const std::size_t vectors = n / Input::width;
  // Rare path: find which lanes of a vector matched.
  const auto record = [&](std::size_t first, std::size_t count) {
    for (std::size_t i = first; i < first + count; ++i) {
      if (input.is(i, sentinel)) {
        atomicMin(first_match, static_cast<unsigned long long>(i));
      }
    }
  };
  for_each_vector<Unroll>(input, vectors,
                          [&](int, const typename Input::vector& x, std::size_t v) {
                            if (Input::any_is(x, sentinel)) {
                              record(v * Input::width, Input::width);
                            }
                          });
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t tail = vectors * Input::width + thread;
  if (tail < n) {
    record(tail, 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Launchers, for T = float and double. Every one computes the complete result in one call on
// `stream` (all passes, and the zeroing of the atomic accumulator), so a timed call is a whole
// reduction. n == 0 gives 0. `workspace` is device scratch of at least the queried size
// (nullptr when that is 0), untouched between calls; a smaller one gives cudaErrorInvalidValue.

/// Bytes of workspace reduce_sum / reduce_dot need: multi-pass variants keep every pass's
/// partials (about n / 255 values), vectorized needs none, CUB says what it needs. Pure host
/// arithmetic except for cub, which asks CUB (and so the current device).
template <typename T>
cudaError_t reduce_sum_workspace_bytes(reduction_variant variant, std::size_t n,
                                       std::size_t* bytes);
template <typename T>
cudaError_t reduce_dot_workspace_bytes(reduction_variant variant, std::size_t n,
                                       std::size_t* bytes);

/// *result = sum of in[0, n). vectorized needs a 16-byte aligned `in`
/// (else cudaErrorMisalignedAddress).
template <typename T>
cudaError_t reduce_sum(reduction_variant variant, T* result, const T* in, std::size_t n,
                       void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

/// *result = sum of a[i] * b[i] over [0, n). vectorized needs both 16-byte aligned.
template <typename T>
cudaError_t reduce_dot(reduction_variant variant, T* result, const T* a, const T* b,
                       std::size_t n, void* workspace, std::size_t workspace_bytes,
                       cudaStream_t stream);

/// Reads a[0, n) (and b[0, n) unless b is null) with the vectorized reduction's loads and grid,
/// doing nothing else: *first_match = min(*first_match, i) for each i where a[i] or b[i] has
/// the bits of `sentinel`. *first_match is never reset (initialize it to ~0ULL); repeated calls
/// give the same value. Both arrays must be 16-byte aligned (else cudaErrorMisalignedAddress).
template <typename T>
cudaError_t streaming_read(const T* a, const T* b, std::size_t n, T sentinel,
                           unsigned long long* first_match, cudaStream_t stream);

}  // namespace kernelwatch::kernels
