#include <kernelwatch/cuda_check.hpp>
#include <kernelwatch/detail/context.hpp>
#include <kernelwatch/detail/copy_ceiling.hpp>
#include <kernelwatch/detail/disturbance_monitor.hpp>
#include <kernelwatch/detail/fingerprint.hpp>
#include <kernelwatch/detail/kept_set_ups.hpp>
#include <kernelwatch/detail/sampling_tools.hpp>
#include <kernelwatch/detail/main.hpp>
#include <kernelwatch/detail/run_options.hpp>
#include <kernelwatch/detail/timeline.hpp>
#include <kernelwatch/detail/watchdog.hpp>
#include <kernelwatch/device_info.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kernelwatch::detail {
namespace {

// Selects the device and writes the context; returns an exit code, 0 when the run can go on.
int prepare_device(const run_options& options) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "kernelwatch: no CUDA GPU is visible (%s); nothing to measure\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return exit_code_no_gpu;
  }
  if (options.device >= devices) {
    std::fprintf(stderr, "kernelwatch: error: --kernelwatch_device=%d, but only %d GPU(s)\n",
                 options.device, devices);
    return exit_code_bad_arguments;
  }
  try {
    KW_CUDA_CHECK(cudaSetDevice(options.device));
    KW_CUDA_CHECK(cudaFree(nullptr));  // the context now, so that its cost is a mark of its own
    timeline_mark("context");
    add_to_benchmark_context(make_context(current_device_info(), this_build(), options));
    add_to_benchmark_context(make_host_fingerprint(read_host_facts()));
    add_to_benchmark_context(
        make_gpu_fingerprint(read_gpu_facts(current_device_info())));
    timeline_mark("fingerprints");
    // Measured before any benchmark, so every ceiling_fraction of the run shares one ceiling.
    add_to_benchmark_context({{"kernelwatch_copy_ceiling_bytes_per_second",
                               std::to_string(std::llround(current_copy_ceiling()))}});
    timeline_mark("copy_ceiling");
  } catch (const cuda_error& error) {
    std::fprintf(stderr, "kernelwatch: cannot use GPU %d: %s\n", options.device, error.what());
    return exit_code_no_gpu;
  }
  return 0;
}

}  // namespace

int benchmark_main(int argc, char** argv) {
  timeline_start(argc, argv);
  run_options options;
  try {
    options = parse_run_options(argc, argv);
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "kernelwatch: error: %s\n", error.what());
    return exit_code_bad_arguments;
  }
  if (options.help) {
    std::fputs(run_options_help().c_str(), stdout);
  }
  if (options.min_time_dropped) {
    std::fputs("kernelwatch: note: --benchmark_min_time is ignored: each repetition samples until "
               "--kernelwatch_noise_target or --kernelwatch_max_time\n",
               stderr);
  }
  std::vector<char*> arguments(argv, argv + argc);
  std::string min_time = minimal_min_time_flag();
  arguments.push_back(min_time.data());
  int count = static_cast<int>(arguments.size());
  arguments.push_back(nullptr);
  benchmark::Initialize(&count, arguments.data());  // prints its own help and exits on --help
  if (benchmark::ReportUnrecognizedArguments(count, arguments.data())) {
    return exit_code_bad_arguments;
  }
  set_current_run_options(options);
  if (!options.list_only) {
    if (const int code = prepare_device(options); code != 0) {
      return code;
    }
  }
  {
    // Watches the host's other GPUs, and other processes on this one, while the benchmarks run
    // (disturbance_monitor.hpp).
    std::optional<disturbance_monitor> monitor;
    // Ends the process when a benchmark hangs (watchdog.hpp).
    std::optional<watchdog> hang_watch;
    if (!options.list_only) {
      monitor.emplace(current_device_info().uuid);
      if (options.hang_timeout > 0.0) {
        hang_watch.emplace(process_progress(), options.hang_timeout);
      }
    }
    benchmark::RunSpecifiedBenchmarks();
    drop_kept_set_ups();  // every set_up_once object, while CUDA is up
    drop_sampling_tools();
    timeline_mark("benchmarks_done");  // the results are written
  }
  benchmark::Shutdown();
  timeline_mark("end");
  return 0;
}

}  // namespace kernelwatch::detail
