// The harness's promises, checked through Google Benchmark itself: CUDA failures skip a
// benchmark and the run goes on; a wrong result is an error, never a time; a sticky error
// stops the process with exit code 3.
#include <kernelwatch/detail/copy_ceiling.hpp>
#include <kernelwatch/detail/main.hpp>
#include <kernelwatch/detail/run_options.hpp>
#include <kernelwatch/kernelwatch.hpp>

#include "../support/capture_reporter.hpp"
#include "../support/gpu_test.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <vector>

namespace kw = kernelwatch;
using kernelwatch::testing::error_text;
using kernelwatch::testing::run_benchmarks;

namespace {

constexpr std::size_t elements = 1 << 20;

__global__ void write_far_out_of_bounds(float* data) { data[(1ULL << 40) + threadIdx.x] = 1.0F; }

void allocation_failure(benchmark::State& state) {
  kw::device_buffer<char> impossible(std::size_t{1} << 52);  // 4 PiB
  kw::measure(state).run([](cudaStream_t) {});
}

void good_copy(benchmark::State& state) {
  kw::device_buffer<float> in(elements);
  kw::device_buffer<float> out(elements);
  kw::fill_random(in.data(), elements, 1, -1.0F, 1.0F);
  kw::measure(state)
      .bytes_read(elements * sizeof(float))
      .bytes_written(elements * sizeof(float))
      .elements(elements)
      .verify([&] { return kw::compare_exact(in.to_host(), out.to_host()); })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), elements * sizeof(float),
                                      cudaMemcpyDeviceToDevice, stream));
      });
}

void wrong_result(benchmark::State& state) {
  kw::device_buffer<float> out(elements);
  kw::measure(state)
      .bytes_written(elements * sizeof(float))
      .verify([&] { return kw::compare_exact(std::vector<float>(elements, 2.0F), out.to_host()); })
      .run([&](cudaStream_t stream) {
        kw::fill_random(out.data(), elements, 1, -1.0F, 1.0F, stream);
      });
}

void illegal_address(benchmark::State& state) {
  kw::device_buffer<float> data(32);
  kw::measure(state).run([&](cudaStream_t stream) {
    write_far_out_of_bounds<<<1, 32, 0, stream>>>(data.data());
  });
}

void sampled_copy(benchmark::State& state) {
  kw::device_buffer<float> in(elements);
  kw::device_buffer<float> out(elements);
  kw::measure(state)
      .bytes_read(elements * sizeof(float))
      .bytes_written(elements * sizeof(float))
      .min_samples(40)
      .max_time(30.0)  // the minimum count, not the budget, must end this one
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), elements * sizeof(float),
                                      cudaMemcpyDeviceToDevice, stream));
      });
}

// The host waits for the GPU inside the timed region (a pageable download): behind a blocking
// kernel this would deadlock, so it must be declared host-bound.
void host_bound_download(benchmark::State& state) {
  kw::device_buffer<float> in(elements);
  std::vector<float> out(elements);
  kw::measure(state)
      .host_bound()
      .cache(kw::cache_mode::hot)
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(cudaMemcpyAsync(out.data(), in.data(), elements * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream));
      });
}

int counted_calls = 0;
int counted_verifications = 0;
int counted_set_ups = 0;

struct counted_set_up {
  counted_set_up() : out(256) { ++counted_set_ups; }
  kw::device_buffer<float> out;
};

void counted_verification(benchmark::State& state) {
  ++counted_calls;
  kw::device_buffer<float>& out = kw::set_up_once<counted_set_up>().out;
  kw::measure(state)
      .verify([&] {
        ++counted_verifications;
        return kw::check_result::pass();
      })
      .run([&](cudaStream_t stream) {
        KW_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.size_bytes(), stream));
      });
}

// A cuBLAS-style failure: the library's own status, thrown as a std::runtime_error, after the
// kernel before it left a sticky error (no KW_CUDA_CHECK in between).
void library_error_after_illegal_address(benchmark::State& /*state*/) {
  kw::device_buffer<float> data(32);
  write_far_out_of_bounds<<<1, 32>>>(data.data());
  (void)cudaDeviceSynchronize();
  throw std::runtime_error("cublasSgemm failed: CUBLAS_STATUS_EXECUTION_FAILED");
}

// set_up_once objects alive while each instance runs; no CUDA, so this runs without a GPU.
int set_up_once_alive = 0;
int alive_while_without_set_up = -1;

