// Reduction and dot product: the block-level reductions of the classic lesson, the vectorized
// single-pass reduction, CUB, and the read-only streaming kernel that bounds them all, in one run.
//
// Instances (float and double each): vectorized, CUB and streaming at 1 Mi, 64 Mi and 1 Gi
// elements (launch-bound to bandwidth-bound); the four multi-pass teaching variants at 64 Mi
// only, where the block reduction's cost is not hidden behind launch latency (and because a
// 1 Mi instance costs ~5 s of wall time: each few-microsecond sample follows an L2 flush);
// the dot product (sequential = the seed's shared-cache tree, vectorized, CUB, streaming over
// both arrays) at 64 Mi. Every sample is cold (L2 flushed), so 1 Mi elements (4-8 MiB, inside
// L2) still come from DRAM.
#include "reduction.cuh"
#include <kernelwatch/kernelwatch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace kw = kernelwatch;
namespace kk = kernelwatch::kernels;
using variant = kk::reduction_variant;

namespace {

constexpr std::uint64_t seed_a = 20261121;
constexpr std::uint64_t seed_b = seed_a + 1;  // the dot product's second array
constexpr std::int64_t teaching_n = std::int64_t{1} << 26;
constexpr std::int64_t sweep_n[] = {std::int64_t{1} << 20, std::int64_t{1} << 26,
                                    std::int64_t{1} << 30};

enum class op { sum, dot };

// Values in [0, 1): all terms non-negative, so the sum is well conditioned and a relative
// tolerance is meaningful.
template <typename T>
T value(std::uint64_t seed, std::size_t i) {
  return kw::random_value<T>(seed, i, T(0), T(1));
}

struct kahan {
  double sum = 0.0;
  double carry = 0.0;
  void add(double x) {
    const double y = x - carry;
    const double t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
};

// The sum of term(i) over [0, n) in double, regenerating the inputs instead of copying them
// back: plain sums over blocks of 256 non-negative terms (relative error < 256 eps), the block
// sums compensated (Kahan) per chunk, chunks spread over the host's cores and combined in a
// fixed order, so the value does not depend on the core count. 1 Gi terms: ~0.2 s on 16 cores.
template <typename Term>
double host_sum(std::size_t n, const Term& term) {
  constexpr std::size_t chunks = 256;
  constexpr std::size_t block = 256;
  std::vector<double> chunk_sums(chunks, 0.0);
  const auto sum_chunk = [&](std::size_t c) {
    const std::size_t last = n / chunks * (c + 1) + (c + 1 == chunks ? n % chunks : 0);
    kahan total;
    for (std::size_t first = n / chunks * c; first < last; first += block) {
      const std::size_t end = std::min(last, first + block);
      double partial = 0.0;
      for (std::size_t i = first; i < end; ++i) {
        partial += term(i);
      }
      total.add(partial);
    }
    chunk_sums[c] = total.sum;
  };
  // Each worker takes the next chunk: a thread that cannot be started (a container's limit)
  // leaves more chunks to the others, and this thread works too.
  std::atomic<std::size_t> next_chunk{0};
  const auto work = [&] {
    for (std::size_t c = next_chunk++; c < chunks; c = next_chunk++) {
      sum_chunk(c);
    }
  };
  const std::size_t workers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, chunks);
  std::vector<std::thread> threads;
  try {
    for (std::size_t w = 1; w < workers; ++w) {
      threads.emplace_back(work);
    }
  } catch (const std::system_error&) {
  }
  work();
  for (std::thread& thread : threads) {
    thread.join();
  }
  kahan total;
  for (const double partial : chunk_sums) {
    total.add(partial);
  }
  return total.sum;
}

// Computed once per (operation, type, n) and process: several variants check against it.
template <typename T>
double host_reference(op operation, std::size_t n) {
  static std::map<std::pair<op, std::size_t>, double> cache;
  const auto key = std::make_pair(operation, n);
  if (const auto found = cache.find(key); found != cache.end()) {
    return found->second;
  }
  const double sum =
      operation == op::sum
          ? host_sum(n, [](std::size_t i) { return static_cast<double>(value<T>(seed_a, i)); })
          : host_sum(n, [](std::size_t i) {
              return static_cast<double>(value<T>(seed_a, i)) *
                     static_cast<double>(value<T>(seed_b, i));
            });
  cache.emplace(key, sum);
  return sum;
}

// Made once per instance and process (set_up_once): the 1 Gi-element inputs' allocation,
// fill and free were most of the family's 2 s of set-up and tear-down on an H100.
template <typename T>
struct inputs {
  kw::device_buffer<T> a;
  kw::device_buffer<T> b;  // empty for the sum

