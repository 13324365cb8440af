#pragma once
// Registering GPU benchmarks with Google Benchmark. Axes (Args, Ranges, ArgNames...) are set
// on the returned handle with Google Benchmark's own API.

#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <type_traits>

namespace kernelwatch {

/// What Google Benchmark's public RegisterBenchmark returns: the handle its axes are set on
/// (benchmark::internal::Benchmark up to 1.8, benchmark::Benchmark since 1.9, which deprecates
/// the internal name), taken from that function so no version's own name is spelled here.
using benchmark_handle = std::remove_pointer_t<decltype(::benchmark::RegisterBenchmark(
    "", static_cast<void (*)(::benchmark::State&)>(nullptr)))>;
using benchmark_body = std::function<void(::benchmark::State&)>;

/// Registers `body` as benchmark `name` ("family/variant[/type]" by convention) timed with
/// manual (GPU) time in microseconds. CUDA failures inside `body` skip the benchmark with the
/// error's text, and the run goes on; an error that leaves the CUDA context unusable (illegal
/// address, ...) ends the process with exit code 3 and a message naming the benchmark.
benchmark_handle* register_gpu_benchmark(const std::string& name, benchmark_body body);

}  // namespace kernelwatch

#define KW_DETAIL_CONCAT_(a, b) a##b
#define KW_DETAIL_CONCAT(a, b) KW_DETAIL_CONCAT_(a, b)

/// At namespace scope: KW_GPU_BENCHMARK("family/variant", function)->Arg(1)->Arg(2);
/// The variadic form lets template arguments with commas through: fn<float, 32>.
#define KW_GPU_BENCHMARK(name, ...)                                                       \
  [[maybe_unused]] static ::kernelwatch::benchmark_handle* KW_DETAIL_CONCAT(              \
      kw_registered_benchmark_, __LINE__) = ::kernelwatch::register_gpu_benchmark(name, __VA_ARGS__)
