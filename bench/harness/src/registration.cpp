#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/cuda_context.hpp>
#include <kernelwatch/detail/instance.hpp>
#include <kernelwatch/detail/json_string.hpp>
#include <kernelwatch/detail/kept_set_ups.hpp>
#include <kernelwatch/detail/main.hpp>
#include <kernelwatch/detail/run_options.hpp>
#include <kernelwatch/detail/sampling_tools.hpp>
#include <kernelwatch/detail/timeline.hpp>
#include <kernelwatch/detail/watchdog.hpp>
#include <kernelwatch/registration.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace kernelwatch {
namespace {

// std::_Exit, not std::exit: exit would run static destructors (NVML's unloading among them)
// while the other-GPU monitor and the watchdog threads still call into them, and could end in
// a crash instead of this exit code. The timeline writes each line through, and the result
// file of an unfinished run is incomplete either way.
[[noreturn]] void stop_on_lost_context(const char* what) {
  std::fflush(stdout);
  std::fprintf(stderr,
               "kernelwatch: fatal: benchmark %s: %s\n"
               "kernelwatch: the CUDA context is unusable after this error, so nothing "
               "measured after it would be valid; stopping the run\n",
               detail::current_instance().c_str(), what);
  std::fflush(stderr);
  std::_Exit(detail::exit_code_context_lost);
}

// A Google Benchmark family whose instances know their own arguments (ArgsCnt() is only
// visible to subclasses), and whose CUDA failures become skipped benchmarks.
class gpu_benchmark_family final : public benchmark_handle {
 public:
  gpu_benchmark_family(const std::string& name, benchmark_body body)
      : benchmark_handle(name.c_str()), name_(name), body_(std::move(body)) {}

  void Run(benchmark::State& state) override {
    const detail::instance_scope scope(instance_key(state));
    // Seen by the hang watchdog while this thread is in the benchmark (watchdog.hpp).
    const detail::progress_scope running(detail::process_progress(), detail::current_instance());
    // run_end is marked by the guard's destructor: after the body's buffers are freed.
    struct timeline_span {
      timeline_span() { detail::timeline_mark("run_start", detail::current_instance()); }
      ~timeline_span() { detail::timeline_mark("run_end", detail::current_instance()); }
      timeline_span(const timeline_span&) = delete;
      timeline_span& operator=(const timeline_span&) = delete;
    } const span;
    try {
      // The current device is per host thread: main() set it on the main thread, where thread
      // 0 runs; a family with ->Threads(n) runs the others on Google Benchmark's own threads.
      if (state.thread_index() != 0) {
        KW_CUDA_CHECK(cudaSetDevice(detail::current_run_options().device));
      }
      // An instance that makes no set_up_once object is timed without the last one's either.
      detail::release_set_ups_of_other_instances();
      body_(state);
    } catch (const std::exception& error) {
      // Any failure, not only a cuda_error: a library such as cuBLAS reports a lost context
      // as its own status, which the benchmark throws as a std::runtime_error.
      skip_with(state, error.what());
    } catch (...) {
      // Not a std::exception (a library's own type, a thrown status code): it went through
      // Google Benchmark to std::terminate, and the whole run ended in an abort.
      skip_with(state, "an exception that is not a std::exception");
    }
  }

 private:
  static void skip_with(benchmark::State& state, const char* what) {
    if (detail::cuda_context_lost()) {
      stop_on_lost_context(what);
    }
    detail::drop_sampling_tools();  // a hold may have timed out: the next benchmark's are new
    state.SkipWithError(what);
  }

  std::string instance_key(const benchmark::State& state) const {
    std::string key = name_;
    for (int i = 0; i < ArgsCnt(); ++i) {
      key += '/' + std::to_string(state.range(static_cast<std::size_t>(i)));
    }
    return key;
  }

  std::string name_;
  benchmark_body body_;
};

}  // namespace

std::string variant_name(const std::string& name, const std::string& value) {
  const std::size_t slot = name.find("{}");
  return slot == std::string::npos ? name + '/' + value
                                   : name.substr(0, slot) + value + name.substr(slot + 2);
}

benchmark_handle* register_gpu_benchmark(const std::string& name, benchmark_body body) {
  // Google Benchmark writes names into its JSON as they are: one byte that is not UTF-8 (a
  // variant named from a path, say) made the whole result file unreadable.
  return benchmark::internal::RegisterBenchmarkInternal(
             new gpu_benchmark_family(detail::valid_utf8(name), std::move(body)))  // owned there
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace kernelwatch
