#include <kernelwatch/detail/l2_flush.hpp>
#include <kernelwatch/kernelwatch.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace kw = kernelwatch;

static_assert(!std::is_copy_constructible_v<kw::device_buffer<float>>);
static_assert(!std::is_copy_constructible_v<kw::pinned_buffer<float>>);
static_assert(!std::is_copy_constructible_v<kw::cuda_event>);
static_assert(!std::is_copy_constructible_v<kw::cuda_stream>);
static_assert(std::is_nothrow_move_constructible_v<kw::device_buffer<float>>);
static_assert(std::is_nothrow_move_constructible_v<kw::cuda_stream>);

TEST(CudaCheck, ThrowsWithCallFileLineAndRuntimeText) {
  try {
    KW_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const kw::cuda_error& error) {
    EXPECT_EQ(error.code(), cudaErrorInvalidValue);
    EXPECT_TRUE(std::regex_match(
        error.what(), std::regex(R"(resources_test\.cpp:\d+: cudaErrorInvalidValue failed: )"
                                 R"(cudaErrorInvalidValue: invalid argument)")))
        << error.what();
  }
}

// An error KW_CUDA_CHECK threw and the caller handled (an allocation tried and given up)
// stayed the runtime's last error, and the next KW_CUDA_CHECK_LAUNCH, a later benchmark's,
// threw it again as that benchmark's failure.
TEST(CudaCheck, AHandledErrorIsNotThrownAgainByTheNextLaunchCheck) {
  KW_REQUIRE_GPU();
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  try {
    const kw::device_buffer<char> too_large(std::size_t{1} << 52);  // 4 PiB
    ADD_FAILURE() << "4 PiB were allocated";
  } catch (const kw::cuda_error& error) {
    EXPECT_EQ(error.code(), cudaErrorMemoryAllocation) << error.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_NO_THROW(KW_CUDA_CHECK_LAUNCH());
}

TEST(DeviceBuffer, EmptyBuffersNeedNoDeviceAndMoveCleanly) {
  kw::device_buffer<float> empty;
  kw::device_buffer<float> moved(std::move(empty));
  EXPECT_EQ(moved.size(), 0U);
  EXPECT_EQ(moved.data(), nullptr);
}

namespace {

// An allocator that counts what it was asked for and hands out a small arena: cuda_array's
// ownership, tested without a GPU.
struct counting_allocator {
  static inline int allocations = 0;
  static inline std::size_t last_bytes = 0;
  static inline unsigned char arena[64] = {};
  static void* allocate(std::size_t bytes) {
    ++allocations;
    last_bytes = bytes;
    return bytes <= sizeof(arena) ? arena : nullptr;
  }
  static void release(void* /*pointer*/) noexcept {}
};

}  // namespace

// size * sizeof(T) wrapped: 2^62 floats asked the allocator for 0 bytes (here, and through
// cudaMallocAsync), and the buffer claimed 2^62 elements; a negative int count does the same.
TEST(CudaArray, RefusesASizeWhoseByteCountOverflows) {
  using array = kw::detail::cuda_array<float, counting_allocator>;
  counting_allocator::allocations = 0;
  try {
    const array wrapped(std::size_t{1} << 62);
    ADD_FAILURE() << "allocated " << counting_allocator::last_bytes << " bytes for "
                  << wrapped.size() << " floats";
  } catch (const std::length_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "buffer of 4611686018427387904 elements of 4 bytes: its size overflows size_t");
  }
  EXPECT_THROW(array(static_cast<std::size_t>(-1)), std::length_error);
  EXPECT_EQ(counting_allocator::allocations, 0);
  const array small(std::size_t{3});
  EXPECT_EQ(counting_allocator::last_bytes, 12U);
}

TEST(DeviceBuffer, RoundTripsThroughTheDevice) {
  KW_REQUIRE_GPU();
  const std::vector<std::int32_t> values = {3, 1, 4, 1, 5, 9, 2, 6};
  kw::device_buffer<std::int32_t> buffer(values.size());
  buffer.copy_from_host(values);
  EXPECT_EQ(buffer.to_host(), values);
  kw::device_buffer<std::int32_t> moved = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(moved.to_host(), values);
  moved.fill_bytes(0xFF);
  EXPECT_EQ(moved.to_host(), std::vector<std::int32_t>(values.size(), -1));
}

TEST(PinnedBuffer, IsHostAddressableAndCopiesToTheDevice) {
  KW_REQUIRE_GPU();
  kw::pinned_buffer<double> host(1000);
  for (std::size_t i = 0; i < host.size(); ++i) {
    host[i] = static_cast<double>(i) * 0.5;
  }
  kw::device_buffer<double> device(host.size());
  kw::cuda_stream stream;
  KW_CUDA_CHECK(cudaMemcpyAsync(device.data(), host.data(), host.size_bytes(),
                                cudaMemcpyHostToDevice, stream.get()));
  stream.synchronize();
  const std::vector<double> back = device.to_host();
  EXPECT_EQ(back, std::vector<double>(host.begin(), host.end()));
}

TEST(CudaEvent, MeasuresNonNegativeGpuTime) {
  KW_REQUIRE_GPU();
  kw::cuda_stream stream;
  kw::cuda_event start;
  kw::cuda_event stop;
  kw::device_buffer<float> data(1 << 24);
  start.record(stream.get());
  kw::fill_random(data.data(), data.size(), 3, 0.0F, 1.0F, stream.get());
  stop.record(stream.get());
  stop.synchronize();
  EXPECT_GT(kw::elapsed_seconds(start, stop), 0.0);
}

TEST(DeviceInfo, DescribesTheCurrentGpu) {
  KW_REQUIRE_GPU();
  const kw::device_info& device = kw::current_device_info();
  EXPECT_FALSE(device.name.empty());
  EXPECT_TRUE(std::regex_match(device.uuid, std::regex("GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")))
      << device.uuid;
  EXPECT_GT(device.sm_count, 0);
  EXPECT_GT(device.l2_cache_bytes, 0U);
  EXPECT_GT(device.memory_clock_khz, 0);
  EXPECT_GT(device.memory_bus_width_bits, 0);
  EXPECT_GT(device.peak_bandwidth_bytes_per_second(), 1e11);
  EXPECT_GE(device.cuda_runtime_version, 13000);
}

TEST(L2Flusher, WritesTwiceTheL2) {
  KW_REQUIRE_GPU();
  kw::detail::l2_flusher flusher;
  EXPECT_EQ(flusher.size_bytes(), 2 * kw::current_device_info().l2_cache_bytes);
  kw::cuda_stream stream;
  flusher.flush(stream.get());
  stream.synchronize();
}