  inputs(op operation, std::size_t n) : a(n), b(operation == op::dot ? n : 0) {
    kw::fill_random(a.data(), n, seed_a, T(0), T(1));
    if (operation == op::dot) {
      kw::fill_random(b.data(), n, seed_b, T(0), T(1));
    }
  }
};

// bytes_read: every input element once, the algorithmic minimum (the multi-pass variants'
// partials, about n / 255 values written and read again, are not counted: 0.8 %).
template <typename T>
kw::measurement declare_work(benchmark::State& state, op operation, std::size_t n) {
  kw::measurement measurement(state);
  measurement.bytes_read(n * sizeof(T) * (operation == op::dot ? 2 : 1)).elements(n);
  return measurement;
}

template <typename T>
void reduction(benchmark::State& state, op operation, variant v) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto& in = kw::set_up_once<inputs<T>>(operation, n);
  kw::device_buffer<T> result(1);
  result.fill_bytes(0xFF);  // NaN: a result never written cannot pass
  // Scratch sized and allocated once, outside the timing.
  std::size_t workspace_bytes = 0;
  KW_CUDA_CHECK(operation == op::sum
                    ? kk::reduce_sum_workspace_bytes<T>(v, n, &workspace_bytes)
                    : kk::reduce_dot_workspace_bytes<T>(v, n, &workspace_bytes));
  kw::device_buffer<unsigned char> workspace(workspace_bytes);

  declare_work<T>(state, operation, n)
      .verify([&] {
        const double expected = host_reference<T>(operation, n);
        const double actual = static_cast<double>(result.to_host()[0]);
        const double tolerance = kk::reduction_relative_error_bound<T>;
        kw::check_result check = kw::compare_close(&expected, &actual, 1, tolerance);
        if (!check) {
          check.message += " (relative tolerance " + std::to_string(tolerance) + ")";
        }
        return check;
      })
      .run([&](cudaStream_t stream) {
        // Each call is the whole reduction: every pass, and for vectorized the
        // cudaMemsetAsync that zeroes the atomic accumulator.
        KW_CUDA_CHECK(operation == op::sum
                          ? kk::reduce_sum(v, result.data(), in.a.data(), n, workspace.data(),
                                           workspace_bytes, stream)
                          : kk::reduce_dot(v, result.data(), in.a.data(), in.b.data(), n,
                                           workspace.data(), workspace_bytes, stream));
      });
}

// Element i of a device array, for checks (synchronous).
template <typename T>
void set_element(T* data, std::size_t i, T value) {
  KW_CUDA_CHECK(cudaDeviceSynchronize());
  KW_CUDA_CHECK(cudaMemcpy(data + i, &value, sizeof(T), cudaMemcpyHostToDevice));
  KW_CUDA_CHECK(cudaDeviceSynchronize());
}

