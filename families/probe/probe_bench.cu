// Probes of the harness: an empty kernel's time is the launch gap between the start event and
// the stop event, with nothing of its own. Run with --kernelwatch_blocking_kernel=false and
// =true: the difference is host submission latency that reached the timed region.
#include "probe.cuh"
#include <kernelwatch/kernelwatch.hpp>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

void empty_kernel(benchmark::State& state) {
  kw::measure(state).run(
      [](cudaStream_t stream) { KW_CUDA_CHECK(kk::launch_empty(stream)); });
}

}  // namespace

KW_GPU_BENCHMARK("probe/empty_kernel", empty_kernel);
