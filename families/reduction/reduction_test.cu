#include "reduction.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;
using variant = kk::reduction_variant;

namespace {

const std::vector<variant> all_variants = {variant::naive,        variant::interleaved,
                                           variant::sequential,   variant::warp_shuffle,
                                           variant::vectorized,   variant::cub};

// Around warp, block and vector-width boundaries; 65537 = 256 * 256 + 1 needs three passes.
const std::vector<std::size_t> sizes = {0,   1,    3,     4,     5,     31,
                                        255, 256,  257,   1000,  65536, 65537,
                                        (std::size_t{1} << 20) + 7};

// Small non-negative integers: every partial sum is an integer below 2^24, exact in float and
// double in any order, so every variant must match the exact sum bit for bit.
template <typename T>
std::vector<T> small_integers(std::size_t n, std::uint64_t seed, std::int32_t limit) {
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = static_cast<T>(kw::random_value<std::int32_t>(seed, i, 0, limit));
  }
  return values;
}

template <typename T>
std::vector<T> uniform(std::size_t n, std::uint64_t seed) {
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = kw::random_value<T>(seed, i, T(0), T(1));
  }
  return values;
}

template <typename T>
kw::device_buffer<T> to_device(const std::vector<T>& host) {
  kw::device_buffer<T> buffer(host.size());
  if (!host.empty()) {
    buffer.copy_from_host(host);
  }
  return buffer;
}

// b null: the sum of a[0, n); else the dot product. Called twice: the second call must not
// build on the first (the vectorized variant's accumulator is zeroed by every call).
template <typename T>
T reduce_on_device(variant v, const T* a, const T* b, std::size_t n) {
  const bool dot = b != nullptr;
  std::size_t bytes = 0;
  KW_CUDA_CHECK(dot ? kk::reduce_dot_workspace_bytes<T>(v, n, &bytes)
                    : kk::reduce_sum_workspace_bytes<T>(v, n, &bytes));
  kw::device_buffer<unsigned char> workspace(bytes);
  kw::device_buffer<T> result(1);
  result.fill_bytes(0xFF);
  for (int call = 0; call < 2; ++call) {
    KW_CUDA_CHECK(dot ? kk::reduce_dot(v, result.data(), a, b, n, workspace.data(), bytes,
                                       nullptr)
                      : kk::reduce_sum(v, result.data(), a, n, workspace.data(), bytes, nullptr));
  }
  return result.to_host()[0];
}

// b empty: the sum of a; else the dot product.
template <typename T>
T reduce(variant v, const std::vector<T>& a, const std::vector<T>& b) {
  const kw::device_buffer<T> a_device = to_device(a);
  const kw::device_buffer<T> b_device = to_device(b);
  return reduce_on_device<T>(v, a_device.data(), b.empty() ? nullptr : b_device.data(),
                             a.size());
}

// a[i] = 1 where i % 128 == 5, b[i] = 1 where i % 3 != 0, else 0: made on the device, for sizes
// whose host copies would cost more than the test.
template <typename T>
__global__ void fill_pattern(T* a, T* b, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    a[i] = i % 128 == 5 ? T(1) : T(0);
    if (b != nullptr) {
      b[i] = i % 3 != 0 ? T(1) : T(0);
    }
  }
}

}  // namespace

template <typename T>
class Reduction : public ::testing::Test {};
using element_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Reduction, element_types);

TYPED_TEST(Reduction, EveryVariantSumsExactly) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  for (const std::size_t n : sizes) {
    const std::vector<T> a = small_integers<T>(n, n, 8);
    std::int64_t exact = 0;
    for (const T x : a) {
      exact += static_cast<std::int64_t>(x);
    }
    for (const variant v : all_variants) {
      EXPECT_EQ(reduce<T>(v, a, {}), static_cast<T>(exact))
          << kk::to_string(v) << " n=" << n;
    }
  }
}

