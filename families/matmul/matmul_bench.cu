// Matrix multiply C = A·B: the Best Practices Guide's three w = 32 kernels (effective
// bandwidth), and a register-blocked SGEMM against cuBLAS's FP32 SGEMM (FLOP/s).
#include "matmul.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <cublas_v2.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;

namespace {

constexpr std::uint64_t seed_a = 20261121;
constexpr std::uint64_t seed_b = 20261122;
constexpr int sampled_entries = 512;  // plus the four corners
constexpr int w = kk::matmul_tile_dim;

// Owner of a cuBLAS handle set to CUBLAS_DEFAULT_MATH: TF32 tensor cores and BF16x9 emulation
// are opt-in math modes, left off, so cublasSgemm is true FP32 on the CUDA cores.
class cublas_handle {
 public:
  cublas_handle() {
    check(cublasCreate(&handle_), "cublasCreate");
    check(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  }
  ~cublas_handle() {
    if (handle_ != nullptr) {
      cublasDestroy(handle_);
    }
  }
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;

  // Row-major C (m×n) = A (m×k) · B (k×n). cuBLAS is column-major: the same memory holds
  // C^T = B^T · A^T, with B^T n×k (ld n) and A^T k×m (ld k).
  void sgemm_row_major(float* c, const float* a, const float* b, int m, int n, int k,
                       cudaStream_t stream) {
    const float alpha = 1.0F;
    const float beta = 0.0F;
    if (stream != stream_) {  // setting a stream also resets the handle's workspace
      check(cublasSetStream(handle_, stream), "cublasSetStream");
      stream_ = stream;
    }
    check(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta, c,
                      n),
          "cublasSgemm");
  }

 private:
  static void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) {
      throw std::runtime_error(std::string(call) + ": " + cublasGetStatusString(status));
    }
  }

  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;  // cuBLAS's default: the legacy stream
};

// For entry e at (row, col) = (where[2e], where[2e + 1]): row `row` of A, column `col` of B
// and C[row][col], one after the other, 2k + 1 floats an entry.
__global__ void gather_entries(const float* a, const float* b, const float* c, int n, int k,
                               const int* where, float* out) {
  const int row = where[2 * blockIdx.x];
  const int col = where[2 * blockIdx.x + 1];
  float* entry = out + blockIdx.x * (2 * static_cast<std::size_t>(k) + 1);
  for (int p = static_cast<int>(threadIdx.x); p < k; p += static_cast<int>(blockDim.x)) {
    entry[p] = a[static_cast<std::size_t>(row) * k + p];
    entry[k + p] = b[static_cast<std::size_t>(p) * n + col];
  }
  if (threadIdx.x == 0) {
    entry[2 * k] = c[static_cast<std::size_t>(row) * n + col];
  }
}

// A (m×k) and B (k×n) uniform in [-1, 1), C poisoned with NaN.
struct problem {
  int m;
  int n;
  int k;
  kw::device_buffer<float> a;
  kw::device_buffer<float> b;
  kw::device_buffer<float> c;

  problem(int rows, int cols, int inner)
      : m(rows),
        n(cols),
        k(inner),
        a(static_cast<std::size_t>(rows) * inner),
        b(static_cast<std::size_t>(inner) * cols),
        c(static_cast<std::size_t>(rows) * cols) {
    kw::fill_random(a.data(), a.size(), seed_a, -1.0F, 1.0F);
    kw::fill_random(b.data(), b.size(), seed_b, -1.0F, 1.0F);
    c.fill_bytes(0xFF);
  }

  // Times `launch`, which computes C from A and B. The guide's effective bandwidth counts A
  // and B read once and C written once.
  void measure(benchmark::State& state, const kw::launch_function& launch) const {
    const auto elements = [](int rows, int cols) {
      return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    };
    kw::measure(state)
        .bytes_read((elements(m, k) + elements(k, n)) * sizeof(float))
        .bytes_written(elements(m, n) * sizeof(float))
        .flops(2.0 * m * n * k)
        .verify([this] { return check(); })
        .run(launch);
  }

