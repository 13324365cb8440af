#pragma once
// Registering GPU benchmarks with Google Benchmark. Axes (Args, Ranges, ArgNames...) are set
// on the returned handle with Google Benchmark's own API; a named axis (variants, types) is
// register_gpu_variants, as Google Benchmark's integer axes cannot carry names.

#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

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
/// address, ...) ends the process with exit code 3 and a message naming the benchmark. Bytes
/// of `name` that are not UTF-8 become U+FFFD: the result file is JSON.
benchmark_handle* register_gpu_benchmark(const std::string& name, benchmark_body body);

/// One value of a named axis: `name` in the benchmark's name, `value` given to the body.
template <typename Value>
struct named {
  std::string name;
  Value value;
};

/// The benchmarks of a named axis, one per value, in its order; `apply` sets their other axes.
template <typename Value>
class variant_benchmarks {
 public:
  void add(benchmark_handle* handle, const Value& value) { handles_.emplace_back(handle, value); }

  /// axes(handle) on each, or axes(handle, value) where the axes depend on the variant (as
  /// Google Benchmark's Apply, which takes no captures and no value).
  template <typename Axes>
  variant_benchmarks& apply(Axes axes) {
    for (auto& [handle, value] : handles_) {
      if constexpr (std::is_invocable_v<Axes&, benchmark_handle*, const Value&>) {
        axes(handle, value);
      } else {
        axes(handle);
      }
    }
    return *this;
  }

 private:
  std::vector<std::pair<benchmark_handle*, Value>> handles_;
};

/// The benchmark name of `value` on a named axis: `name` with "{}" replaced by it, else
/// `name/value` ("transpose" and "tiled": "transpose/tiled"; "reduction/sum/{}/float").
std::string variant_name(const std::string& name, const std::string& value);

/// A named axis: registers variant_name(name, v.name) for each v of `variants`, in their order
/// (the listing's and the run's), timing body(state, v.value); Google Benchmark's integer axes
/// go on the result, through apply.
template <typename Value, typename Body>
variant_benchmarks<Value> register_gpu_variants(const std::string& name,
                                                const std::vector<named<Value>>& variants,
                                                Body body) {
  variant_benchmarks<Value> registered;
  for (const named<Value>& variant : variants) {
    registered.add(register_gpu_benchmark(variant_name(name, variant.name),
                                          [body, value = variant.value](benchmark::State& state) {
                                            body(state, value);
                                          }),
                   variant.value);
  }
  return registered;
}

/// A type axis (or any axis whose values are bodies): {{"float", copy<float>}, ...}.
inline variant_benchmarks<benchmark_body> register_gpu_variants(
    const std::string& name, const std::vector<named<benchmark_body>>& variants) {
  return register_gpu_variants(
      name, variants, [](benchmark::State& state, const benchmark_body& body) { body(state); });
}

/// {value, name_of(value)} for each of `values`: a named axis over an enum's values, in their
/// order, named by the function the kernels already name them with.
template <typename Values, typename NameOf>
auto named_values(const Values& values, NameOf name_of) {
  std::vector<named<std::decay_t<decltype(*std::begin(values))>>> found;
  for (const auto& value : values) {
    found.push_back({name_of(value), value});
  }
  return found;
}

}  // namespace kernelwatch

#define KW_DETAIL_CONCAT_(a, b) a##b
#define KW_DETAIL_CONCAT(a, b) KW_DETAIL_CONCAT_(a, b)
// A name of its own for each registration. By __LINE__, two on one line (an author's macro that
// registers several) or at one line number of a header and of the file including it were one
// variable defined twice, and the file did not compile (as Google Benchmark, __COUNTER__).
#ifdef __COUNTER__
#define KW_DETAIL_UNIQUE(prefix) KW_DETAIL_CONCAT(prefix, __COUNTER__)
#else
#define KW_DETAIL_UNIQUE(prefix) KW_DETAIL_CONCAT(prefix, __LINE__)
#endif

/// At namespace scope: KW_GPU_BENCHMARK("family/variant", function)->Arg(1)->Arg(2);
/// The variadic form lets template arguments with commas through: fn<float, 32>.
#define KW_GPU_BENCHMARK(name, ...)                                                       \
  [[maybe_unused]] static ::kernelwatch::benchmark_handle* KW_DETAIL_UNIQUE(              \
      kw_registered_benchmark_) = ::kernelwatch::register_gpu_benchmark(name, __VA_ARGS__)

/// At namespace scope, a named axis: KW_GPU_BENCHMARK_VARIANTS("family", variants, body)
/// .apply(axes); registers family/<variant> for each variant (register_gpu_variants).
#define KW_GPU_BENCHMARK_VARIANTS(name, ...)                                                \
  [[maybe_unused]] static const auto KW_DETAIL_UNIQUE(kw_registered_variants_) =            \
      ::kernelwatch::register_gpu_variants(name, __VA_ARGS__)
