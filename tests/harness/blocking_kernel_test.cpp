#include <kernelwatch/cuda_event.hpp>
#include <kernelwatch/cuda_stream.hpp>
#include <kernelwatch/detail/blocking_kernel.hpp>

#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace kw = kernelwatch;

TEST(BlockingKernel, HoldsTheStreamUntilReleased) {
  KW_REQUIRE_GPU();
  kw::cuda_stream stream;
  kw::detail::blocking_kernel blocker;
  for (int sample = 0; sample < 3; ++sample) {
    blocker.hold(stream.get());
    kw::cuda_event behind;
    behind.record(stream.get());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(cudaEventQuery(behind.get()), cudaErrorNotReady) << "sample " << sample;
    blocker.release();
    stream.synchronize();
    EXPECT_EQ(cudaEventQuery(behind.get()), cudaSuccess);
  }
  EXPECT_NO_THROW(blocker.check());
}

TEST(BlockingKernel, ReleasedHoldsLetLaterOnesWaitForTheirOwnRelease) {
  KW_REQUIRE_GPU();
  kw::cuda_stream stream;
  kw::detail::blocking_kernel blocker;
  blocker.hold(stream.get());
  blocker.release();  // released before the GPU may even have reached it
  blocker.hold(stream.get());
  kw::cuda_event behind;
  behind.record(stream.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(cudaEventQuery(behind.get()), cudaErrorNotReady);
  blocker.release();
  stream.synchronize();
  EXPECT_NO_THROW(blocker.check());
}

TEST(BlockingKernel, GivesUpAfterItsTimeoutAndSaysWhy) {
  KW_REQUIRE_GPU();
  kw::cuda_stream stream;
  kw::detail::blocking_kernel blocker(0.05);
  blocker.hold(stream.get());
  stream.synchronize();  // never released: a launch that waited for the GPU would do this
  try {
    blocker.check();
    FAIL() << "a timed-out hold must be an error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("0.05 s"), std::string::npos) << message;
    EXPECT_NE(message.find(".host_bound()"), std::string::npos) << message;
    EXPECT_NE(message.find("--kernelwatch_blocking_kernel=false"), std::string::npos) << message;
  }
}
