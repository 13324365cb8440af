#include "matmul.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

constexpr int w = kk::matmul_tile_dim;

template <typename T>
kw::device_buffer<T> random_buffer(std::size_t n, std::uint64_t seed) {
  kw::device_buffer<T> buffer(n);
  kw::fill_random(buffer.data(), n, seed, T(-1), T(1));
  return buffer;
}

// Every entry of the m×n result against the double-precision product, within
// matmul_tolerance (inputs in [-1, 1), so max|a| = max|b| = 1).
template <typename T>
kw::check_result check_product(const std::vector<T>& a, const std::vector<T>& b,
                               const std::vector<T>& c, int m, int n, int k) {
  std::vector<double> expected(static_cast<std::size_t>(m) * n);
  std::vector<double> actual(expected.size());
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      const std::size_t i = static_cast<std::size_t>(row) * n + col;
      expected[i] = kk::matmul_reference_entry(a.data(), b.data(), n, k, row, col);
      actual[i] = c[i];
    }
  }
  return kw::compare_close(expected, actual, 0.0, kk::matmul_tolerance<T>(k, 1.0, 1.0));
}

struct cublas_deleter {
  void operator()(cublasHandle_t handle) const { cublasDestroy(handle); }
};
using cublas_owner = std::unique_ptr<std::remove_pointer_t<cublasHandle_t>, cublas_deleter>;

// FP32 as in the benchmark: CUBLAS_DEFAULT_MATH (no TF32, no emulation).
cublas_owner make_cublas() {
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    return nullptr;
  }
  cublas_owner owner(handle);
  if (cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
    return nullptr;
  }
  return owner;
}

// Row-major C = A·B as column-major C^T = B^T·A^T.
cublasStatus_t cublas_sgemm_row_major(cublasHandle_t handle, float* c, const float* a,
                                      const float* b, int m, int n, int k) {
  const float alpha = 1.0F;
  const float beta = 0.0F;
  return cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta, c, n);
}

struct shape {
  int m;
  int n;
  int k;
};

std::string describe(const shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

}  // namespace

// ---- host helpers ----

TEST(MatmulReference, EntryIsTheDotProduct) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};     // 2×3
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};  // 3×2
  EXPECT_EQ(kk::matmul_reference_entry(a.data(), b.data(), 2, 3, 0, 0), 58.0);
  EXPECT_EQ(kk::matmul_reference_entry(a.data(), b.data(), 2, 3, 0, 1), 64.0);
  EXPECT_EQ(kk::matmul_reference_entry(a.data(), b.data(), 2, 3, 1, 0), 139.0);
  EXPECT_EQ(kk::matmul_reference_entry(a.data(), b.data(), 2, 3, 1, 1), 154.0);
  EXPECT_EQ(kk::matmul_reference_entry(a.data(), b.data(), 2, 0, 1, 1), 0.0);
}

TEST(MatmulTolerance, GrowsWithRootKAndInputScale) {
  EXPECT_NEAR(kk::matmul_tolerance<float>(4096, 1.0, 1.0), 1000.0 * 0x1p-23 * 64.0, 1e-12);
  EXPECT_DOUBLE_EQ(kk::matmul_tolerance<float>(400, 1.0, 1.0),
                   2.0 * kk::matmul_tolerance<float>(100, 1.0, 1.0));
  EXPECT_DOUBLE_EQ(kk::matmul_tolerance<float>(64, 2.0, 3.0),
                   6.0 * kk::matmul_tolerance<float>(64, 1.0, 1.0));
  EXPECT_DOUBLE_EQ(kk::matmul_tolerance<double>(64, 1.0, 1.0),
                   kk::matmul_tolerance<float>(64, 1.0, 1.0) * 0x1p-29);
  EXPECT_EQ(kk::matmul_tolerance<float>(0, 1.0, 1.0), 0.0);
}

// ---- the Best Practices Guide kernels (A m×32, B 32×n) ----

template <typename T>
class GuideMultiply : public ::testing::Test {
 protected:
  using launcher = cudaError_t (*)(T*, const T*, const T*, int, int, cudaStream_t);
  struct variant {
    const char* name;
    launcher launch;
  };
  static std::vector<variant> variants() {
    return {{"simple", kk::simple_multiply<T>},
            {"coalesced_a", kk::coalesced_multiply<T>},
            {"shared_ab", kk::shared_ab_multiply<T>}};
  }
};
using element_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GuideMultiply, element_types);