struct set_up_once_tracked {
  set_up_once_tracked() { ++set_up_once_alive; }
  ~set_up_once_tracked() { --set_up_once_alive; }
  set_up_once_tracked(const set_up_once_tracked&) = delete;
  set_up_once_tracked& operator=(const set_up_once_tracked&) = delete;
};

void makes_a_set_up(benchmark::State& state) {
  kw::set_up_once<set_up_once_tracked>();
  for (auto _ : state) {
  }
}

void makes_no_set_up(benchmark::State& state) {
  alive_while_without_set_up = set_up_once_alive;
  for (auto _ : state) {
  }
}

std::atomic<int> devices_seen_wrong{0};
std::atomic<int> threads_run{0};

// The current device is per host thread: Google Benchmark runs ->Threads(n) bodies on threads
// of its own, which main()'s cudaSetDevice never reached.
void device_on_each_thread(benchmark::State& state) {
  int device = -1;
  KW_CUDA_CHECK(cudaGetDevice(&device));
  if (device != kw::detail::current_run_options().device) {
    ++devices_seen_wrong;
  }
  ++threads_run;
  for (auto _ : state) {
  }
}

// A library that reports failure with a type of its own, not a std::exception. No CUDA.
struct library_status {
  int code;
};

void throws_a_library_status(benchmark::State& state) {
  if (state.max_iterations > 0) {
    throw library_status{7};
  }
  for (auto _ : state) {
  }
}

// A benchmark author's sampling overrides, one bad value per instance (the last: the extremes of
// the flags' ranges, all good). No CUDA: runs on any machine.
void sampling_override(benchmark::State& state) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  kw::measurement measurement = kw::measure(state);
  switch (state.range(0)) {
    case 0: measurement.max_time(0.0); break;
    case 1: measurement.max_time(-1.0); break;
    case 2: measurement.max_time(nan); break;
    case 3: measurement.max_time(inf); break;
    case 4: measurement.min_samples(0); break;
    case 5: measurement.min_samples(-3); break;
    case 6: measurement.noise_target(1.5); break;
    case 7: measurement.noise_target(-inf); break;
    case 8: measurement.noise_target(nan); break;
    default: measurement.max_time(3600.0).min_samples(1000000).noise_target(0.0).noise_target(1.0);
  }
  for (auto _ : state) {
  }
}

}  // namespace

KW_GPU_BENCHMARK("registration_test/sampling_override", sampling_override)
    ->DenseRange(0, 9)->Iterations(1);
KW_GPU_BENCHMARK("registration_test/throws_a_library_status", throws_a_library_status)
    ->Iterations(1);
KW_GPU_BENCHMARK("registration_test/device_on_each_thread", device_on_each_thread)
    ->Threads(2)->Iterations(1);
KW_GPU_BENCHMARK("registration_test/counted_verification", counted_verification)
    ->Arg(1)->Arg(2)->Repetitions(3)->Iterations(1);
KW_GPU_BENCHMARK("registration_test/allocation_failure", allocation_failure)->Iterations(3);
KW_GPU_BENCHMARK("registration_test/good_copy", good_copy)->Iterations(5);
KW_GPU_BENCHMARK("registration_test/wrong_result", wrong_result)->Iterations(5);
KW_GPU_BENCHMARK("registration_test/illegal_address", illegal_address)->Iterations(1);
KW_GPU_BENCHMARK("registration_test/library_error_after_illegal_address",
                 library_error_after_illegal_address)
    ->Iterations(1);
KW_GPU_BENCHMARK("registration_test/set_up/makes_one", makes_a_set_up)->Iterations(1);
KW_GPU_BENCHMARK("registration_test/set_up/makes_none", makes_no_set_up)->Iterations(1);
// Iterations(1): what kernelwatch::main gets with its minimal --benchmark_min_time.
KW_GPU_BENCHMARK("registration_test/sampled_copy", sampled_copy)->Iterations(1);
KW_GPU_BENCHMARK("registration_test/host_bound_download", host_bound_download)->Iterations(1);

TEST(GpuBenchmark, CudaFailureSkipsThatBenchmarkWithTheErrorAndTheRunGoesOn) {
  // Runs on any machine: without a GPU both benchmarks fail, and both are still reported.
  const auto runs = run_benchmarks("^registration_test/(allocation_failure|good_copy)");
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_NE(error_text(runs[0]).find("cudaMalloc"), std::string::npos) << error_text(runs[0]);
  EXPECT_EQ(runs[1].run_name.function_name, "registration_test/good_copy");
}

