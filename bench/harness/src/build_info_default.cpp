// The build facts of a binary that was not linked through kernelwatch_add_benchmark(). Weak, so
// that the definition that CMake function generates for each benchmark executable wins.
#include <kernelwatch/detail/context.hpp>

namespace kernelwatch::detail {

__attribute__((weak)) const build_info& this_build() {
  static const build_info info{"unknown", "unknown", KERNELWATCH_VERSION};
  return info;
}

}  // namespace kernelwatch::detail
