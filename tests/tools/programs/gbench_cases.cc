// Google Benchmark program for tests/tools/test_gbench_programs.py: the file shapes that
// Google Benchmark users have and kernelwatch must read (built by the test with g++).
//   BM_target        ~100x slower when KW_SLOW=1 (a gross regression with one repetition)
//   BM_steady        never changes; with KW_FAIL_ONCE=1 its second repetition fails
//   BM_twice         registered twice under one name (as Google Benchmark's complexity_test)
//   BM_complexity    a range with Complexity(oN): BigO and RMS aggregate rows
//   BM_labelled      SetLabel("fp32")
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

std::int64_t work(std::int64_t n) {
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    benchmark::DoNotOptimize(sum += i * i);
  }
  return sum;
}

bool env_is_1(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "1") == 0;
}

const std::int64_t target_work = env_is_1("KW_SLOW") ? 100000 : 1000;

void BM_target(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(work(target_work));
}
void BM_steady(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(work(1000));
  // After the loop: before it, the failed repetition reports 0 iterations, and Google
  // Benchmark 1.7.1's debug build aborts on repetitions of unequal iterations (statistics.cc).
  static int calls = 0;  // fixed iterations: one call per repetition
  if (++calls == 2 && env_is_1("KW_FAIL_ONCE")) state.SkipWithError("failed on purpose");
}
void BM_twice(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(work(500));
}
void BM_complexity(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(work(state.range(0)));
  state.SetComplexityN(state.range(0));
}
void BM_labelled(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(work(1000));
  state.SetLabel("fp32");
}

}  // namespace

// Each benchmark runs for milliseconds: with 200 iterations (about 0.1 ms each) a second run on
// the loaded 2-core CI machine took up to 2.1x as long, which the one-repetition rule fails on.
BENCHMARK(BM_target)->Iterations(2000);
BENCHMARK(BM_steady)->Iterations(20000);
BENCHMARK(BM_twice)->Iterations(20000);
BENCHMARK(BM_twice)->Iterations(20000);
BENCHMARK(BM_complexity)->RangeMultiplier(4)->Range(256, 4096)->Iterations(5000)->Complexity(
    benchmark::oN);
BENCHMARK(BM_labelled)->Iterations(20000);

BENCHMARK_MAIN();
