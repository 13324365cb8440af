#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/cuda_context.hpp>
#include <kernelwatch/registration.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace kernelwatch {

benchmark_handle* register_gpu_benchmark(const std::string& name, benchmark_body body) {
  auto guarded = [name, body = std::move(body)](benchmark::State& state) {
    try {
      body(state);
    } catch (const cuda_error& error) {
      if (detail::cuda_context_lost()) {
        std::fflush(stdout);
        std::fprintf(stderr,
                     "kernelwatch: fatal: benchmark %s: %s\n"
                     "kernelwatch: the CUDA context is unusable after this error, so nothing "
                     "measured after it would be valid; stopping the run\n",
                     name.c_str(), error.what());
        std::exit(exit_code_context_lost);
      }
      state.SkipWithError(error.what());
    } catch (const std::exception& error) {
      state.SkipWithError(error.what());
    }
  };
  return benchmark::RegisterBenchmark(name.c_str(), std::move(guarded))
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace kernelwatch