TYPED_TEST(Reduction, EveryVariantComputesTheDotProductExactly) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  for (const std::size_t n : sizes) {
    const std::vector<T> a = small_integers<T>(n, n, 4);
    const std::vector<T> b = small_integers<T>(n, n + 1, 4);
    std::int64_t exact = 0;
    for (std::size_t i = 0; i < n; ++i) {
      exact += static_cast<std::int64_t>(a[i]) * static_cast<std::int64_t>(b[i]);
    }
    for (const variant v : all_variants) {
      EXPECT_EQ(reduce<T>(v, a, b), static_cast<T>(exact)) << kk::to_string(v) << " n=" << n;
    }
  }
}

// The bench's inputs (uniform in [0, 1)) and tolerances, against a long double host sum.
TYPED_TEST(Reduction, UniformInputsStayWithinTheBenchTolerance) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  const std::size_t n = (std::size_t{1} << 22) + 3;
  const std::vector<T> a = uniform<T>(n, 1);
  const std::vector<T> b = uniform<T>(n, 2);
  long double sum = 0;
  long double dot = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += a[i];
    dot += static_cast<long double>(a[i]) * b[i];
  }
  const double tolerance = kk::reduction_relative_error_bound<T>;
  for (const variant v : all_variants) {
    EXPECT_NEAR(reduce<T>(v, a, {}), static_cast<double>(sum),
                tolerance * static_cast<double>(sum))
        << kk::to_string(v);
    EXPECT_NEAR(reduce<T>(v, a, b), static_cast<double>(dot),
                tolerance * static_cast<double>(dot))
        << kk::to_string(v);
  }
}

// At the bench's sizes, with an odd tail: every variant's sum and dot product at 64 Mi, and the
// sums the bench sweeps to 1 Gi. The pattern's partial sums are integers below 2^24, exact in
// any order, so a variant that drops one block of 256 terms is off by at least one; the bench's
// float tolerance cannot see that at 64 Mi or beyond (one block is 4e-6 of 64 Mi random terms).
TYPED_TEST(Reduction, EveryVariantIsExactAtTheBenchSizes) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  for (const std::size_t n : {(std::size_t{1} << 26) + 5, (std::size_t{1} << 30) + 5}) {
    const bool sweep_only = n > (std::size_t{1} << 26) + 5;
    kw::device_buffer<T> a(n);
    kw::device_buffer<T> b(sweep_only ? 0 : n);
    fill_pattern<T><<<1024, 256>>>(a.data(), sweep_only ? nullptr : b.data(), n);
    KW_CUDA_CHECK(cudaGetLastError());
    std::int64_t sum = 0;
    std::int64_t dot = 0;
    for (std::size_t i = 5; i < n; i += 128) {
      ++sum;
      dot += i % 3 != 0 ? 1 : 0;
    }
    for (const variant v : all_variants) {
      if (sweep_only && v != variant::vectorized && v != variant::cub) {
        continue;
      }
      EXPECT_EQ(reduce_on_device<T>(v, a.data(), nullptr, n), static_cast<T>(sum))
          << kk::to_string(v) << " n=" << n;
      if (!sweep_only) {
        EXPECT_EQ(reduce_on_device<T>(v, a.data(), b.data(), n), static_cast<T>(dot))
            << kk::to_string(v) << " n=" << n;
      }
    }
  }
}

TYPED_TEST(Reduction, RefusesWhatItCannotDo) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  kw::device_buffer<T> in(1024);
  kw::device_buffer<T> result(1);
  // 16-byte loads need 16-byte aligned arrays.
  EXPECT_EQ(kk::reduce_sum(variant::vectorized, result.data(), in.data() + 1, 1000, nullptr, 0,
                           nullptr),
            cudaErrorMisalignedAddress);
  EXPECT_EQ(kk::reduce_dot(variant::vectorized, result.data(), in.data(), in.data() + 1, 1000,
                           nullptr, 0, nullptr),
            cudaErrorMisalignedAddress);
  unsigned long long* no_match = nullptr;
  EXPECT_EQ(kk::streaming_read<T>(in.data() + 1, nullptr, 1000, T(0), no_match, nullptr),
            cudaErrorMisalignedAddress);
  // A multi-pass variant without room for its partials.
  EXPECT_EQ(kk::reduce_sum(variant::sequential, result.data(), in.data(), 1000, nullptr, 0,
                           nullptr),
            cudaErrorInvalidValue);
  KW_CUDA_CHECK(cudaDeviceSynchronize());
}

