#include "transfers.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include "support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

// Around the kernel's 256-thread blocks, and one size that needs many blocks.
const std::vector<std::size_t> sizes = {1, 5, 255, 256, 257, 1000, (1 << 20) + 7};

// The kernel's chain on the host: std::fma rounds once, as the device's FMA does, so the
// results agree bit for bit.
std::vector<float> fma_chain_reference(const float* in, std::size_t n, int iterations) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    float acc = in[i];
    for (int k = 0; k < iterations; ++k) {
      acc = std::fma(0.5F, acc, in[i]);
    }
    out[i] = acc;
  }
  return out;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = kw::random_value(seed, i, -1.0F, 1.0F);
  }
  return values;
}

// A pinned or pageable host array of random words, copied up and back by repeated_copy.
template <typename HostBuffer>
void expect_round_trip(std::size_t words, int copies) {
  HostBuffer source(words);
  HostBuffer back(words);
  for (std::size_t i = 0; i < words; ++i) {
    source[i] = kw::random_value(words, i, std::uint32_t{0}, std::uint32_t{0xFFFFFFFF});
  }
  std::memset(back.data(), 0xFF, words * sizeof(std::uint32_t));  // never a random value
  kw::device_buffer<std::uint32_t> device(words);
  device.fill_bytes(0xFF);
  const std::size_t bytes = words * sizeof(std::uint32_t);
  kw::cuda_stream stream;
  KW_CUDA_CHECK(kk::repeated_copy(device.data(), source.data(), bytes, copies,
                                  cudaMemcpyHostToDevice, stream.get()));
  KW_CUDA_CHECK(kk::repeated_copy(back.data(), device.data(), bytes, copies, cudaMemcpyDeviceToHost,
                                  stream.get()));
  stream.synchronize();
  const kw::check_result result = kw::compare_exact(source.data(), back.data(), words);
  EXPECT_TRUE(result) << "words=" << words << " copies=" << copies << ": " << result.message;
}

}  // namespace

TEST(StagedChunk, CoversTheRangeInOrderWithoutOverlap) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{7},
                              std::size_t{8}, std::size_t{1000}, (std::size_t{1} << 33) + 5}) {
    for (const int chunks : {1, 2, 3, 4, 8}) {
      std::size_t next = 0;
      for (int i = 0; i < chunks; ++i) {
        const kk::transfer_chunk part = kk::staged_chunk(n, chunks, i);
        if (part.count > 0) {
          EXPECT_EQ(part.offset, next) << "n=" << n << " chunks=" << chunks << " i=" << i;
        }
        EXPECT_LE(part.count, (n + chunks - 1) / chunks);
        next = part.offset + part.count;
      }
      EXPECT_EQ(next, n) << "n=" << n << " chunks=" << chunks;
    }
  }
}

TEST(StagedChunk, SplitsEvenlyWhenItDivides) {
  static_assert(kk::staged_chunk(64, 4, 3).offset == 48 && kk::staged_chunk(64, 4, 3).count == 16);
  // Fewer elements than chunks: the first ones take one each, the rest are empty.
  EXPECT_EQ(kk::staged_chunk(2, 4, 1).offset, 1U);
  EXPECT_EQ(kk::staged_chunk(2, 4, 1).count, 1U);
  EXPECT_EQ(kk::staged_chunk(2, 4, 3).count, 0U);
}

TEST(RepeatedCopy, RoundTripsPinnedAndPageableMemory) {
  KW_REQUIRE_GPU();
  for (const std::size_t words : {std::size_t{1}, std::size_t{1024} + 3, std::size_t{1} << 20}) {
    for (const int copies : {1, 3}) {
      expect_round_trip<std::vector<std::uint32_t>>(words, copies);
      expect_round_trip<kw::pinned_buffer<std::uint32_t>>(words, copies);
    }
  }
}