TYPED_TEST(GuideMultiply, MatchesTheHostProduct) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  // Whole tiles, partial tiles in either dimension, and a single element.
  const std::vector<std::pair<int, int>> sizes = {{1, 1},     {32, 32},   {31, 33}, {33, 100},
                                                  {100, 257}, {1000, 70}, {2049, 31}};
  for (const auto& [m, n] : sizes) {
    const auto a = random_buffer<T>(static_cast<std::size_t>(m) * w, 1000 + m);
    const auto b = random_buffer<T>(static_cast<std::size_t>(w) * n, 2000 + n);
    const std::vector<T> host_a = a.to_host();
    const std::vector<T> host_b = b.to_host();
    for (const auto& variant : TestFixture::variants()) {
      kw::device_buffer<T> c(static_cast<std::size_t>(m) * n);
      c.fill_bytes(0xFF);  // NaN: an entry the kernel skips cannot pass
      KW_CUDA_CHECK(variant.launch(c.data(), a.data(), b.data(), m, n, nullptr));
      KW_CUDA_CHECK(cudaDeviceSynchronize());
      const kw::check_result result = check_product(host_a, host_b, c.to_host(), m, n, w);
      EXPECT_TRUE(result) << variant.name << " m=" << m << " n=" << n << ": " << result.message;
    }
  }
}

TYPED_TEST(GuideMultiply, ValidatesSizes) {
  KW_REQUIRE_GPU();
  for (const auto& variant : TestFixture::variants()) {
    EXPECT_EQ(variant.launch(nullptr, nullptr, nullptr, -1, 32, nullptr), cudaErrorInvalidValue)
        << variant.name;
    EXPECT_EQ(variant.launch(nullptr, nullptr, nullptr, 32, -1, nullptr), cudaErrorInvalidValue)
        << variant.name;
    // 65536 tiles of rows: one more than a grid's y dimension holds
    EXPECT_EQ(variant.launch(nullptr, nullptr, nullptr, 65536 * w, 32, nullptr),
              cudaErrorInvalidValue)
        << variant.name;
    // column indices of the last tile would overflow int
    EXPECT_EQ(variant.launch(nullptr, nullptr, nullptr, 32, std::numeric_limits<int>::max(),
                             nullptr),
              cudaErrorInvalidValue)
        << variant.name;
    EXPECT_EQ(variant.launch(nullptr, nullptr, nullptr, 0, 32, nullptr), cudaSuccess)
        << variant.name;
    EXPECT_EQ(variant.launch(nullptr, nullptr, nullptr, 32, 0, nullptr), cudaSuccess)
        << variant.name;
  }
}

// ---- the general SGEMM ----

TEST(SgemmTiled, MatchesTheHostProduct) {
  KW_REQUIRE_GPU();
  // k and n multiples of 4 take the float4 path, the others the scalar one; both with partial
  // block tiles (128×128) and partial k stages (8).
  const std::vector<shape> shapes = {
      {1, 1, 1},      {1, 5, 3},       {128, 128, 8},   {127, 129, 9},  {129, 132, 12},
      {200, 260, 100}, {257, 130, 67}, {33, 1000, 20},  {1000, 36, 1},  {300, 7, 513},
      {256, 384, 320}};
  for (const shape& s : shapes) {
    const auto a = random_buffer<float>(static_cast<std::size_t>(s.m) * s.k, 3000 + s.k);
    const auto b = random_buffer<float>(static_cast<std::size_t>(s.k) * s.n, 4000 + s.n);
    kw::device_buffer<float> c(static_cast<std::size_t>(s.m) * s.n);
    c.fill_bytes(0xFF);
    KW_CUDA_CHECK(kk::sgemm_tiled(c.data(), a.data(), b.data(), s.m, s.n, s.k, nullptr));
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    const kw::check_result result =
        check_product(a.to_host(), b.to_host(), c.to_host(), s.m, s.n, s.k);
    EXPECT_TRUE(result) << describe(s) << ": " << result.message;
  }
}

TEST(SgemmTiled, UnalignedPointersTakeTheScalarPath) {
  KW_REQUIRE_GPU();
  const shape s{192, 136, 72};  // multiples of 4: only the alignment forbids float4
  // One float in: 4-byte aligned, not 16.
  const auto a = random_buffer<float>(static_cast<std::size_t>(s.m) * s.k + 1, 5);
  const auto b = random_buffer<float>(static_cast<std::size_t>(s.k) * s.n + 1, 6);
  kw::device_buffer<float> c(static_cast<std::size_t>(s.m) * s.n + 1);
  c.fill_bytes(0xFF);
  KW_CUDA_CHECK(kk::sgemm_tiled(c.data() + 1, a.data() + 1, b.data() + 1, s.m, s.n, s.k, nullptr));
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> host_a = a.to_host();
  const std::vector<float> host_b = b.to_host();
  const std::vector<float> host_c = c.to_host();
  const kw::check_result result = check_product(
      std::vector<float>(host_a.begin() + 1, host_a.end()),
      std::vector<float>(host_b.begin() + 1, host_b.end()),
      std::vector<float>(host_c.begin() + 1, host_c.end()), s.m, s.n, s.k);
  EXPECT_TRUE(result) << result.message;
  EXPECT_TRUE(std::isnan(host_c[0])) << "wrote before the start of C";
}

