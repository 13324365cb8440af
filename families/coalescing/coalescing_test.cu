#include "coalescing.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

// Sizes around block and warp boundaries, and one that needs many blocks.
const std::vector<std::size_t> sizes = {1, 31, 255, 256, 257, 1000, (1 << 20) + 7};

template <typename T>
kw::device_buffer<T> random_buffer(std::size_t n, std::uint64_t seed) {
  kw::device_buffer<T> buffer(n);
  kw::fill_random(buffer.data(), n, seed, T(-1), T(1));
  return buffer;
}

}  // namespace

template <typename T>
class Coalescing : public ::testing::Test {};
using element_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Coalescing, element_types);

TYPED_TEST(Coalescing, OffsetCopyReadsFromTheOffset) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  for (const std::size_t n : sizes) {
    for (const int offset : {0, 1, 7, 32}) {
      const auto in = random_buffer<T>(n + offset, n);
      kw::device_buffer<T> out(n);
      out.fill_bytes(0xFF);
      KW_CUDA_CHECK(kk::offset_copy(out.data(), in.data(), n, offset, 128, nullptr));
      const std::vector<T> input = in.to_host();
      const kw::check_result result =
          kw::compare_exact(input.data() + offset, out.to_host().data(), n);
      EXPECT_TRUE(result) << "n=" << n << " offset=" << offset << ": " << result.message;
    }
  }
}

TYPED_TEST(Coalescing, StrideCopyTouchesOnlyStridedElements) {
  KW_REQUIRE_GPU();
  using T = TypeParam;
  for (const std::size_t n : sizes) {
    for (const int stride : {1, 2, 7, 32}) {
      const std::size_t span = (n - 1) * stride + 1;
      const auto in = random_buffer<T>(span, n);
      kw::device_buffer<T> out(span);
      out.fill_bytes(0);
      KW_CUDA_CHECK(kk::stride_copy(out.data(), in.data(), n, stride, 256, nullptr));
      const std::vector<T> input = in.to_host();
      std::vector<T> expected(span, T(0));
      for (std::size_t i = 0; i < n; ++i) {
        expected[i * stride] = input[i * stride];
      }
      const kw::check_result result = kw::compare_exact(expected, out.to_host());
      EXPECT_TRUE(result) << "n=" << n << " stride=" << stride << ": " << result.message;
    }
  }
}

TEST(VectorizedCopy, CopiesEveryByteIncludingTheTail) {
  KW_REQUIRE_GPU();
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{15}, std::size_t{16},
                                  std::size_t{17}, std::size_t{4096 + 5},
                                  (std::size_t{1} << 26) + 9}) {
    const auto in = random_buffer<std::int32_t>((bytes + 3) / 4, bytes);
    kw::device_buffer<std::int32_t> out((bytes + 3) / 4);
    out.fill_bytes(0xAB);
    KW_CUDA_CHECK(kk::vectorized_copy(out.data(), in.data(), bytes, nullptr));
    KW_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::int32_t> expected = in.to_host();
    // bytes past the copy keep the poison
    auto* expected_bytes = reinterpret_cast<unsigned char*>(expected.data());
    for (std::size_t b = bytes; b < expected.size() * 4; ++b) {
      expected_bytes[b] = 0xAB;
    }
    const kw::check_result result = kw::compare_exact(expected, out.to_host());
    EXPECT_TRUE(result) << "bytes=" << bytes << ": " << result.message;
  }
}

TEST(VectorizedCopy, RefusesMisalignedPointers) {
  KW_REQUIRE_GPU();
  kw::device_buffer<std::int32_t> buffer(64);
  EXPECT_EQ(kk::vectorized_copy(buffer.data() + 1, buffer.data() + 8, 64, nullptr),
            cudaErrorMisalignedAddress);
}