  // Every entry written (no NaN poison left), and the four corners plus sampled_entries random
  // entries within matmul_tolerance of the double-precision dot product. The whole product on
  // the host would cost seconds at these sizes; the samples cost milliseconds. Both on as little
  // of the data as they need: copying the three 1 GiB matrices back cost about 1 s a check.
  [[nodiscard]] kw::check_result check() const {
    // C against itself within 0: |x - x| is 0 for a finite x and NaN for NaN or infinity.
    if (kw::check_result written = kw::compare_close_on_device(c.data(), c.data(), c.size(), 0.0);
        !written) {
      return kw::check_result::fail("C has entries that are not finite (never written?): " +
                                    written.message);
    }
    std::vector<std::pair<int, int>> entries = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
    for (int s = 0; s < sampled_entries; ++s) {
      const std::uint64_t bits = kw::mix64(seed_a ^ static_cast<std::uint64_t>(s));
      entries.emplace_back(static_cast<int>((bits >> 32U) % static_cast<std::uint64_t>(m)),
                           static_cast<int>((bits & 0xFFFFFFFFU) % static_cast<std::uint64_t>(n)));
    }
    const double tolerance = kk::matmul_tolerance<float>(k, 1.0, 1.0);
    // Each entry's row of A, column of B and value of C, gathered on the GPU.
    const std::size_t count = entries.size();
    std::vector<int> where;
    for (const auto& [row, col] : entries) {
      where.push_back(row);
      where.push_back(col);
    }
    kw::device_buffer<int> device_where(where.size());
    device_where.copy_from_host(where);
    kw::device_buffer<float> gathered(count * (2 * static_cast<std::size_t>(k) + 1));
    gather_entries<<<static_cast<unsigned>(count), 256>>>(a.data(), b.data(), c.data(), n, k,
                                                           device_where.data(), gathered.data());
    KW_CUDA_CHECK_LAUNCH();
    const std::vector<float> host = gathered.to_host();
    for (std::size_t e = 0; e < count; ++e) {
      const auto [row, col] = entries[e];
      const float* a_row = host.data() + e * (2 * static_cast<std::size_t>(k) + 1);
      const float* b_col = a_row + k;
      // The row of A and the column of B as a 1 x k times k x 1 product.
      const double expected = kk::matmul_reference_entry(a_row, b_col, 1, k, 0, 0);
      const double actual = b_col[k];
      if (!(std::fabs(actual - expected) <= tolerance)) {
        return kw::check_result::fail(
            "C[" + std::to_string(row) + "][" + std::to_string(col) + "] = " +
            std::to_string(actual) + ", expected " + std::to_string(expected) + " (tolerance " +
            std::to_string(tolerance) + ")");
      }
    }
    return kw::check_result::pass();
  }
};

using guide_launcher = cudaError_t (*)(float*, const float*, const float*, int, int,
                                       cudaStream_t);

void guide_multiply(benchmark::State& state, guide_launcher launcher) {
  problem p(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), w);
  p.measure(state, [&](cudaStream_t stream) {
    KW_CUDA_CHECK(launcher(p.c.data(), p.a.data(), p.b.data(), p.m, p.n, stream));
  });
}

void sgemm_tiled(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  problem p(size, size, size);
  p.measure(state, [&](cudaStream_t stream) {
    KW_CUDA_CHECK(kk::sgemm_tiled(p.c.data(), p.a.data(), p.b.data(), p.m, p.n, p.k, stream));
  });
}

// The bar for sgemm_tiled. Checked like the kernels: a reference that had fallen to TF32
// (≈ 1e-2 off at k = 4096) would fail instead of setting the bar.
void cublas_sgemm(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  if (size == 4096) {
    kw::mark_reference(state);  // the largest, the bar sgemm_tiled is read against
  }
  problem p(size, size, size);
  cublas_handle cublas;
  p.measure(state, [&](cudaStream_t stream) {
    cublas.sgemm_row_major(p.c.data(), p.a.data(), p.b.data(), p.m, p.n, p.k, stream);
  });
}

}  // namespace

// m = n ≥ 8192 with w = 32: ≥ 256 MiB of C, ≥ 100 µs per launch on an H100/H200.
KW_GPU_BENCHMARK_VARIANTS("matmul",
                          std::vector<kw::named<guide_launcher>>{
                              {"simple", kk::simple_multiply<float>},
                              {"coalesced_a", kk::coalesced_multiply<float>},
                              {"shared_ab", kk::shared_ab_multiply<float>}},
                          guide_multiply)
    .apply([](kw::benchmark_handle* b) {
      b->Args({8192, 8192})->Args({16384, 16384})->ArgNames({"m", "n"});
    });
KW_GPU_BENCHMARK("matmul/sgemm_tiled", sgemm_tiled)
    ->Arg(1024)->Arg(2048)->Arg(4096)->ArgName("size");
KW_GPU_BENCHMARK("matmul/cublas_sgemm", cublas_sgemm)
    ->Arg(1024)->Arg(2048)->Arg(4096)->ArgName("size");