TEST(SgemmTiled, EmptyInnerDimensionWritesZeros) {
  KW_REQUIRE_GPU();
  const int m = 70;
  const int n = 130;
  kw::device_buffer<float> c(static_cast<std::size_t>(m) * n);
  c.fill_bytes(0xFF);
  // A and B are never read when k = 0.
  KW_CUDA_CHECK(kk::sgemm_tiled(c.data(), nullptr, nullptr, m, n, 0, nullptr));
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  const kw::check_result result =
      kw::compare_exact(std::vector<float>(c.size(), 0.0F), c.to_host());
  EXPECT_TRUE(result) << result.message;
}

TEST(SgemmTiled, ValidatesSizes) {
  KW_REQUIRE_GPU();
  EXPECT_EQ(kk::sgemm_tiled(nullptr, nullptr, nullptr, -1, 8, 8, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kk::sgemm_tiled(nullptr, nullptr, nullptr, 8, -1, 8, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kk::sgemm_tiled(nullptr, nullptr, nullptr, 8, 8, -1, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kk::sgemm_tiled(nullptr, nullptr, nullptr, 65536 * 128, 8, 8, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kk::sgemm_tiled(nullptr, nullptr, nullptr, 8, 8, std::numeric_limits<int>::max(),
                            nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kk::sgemm_tiled(nullptr, nullptr, nullptr, 0, 8, 8, nullptr), cudaSuccess);
  EXPECT_EQ(kk::sgemm_tiled(nullptr, nullptr, nullptr, 8, 0, 8, nullptr), cudaSuccess);
}

// Entries 1 + 2^-12 summed 64 times: exactly 64 + 2^-6 in FP32, exactly 64 if the inputs were
// rounded to TF32's 10-bit mantissa. Both the kernel and the cuBLAS reference must be FP32.
TEST(SgemmTiled, AccumulatesInFullFp32LikeCublas) {
  KW_REQUIRE_GPU();
  const int size = 64;
  const auto elements = static_cast<std::size_t>(size) * size;
  kw::device_buffer<float> a(elements);
  kw::device_buffer<float> b(elements);
  a.copy_from_host(std::vector<float>(elements, 1.0F + 0x1p-12F));
  b.copy_from_host(std::vector<float>(elements, 1.0F));
  const std::vector<float> expected(elements, 64.0F + 0x1p-6F);

  kw::device_buffer<float> c(elements);
  c.fill_bytes(0xFF);
  KW_CUDA_CHECK(kk::sgemm_tiled(c.data(), a.data(), b.data(), size, size, size, nullptr));
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  const kw::check_result ours = kw::compare_exact(expected, c.to_host());
  EXPECT_TRUE(ours) << "sgemm_tiled: " << ours.message;

  const cublas_owner cublas = make_cublas();
  ASSERT_NE(cublas, nullptr) << "cuBLAS could not be initialized";
  c.fill_bytes(0xFF);
  ASSERT_EQ(cublas_sgemm_row_major(cublas.get(), c.data(), a.data(), b.data(), size, size, size),
            CUBLAS_STATUS_SUCCESS);
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  const kw::check_result reference = kw::compare_exact(expected, c.to_host());
  EXPECT_TRUE(reference) << "cublasSgemm: " << reference.message;
}

// The benchmark's reference, compared entry by entry at sizes where that is cheap. Each side is
// within matmul_tolerance of the exact product, so they are within twice it of each other.
TEST(SgemmTiled, MatchesCublas) {
  KW_REQUIRE_GPU();
  const cublas_owner cublas = make_cublas();
  ASSERT_NE(cublas, nullptr) << "cuBLAS could not be initialized";
  for (const shape& s : {shape{1024, 1024, 1024}, shape{300, 500, 260}, shape{129, 65, 1031}}) {
    const auto a = random_buffer<float>(static_cast<std::size_t>(s.m) * s.k, 7);
    const auto b = random_buffer<float>(static_cast<std::size_t>(s.k) * s.n, 8);
    kw::device_buffer<float> ours(static_cast<std::size_t>(s.m) * s.n);
    kw::device_buffer<float> reference(ours.size());
    ours.fill_bytes(0xFF);
    reference.fill_bytes(0xFF);
    KW_CUDA_CHECK(kk::sgemm_tiled(ours.data(), a.data(), b.data(), s.m, s.n, s.k, nullptr));
    ASSERT_EQ(cublas_sgemm_row_major(cublas.get(), reference.data(), a.data(), b.data(), s.m,
                                     s.n, s.k),
              CUBLAS_STATUS_SUCCESS);
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    const kw::check_result result =
        kw::compare_close(reference.to_host(), ours.to_host(), 0.0,
                          2.0 * kk::matmul_tolerance<float>(s.k, 1.0, 1.0));
    EXPECT_TRUE(result) << describe(s) << ": " << result.message;
  }
}
