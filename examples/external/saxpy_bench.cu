// A complete kernelwatch benchmark of a kernel of this project's own: out = a·x + y.
#include <kernelwatch/kernelwatch.hpp>

#include <vector>

__global__ void saxpy(int n, float a, const float* x, const float* y, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

static void bench_saxpy(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  kernelwatch::device_buffer<float> x(n), y(n), out(n);
  kernelwatch::fill_random(x.data(), n, /*seed=*/1, -1.0F, 1.0F);
  kernelwatch::fill_random(y.data(), n, /*seed=*/2, -1.0F, 1.0F);

  kernelwatch::measure(state)
      .bytes_read(2 * sizeof(float) * n)
      .bytes_written(sizeof(float) * n)
      .flops(2.0 * n)
      .verify([&] {
        const std::vector<float> hx = x.to_host(), hy = y.to_host();
        std::vector<float> expected(n);
        for (int i = 0; i < n; ++i) expected[i] = 2.0F * hx[i] + hy[i];
        // the device may fuse the multiply-add: one rounding apart, hence the tolerance
        return kernelwatch::compare_close(expected, out.to_host(), 1e-6, 1e-6);
      })
      .run([&](cudaStream_t stream) {
        saxpy<<<(n + 255) / 256, 256, 0, stream>>>(n, 2.0F, x.data(), y.data(), out.data());
      });
}
KW_GPU_BENCHMARK("saxpy/float", bench_saxpy)->RangeMultiplier(16)->Range(1 << 20, 1 << 28)->ArgName("n");