TYPED_TEST(Reduction, StreamingReadFindsTheFirstSentinelInEitherArray) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  const T sentinel = std::numeric_limits<T>::quiet_NaN();
  for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1027},
                              (std::size_t{1} << 20) + 3}) {
    for (const std::size_t position : {std::size_t{0}, n / 2, n - 1}) {
      for (const bool in_b : {false, true}) {
        std::vector<T> a = uniform<T>(n, 3);
        std::vector<T> b = uniform<T>(n, 4);
        (in_b ? b : a)[position] = sentinel;
        (in_b ? a : b)[n - 1] = sentinel;  // a later (or equal) match must not win
        const kw::device_buffer<T> a_device = to_device(a);
        const kw::device_buffer<T> b_device = to_device(b);
        kw::device_buffer<unsigned long long> first_match(1);
        first_match.fill_bytes(0xFF);
        KW_CUDA_CHECK(kk::streaming_read(a_device.data(), b_device.data(), n, sentinel,
                                         first_match.data(), nullptr));
        EXPECT_EQ(first_match.to_host()[0], position)
            << "n=" << n << " position=" << position << " in_b=" << in_b;

        // Reading only a: matches in b are not seen.
        first_match.fill_bytes(0xFF);
        KW_CUDA_CHECK(kk::streaming_read<T>(a_device.data(), nullptr, n, sentinel,
                                            first_match.data(), nullptr));
        EXPECT_EQ(first_match.to_host()[0], in_b ? n - 1 : position)
            << "a only, n=" << n << " position=" << position << " in_b=" << in_b;
      }
    }
    // No sentinel anywhere: nothing is stored.
    const kw::device_buffer<T> clean = to_device(uniform<T>(n, 5));
    kw::device_buffer<unsigned long long> first_match(1);
    first_match.fill_bytes(0xFF);
    KW_CUDA_CHECK(kk::streaming_read(clean.data(), clean.data(), n, sentinel,
                                     first_match.data(), nullptr));
    EXPECT_EQ(first_match.to_host()[0], ~0ULL) << "n=" << n;
  }
}

// Host arithmetic only: no GPU needed.
TEST(ReductionWorkspace, MultiPassKeepsEveryIntermediatePass) {
  const auto bytes = [](variant v, std::size_t n) {
    std::size_t result = 1;
    EXPECT_EQ(kk::reduce_sum_workspace_bytes<float>(v, n, &result), cudaSuccess);
    return result;
  };
  EXPECT_EQ(bytes(variant::sequential, 0), 0U);
  EXPECT_EQ(bytes(variant::sequential, 256), 0U);  // one block writes the result
  EXPECT_EQ(bytes(variant::sequential, 257), 2 * sizeof(float));
  EXPECT_EQ(bytes(variant::naive, 65536), 256 * sizeof(float));
  EXPECT_EQ(bytes(variant::warp_shuffle, 65537), (257 + 2) * sizeof(float));
  EXPECT_EQ(bytes(variant::interleaved, std::size_t{1} << 26),
            (262144 + 1024 + 4) * sizeof(float));
  EXPECT_EQ(bytes(variant::vectorized, std::size_t{1} << 26), 0U);
  std::size_t dot_bytes = 0;
  EXPECT_EQ(kk::reduce_dot_workspace_bytes<double>(variant::sequential, 65537, &dot_bytes),
            cudaSuccess);
  EXPECT_EQ(dot_bytes, (257 + 2) * sizeof(double));
}

TEST(ReductionVariant, NamesAreDistinct) {
  std::vector<std::string> names;
  for (const variant v : all_variants) {
    const std::string name = kk::to_string(v);
    EXPECT_EQ(std::count(names.begin(), names.end(), name), 0) << name;
    names.push_back(name);
  }
}