// A per-benchmark override took any value: max_time(0) sampled once and reported a noise of 0,
// a NaN or infinite one made the deadline an undefined conversion. It is refused as the flag
// is, in the flag's words, naming the benchmark, and the benchmark is skipped with that error.
TEST(GpuBenchmark, BadSamplingOverrideIsRefusedInTheFlagsWordsNamingTheBenchmark) {
  const auto runs = run_benchmarks("^registration_test/sampling_override/");
  ASSERT_EQ(runs.size(), 10U);
  const std::string name = "benchmark registration_test/sampling_override/";
  const std::string max_time = ": max_time() must be a number above 0, at most 3600, not '";
  const std::string min_samples = ": min_samples() must be a whole number from 1 to 1e+06, not '";
  const std::string noise_target = ": noise_target() must be a number from 0 to 1, not '";
  EXPECT_EQ(error_text(runs[0]), name + "0" + max_time + "0'");
  EXPECT_EQ(error_text(runs[1]), name + "1" + max_time + "-1'");
  EXPECT_EQ(error_text(runs[2]), name + "2" + max_time + "nan'");
  EXPECT_EQ(error_text(runs[3]), name + "3" + max_time + "inf'");
  EXPECT_EQ(error_text(runs[4]), name + "4" + min_samples + "0'");
  EXPECT_EQ(error_text(runs[5]), name + "5" + min_samples + "-3'");
  EXPECT_EQ(error_text(runs[6]), name + "6" + noise_target + "1.5'");
  EXPECT_EQ(error_text(runs[7]), name + "7" + noise_target + "-inf'");
  EXPECT_EQ(error_text(runs[8]), name + "8" + noise_target + "nan'");
  EXPECT_EQ(error_text(runs[9]), "");
}

TEST(GpuBenchmark, GoodKernelReportsGpuTimeAndCounters) {
  KW_REQUIRE_GPU();
  const auto runs = run_benchmarks("^registration_test/good_copy");
  ASSERT_EQ(runs.size(), 1U);
  const auto& run = runs[0];
  ASSERT_EQ(error_text(run), "");
  EXPECT_EQ(run.iterations, 5);
  EXPECT_GT(run.real_accumulated_time, 0.0);
  const double bandwidth = run.counters.at("bytes_per_second").value;
  const double peak = kw::current_device_info().peak_bandwidth_bytes_per_second();
  // The rate counter, once divided by the manual time, must agree with peak_fraction.
  const double seconds = run.real_accumulated_time;
  const double bytes = 2.0 * elements * sizeof(float) * 5;
  EXPECT_NEAR(bytes / seconds / peak, run.counters.at("peak_fraction").value, 1e-6);
  EXPECT_GT(bandwidth, 0.0);
  EXPECT_GT(run.counters.at("elements_per_second").value, 0.0);
}

TEST(GpuBenchmark, SamplesAdaptivelyInOneIterationAndSaysHow) {
  KW_REQUIRE_GPU();
  const auto runs = run_benchmarks("^registration_test/sampled_copy");
  ASSERT_EQ(runs.size(), 1U);
  const auto& run = runs[0];
  ASSERT_EQ(error_text(run), "");
  EXPECT_EQ(run.iterations, 1);  // the harness's sampling, not Google Benchmark's sizing
  const auto& counters = run.counters;
  EXPECT_GE(counters.at("samples").value + counters.at("samples_throttled").value, 40.0);
  EXPECT_GE(counters.at("noise").value, 0.0);
  EXPECT_GE(counters.at("sample_cv").value, 0.0);
  const double clock_mhz = counters.at("sm_clock_mhz").value;
  EXPECT_GT(clock_mhz, 0.0);
  EXPECT_LT(clock_mhz, 1.5e-3 * kw::current_device_info().sm_clock_khz);
  // ceiling_fraction is the same bandwidth over the run's measured copy ceiling.
  const double bytes_per_second = 2.0 * elements * sizeof(float) / run.real_accumulated_time;
  EXPECT_NEAR(counters.at("ceiling_fraction").value,
              bytes_per_second / kw::detail::current_copy_ceiling(), 1e-9);
  EXPECT_GT(kw::detail::current_copy_ceiling(), 0.0);
}