// The ceiling: the same arrays read with the vectorized reduction's loads and grid, no
// arithmetic. The timed sentinel (a NaN) never occurs in [0, 1), so nothing is ever stored.
// The check also plants a sentinel in the last element of the last array read and looks for
// it: a kernel that stops short of the end, or loads nothing, fails.
template <typename T>
void streaming(benchmark::State& state, op operation) {
  const auto n = static_cast<std::size_t>(state.range(0));
  if (operation == op::sum && std::is_same_v<T, float> && n == teaching_n) {
    kw::mark_reference(state);  // the ceiling at the size every variant is measured at
  }
  auto& in = kw::set_up_once<inputs<T>>(operation, n);
  kw::device_buffer<unsigned long long> first_match(1);
  first_match.fill_bytes(0xFF);  // "no match"
  const T sentinel = std::numeric_limits<T>::quiet_NaN();
  const auto read = [&](T looked_for, cudaStream_t stream) {
    KW_CUDA_CHECK(kk::streaming_read(in.a.data(), operation == op::dot ? in.b.data() : nullptr,
                                     n, looked_for, first_match.data(), stream));
  };

  declare_work<T>(state, operation, n)
      .verify([&] {
        const unsigned long long found = first_match.to_host()[0];
        if (found != ~0ULL) {
          return kw::check_result::fail("the sentinel was reported at index " +
                                        std::to_string(found) + ", but no input element is a NaN");
        }
        T* last_array = operation == op::dot ? in.b.data() : in.a.data();
        const T planted = T(-1);  // outside [0, 1): nowhere else
        set_element(last_array, n - 1, planted);
        read(planted, nullptr);
        // Put back: the samples read the same values as every variant.
        set_element(last_array, n - 1, value<T>(operation == op::dot ? seed_b : seed_a, n - 1));
        const unsigned long long planted_found = first_match.to_host()[0];
        first_match.fill_bytes(0xFF);
        return planted_found == n - 1
                   ? kw::check_result::pass()
                   : kw::check_result::fail("a sentinel planted at the last index " +
                                            std::to_string(n - 1) + " was reported at " +
                                            std::to_string(planted_found));
      })
      .run([&](cudaStream_t stream) { read(sentinel, stream); });
}

void add_sizes(kw::benchmark_handle* handle, bool sweep) {
  if (sweep) {
    for (const std::int64_t n : sweep_n) {
      handle->Arg(n);
    }
  } else {
    handle->Arg(teaching_n);
  }
  handle->ArgName("n");
}

// reduction/<sum|dot>/<variant>/<type>: per type, the sum's variants, its streaming read, the
// dot product's variants and its streaming read.
template <typename T>
bool register_type(const std::string& type) {
  const auto named = [](std::vector<variant> variants) {
    return kw::named_values(variants, kk::to_string);
  };
  kw::register_gpu_variants(
      "reduction/sum/{}/" + type,
      named({variant::naive, variant::interleaved, variant::sequential, variant::warp_shuffle,
             variant::vectorized, variant::cub}),
      [](benchmark::State& state, variant v) { reduction<T>(state, op::sum, v); })
      .apply([](kw::benchmark_handle* handle, variant v) {
        add_sizes(handle, v == variant::vectorized || v == variant::cub);
      });
  add_sizes(kw::register_gpu_benchmark(
                "reduction/sum/streaming/" + type,
                [](benchmark::State& state) { streaming<T>(state, op::sum); }),
            true);
  kw::register_gpu_variants(
      "reduction/dot/{}/" + type, named({variant::sequential, variant::vectorized, variant::cub}),
      [](benchmark::State& state, variant v) { reduction<T>(state, op::dot, v); })
      .apply([](kw::benchmark_handle* handle) { add_sizes(handle, false); });
  add_sizes(kw::register_gpu_benchmark(
                "reduction/dot/streaming/" + type,
                [](benchmark::State& state) { streaming<T>(state, op::dot); }),
            false);
  return true;
}

// A type axis whose types each register several variant axes: float's, then double's.
[[maybe_unused]] const bool registered = register_type<float>("float") &&
                                         register_type<double>("double");

}  // namespace
