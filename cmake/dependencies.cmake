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
# A project that builds its own Google Benchmark (add_subdirectory, FetchContent) before adding
# kernelwatch: the harness links that one, so its version is that one's. find_package found
# another (or none: configuration stopped), whose version chose the harness's flag spelling.
function(kernelwatch_use_projects_benchmark)
  get_target_property(real benchmark::benchmark ALIASED_TARGET)
  if(NOT real)
    set(real benchmark::benchmark)
  endif()
  get_target_property(folder ${real} SOURCE_DIR)
  get_directory_property(version DIRECTORY "${folder}" DEFINITION benchmark_VERSION)
  if(NOT version)
    get_target_property(version ${real} VERSION)
  endif()
  if(NOT version)
    set(version "")
  endif()
  set(benchmark_VERSION "${version}" PARENT_SCOPE)
endfunction()

set(kernelwatch_benchmark_imported TRUE)
if(TARGET benchmark::benchmark)
  get_target_property(kernelwatch_benchmark_imported benchmark::benchmark IMPORTED)
endif()
if(kernelwatch_benchmark_imported)
  kernelwatch_require(benchmark "Install Google Benchmark >= 1.7 (Debian/Ubuntu: apt-get \
install libbenchmark-dev), or set benchmark_DIR.")
else()
  kernelwatch_use_projects_benchmark()
endif()
if(KERNELWATCH_BUILD_TESTS)
  kernelwatch_require(GTest
    "Install GoogleTest (Debian/Ubuntu: apt-get install libgtest-dev), or set GTest_DIR.")
  kernelwatch_require(nlohmann_json
    "Install nlohmann/json (Debian/Ubuntu: apt-get install nlohmann-json3-dev), or set nlohmann_json_DIR.")
endif()
