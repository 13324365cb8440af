# Every dependency is looked up once, here, and a missing one stops configuration with the
# package that provides it, instead of a wall of CMake internals.
function(kernelwatch_require package hint)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "kernelwatch: ${package} not found. ${hint}")
  endif()
  # A function's variables end with it (its imported targets do not): the harness picks its
  # Google Benchmark flag spelling by benchmark_VERSION, which was empty there, so on 1.8 every
  # benchmark printed "should have a suffix".
  set(${package}_VERSION "${${package}_VERSION}" PARENT_SCOPE)
endfunction()

kernelwatch_require(CUDAToolkit
  "Install the CUDA toolkit (nvcc, cudart) and put it on PATH, or set CUDAToolkit_ROOT.")
kernelwatch_require(benchmark
  "Install Google Benchmark >= 1.7 (Debian/Ubuntu: apt-get install libbenchmark-dev), or set benchmark_DIR.")
if(KERNELWATCH_BUILD_TESTS)
  kernelwatch_require(GTest
    "Install GoogleTest (Debian/Ubuntu: apt-get install libgtest-dev), or set GTest_DIR.")
  kernelwatch_require(nlohmann_json
    "Install nlohmann/json (Debian/Ubuntu: apt-get install nlohmann-json3-dev), or set nlohmann_json_DIR.")
endif()