TEST(GpuBenchmark, HostBoundBenchmarkIsNeverHeldAndSaysSoOnItsRow) {
  KW_REQUIRE_GPU();
  ASSERT_TRUE(kw::detail::current_run_options().blocking_kernel);  // the default: on
  const auto runs = run_benchmarks("^registration_test/(sampled_copy|host_bound_download)");
  ASSERT_EQ(runs.size(), 2U);  // in registration order
  ASSERT_EQ(runs[1].run_name.function_name, "registration_test/host_bound_download");
  ASSERT_EQ(error_text(runs[1]), "");  // held behind a blocking kernel, it would time out
  EXPECT_EQ(runs[1].counters.at("host_bound").value, 1.0);
  EXPECT_GT(runs[1].counters.at("samples").value, 0.0);
  EXPECT_EQ(runs[0].counters.count("host_bound"), 0U) << "only declared benchmarks are";
}

TEST(GpuBenchmark, WrongResultIsAnErrorThatSaysWhatDifferedAndNeverATime) {
  KW_REQUIRE_GPU();
  const auto runs = run_benchmarks("^registration_test/wrong_result");
  ASSERT_EQ(runs.size(), 1U);
  const std::string error = error_text(runs[0]);
  EXPECT_EQ(error.rfind("wrong result: ", 0), 0U) << error;
  EXPECT_NE(error.find("elements differ; first at index 0: expected 2, got"), std::string::npos)
      << error;
  EXPECT_EQ(runs[0].iterations, 0);
  EXPECT_EQ(runs[0].counters.count("bytes_per_second"), 0U);
}

TEST(GpuBenchmark, VerifiesAndSetsUpEachInstanceOnceHoweverOftenItIsCalled) {
  KW_REQUIRE_GPU();
  const auto runs = run_benchmarks("^registration_test/counted_verification");
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(counted_calls, 6);  // 2 instances x 3 repetitions, one iteration each
  EXPECT_EQ(counted_verifications, 2);
  EXPECT_EQ(counted_set_ups, 2) << "set_up_once: once per instance, not per repetition";
}

TEST(GpuBenchmark, EveryThreadOfABenchmarkUsesTheChosenDevice) {
  KW_REQUIRE_GPU();
  int devices = 0;
  KW_CUDA_CHECK(cudaGetDeviceCount(&devices));
  // The last GPU: on a host of several (the two-GPU machine) not the worker threads' default.
  kw::detail::run_options options = kw::detail::current_run_options();
  const kw::detail::run_options saved = options;
  options.device = devices - 1;
  kw::detail::set_current_run_options(options);
  KW_CUDA_CHECK(cudaSetDevice(options.device));
  const auto runs = run_benchmarks("^registration_test/device_on_each_thread");
  kw::detail::set_current_run_options(saved);
  KW_CUDA_CHECK(cudaSetDevice(saved.device));
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(threads_run.load(), 2);
  EXPECT_EQ(devices_seen_wrong.load(), 0);
}

TEST(GpuBenchmark, AnInstanceWithoutSetUpIsTimedWithoutTheLastInstancesSetUp) {
  // Runs on any machine: neither benchmark touches CUDA.
  const auto runs = run_benchmarks("^registration_test/set_up/");
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(alive_while_without_set_up, 0)
      << "makes_one's set_up_once object was still allocated while makes_none ran";
}

TEST(GpuBenchmarkDeathTest, AnyFailureOnALostContextStopsTheRunWithExitCode3) {
  KW_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_benchmarks("^registration_test/library_error_after_illegal_address"),
              ::testing::ExitedWithCode(kw::detail::exit_code_context_lost),
              "library_error_after_illegal_address: cublasSgemm failed.*\n.*CUDA context is "
              "unusable");
}

TEST(GpuBenchmarkDeathTest, StickyErrorStopsTheRunWithExitCode3) {
  KW_REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no inherited CUDA state
  EXPECT_EXIT(run_benchmarks("^registration_test/illegal_address"),
              ::testing::ExitedWithCode(kw::detail::exit_code_context_lost),
              "registration_test/illegal_address: .*cudaErrorIllegalAddress.*\n.*CUDA context is "
              "unusable");
}

// Anything thrown that is not a std::exception went through Google Benchmark to
// std::terminate: the run ended in an abort (exit 134), its results unwritten. Runs on any
// machine; a child process, so that the abort fails this test instead of ending the binary.
TEST(GpuBenchmarkDeathTest, AnExceptionOfAnyTypeSkipsThatBenchmarkAndTheRunGoesOn) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const auto runs =
            run_benchmarks("^registration_test/(throws_a_library_status|set_up/makes_none)");
        const bool reported =
            runs.size() == 2 &&
            error_text(runs[0]) == "an exception that is not a std::exception" &&
            error_text(runs[1]).empty();
        std::fputs(reported ? "skipped, and the run went on\n" : "not reported\n", stderr);
        std::_Exit(reported ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "skipped, and the run went on");
}