TEST(RepeatedCopy, ZeroCopiesDoNothingAndNegativeIsRefused) {
  KW_REQUIRE_GPU();
  kw::device_buffer<std::uint32_t> device(4);
  std::vector<std::uint32_t> host(4);
  EXPECT_EQ(kk::repeated_copy(device.data(), host.data(), 16, 0, cudaMemcpyHostToDevice, nullptr),
            cudaSuccess);
  EXPECT_EQ(kk::repeated_copy(device.data(), host.data(), 16, -1, cudaMemcpyHostToDevice, nullptr),
            cudaErrorInvalidValue);
}

TEST(FmaChain, MatchesTheHostChainBitForBit) {
  KW_REQUIRE_GPU();
  for (const std::size_t n : sizes) {
    for (const int iterations : {0, 1, 7, 100}) {
      if (iterations > 7 && n > 1000) {
        continue;  // the host's fma is slow; long chains are covered on the small sizes
      }
      kw::device_buffer<float> in(n);
      kw::device_buffer<float> out(n);
      kw::fill_random(in.data(), n, n, -1.0F, 1.0F);
      out.fill_bytes(0xFF);
      KW_CUDA_CHECK(kk::fma_chain(out.data(), in.data(), n, iterations, nullptr));
      const std::vector<float> input = in.to_host();
      const kw::check_result result =
          kw::compare_exact(fma_chain_reference(input.data(), n, iterations), out.to_host());
      EXPECT_TRUE(result) << "n=" << n << " iterations=" << iterations << ": " << result.message;
    }
  }
}

TEST(FmaChain, SettlesNearTwiceTheInput) {
  // What the benchmark's check relies on: after its 2048 steps, 2x within 1e-6 relative.
  const std::size_t n = 4'000;
  const std::vector<float> input = random_floats(n, 7);
  const std::vector<float> chained = fma_chain_reference(input.data(), n, 2048);
  std::vector<float> doubled(n);
  for (std::size_t i = 0; i < n; ++i) {
    doubled[i] = 2.0F * input[i];
  }
  const kw::check_result result = kw::compare_close(doubled, chained, 1e-6);
  EXPECT_TRUE(result) << result.message;
}

TEST(StagedCopyExecute, MatchesTheHostChainForEveryStreamCount) {
  KW_REQUIRE_GPU();
  constexpr int iterations = 5;
  for (const std::size_t n : sizes) {
    const std::vector<float> input = random_floats(n, n);
    const std::vector<float> expected = fma_chain_reference(input.data(), n, iterations);
    for (const int streams : {1, 2, 3, 8}) {
      kw::pinned_buffer<float> host_in(n);
      kw::pinned_buffer<float> host_out(n);
      std::memcpy(host_in.data(), input.data(), n * sizeof(float));
      std::memset(host_out.data(), 0xFF, n * sizeof(float));
      kw::device_buffer<float> device_in(n);
      kw::device_buffer<float> device_out(n);
      std::vector<kw::cuda_stream> workers(static_cast<std::size_t>(streams));
      std::vector<kw::cuda_event> events;
      std::vector<cudaStream_t> worker_handles;
      std::vector<cudaEvent_t> event_handles;
      events.reserve(static_cast<std::size_t>(streams) + 1);
      for (int e = 0; e <= streams; ++e) {
        event_handles.push_back(events.emplace_back(cudaEventDisableTiming).get());
      }
      for (const kw::cuda_stream& worker : workers) {
        worker_handles.push_back(worker.get());
      }
      kw::cuda_stream origin;
      KW_CUDA_CHECK(kk::staged_copy_execute(
          host_out.data(), host_in.data(), device_out.data(), device_in.data(), n, iterations,
          kk::stream_fan{worker_handles.data(), event_handles.data(), streams}, origin.get()));
      // Only the caller's stream: the join must make it wait for every worker.
      origin.synchronize();
      const kw::check_result result = kw::compare_exact(expected.data(), host_out.data(), n);
      EXPECT_TRUE(result) << "n=" << n << " streams=" << streams << ": " << result.message;
    }
  }
}

TEST(StagedCopyExecute, RefusesAnEmptyFan) {
  EXPECT_EQ(
      kk::staged_copy_execute(nullptr, nullptr, nullptr, nullptr, 0, 1, kk::stream_fan{}, nullptr),
      cudaErrorInvalidValue);
}
