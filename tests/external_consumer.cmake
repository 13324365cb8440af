# cmake -DMODE=package|subdirectory|fetchcontent -DKERNELWATCH_BUILD_DIR=... -DSOURCE_DIR=...
#       -DWORK_DIR=... -DCUDA_ARCHITECTURES=... -P external_consumer.cmake
# Builds examples/external the way another project would get kernelwatch (package: installed
# to WORK_DIR/prefix first, and nothing of the source tree is visible), checks what its binary
# does without a GPU (--help, the listing, which it prints, and a run's exit 0 or 4), and that
# the example is docs/usage.md's snippet.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
# docs/usage.md's my_bench.cu is examples/external/saxpy_bench.cu (comments and spacing aside),
# so the snippet the docs show is the one this test compiles.
file(READ "${SOURCE_DIR}/docs/usage.md" usage)
string(REGEX MATCH "```cpp\n// my_bench[.]cu\n[^`]*```" snippet "${usage}")
file(READ "${SOURCE_DIR}/examples/external/saxpy_bench.cu" example)
foreach(code IN ITEMS snippet example)
  string(REGEX REPLACE "```(cpp)?" "" ${code} "${${code}}")
  string(REGEX REPLACE "//[^\n]*" "" ${code} "${${code}}")
  string(REGEX REPLACE "[ \t\r\n]+" "" ${code} "${${code}}")
endforeach()
if(NOT snippet OR NOT snippet STREQUAL example)
  message(FATAL_ERROR "docs/usage.md's my_bench.cu differs from examples/external/saxpy_bench.cu")
endif()

set(how "-DKERNELWATCH_FROM=${MODE}")
if(MODE STREQUAL "package")
  run("${CMAKE_COMMAND}" --install "${KERNELWATCH_BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
  list(APPEND how "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
  # The installed public surface: the headers beside kernelwatch.hpp are exactly the ones it
  # includes, and none of them is a detail header; detail/ is reached only through them.
  set(include_dir "${WORK_DIR}/prefix/include/kernelwatch")
  file(GLOB installed RELATIVE "${include_dir}" "${include_dir}/*.hpp")
  list(REMOVE_ITEM installed kernelwatch.hpp)
  file(STRINGS "${include_dir}/kernelwatch.hpp" umbrella REGEX "^#include <kernelwatch/")
  list(TRANSFORM umbrella REPLACE "^#include <kernelwatch/(.*)>.*$" "\\1")
  list(SORT installed)
  list(SORT umbrella)
  if(NOT installed STREQUAL umbrella)
    message(FATAL_ERROR "kernelwatch.hpp includes [${umbrella}], "
                        "but the public headers installed are [${installed}]")
  endif()
  file(STRINGS "${SOURCE_DIR}/examples/external/saxpy_bench.cu" detail REGEX "kernelwatch/detail/")
  if(detail)
    message(FATAL_ERROR "examples/external includes a detail header: ${detail}")
  endif()
else()
  list(APPEND how "-DKERNELWATCH_SOURCE_DIR=${SOURCE_DIR}")
endif()
# CUDA standard 14: the targets must carry the C++17 their headers need into the consumer's .cu
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/external" -B "${WORK_DIR}/build" ${how}
    "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}" -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CUDA_STANDARD=14)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --target saxpy_bench -j 2)
# What needs no GPU: --help (with the harness's flags) and the listing.
run("${WORK_DIR}/build/saxpy_bench" --help)
if(NOT output MATCHES "--kernelwatch_cache")
  message(FATAL_ERROR "saxpy_bench --help does not list the harness's flags:\n${output}")
endif()
run("${WORK_DIR}/build/saxpy_bench" --benchmark_list_tests)
message("${output}")
# A filter that matches nothing opens the GPU and measures nothing: 0 with a GPU; without one,
# exit 4 and the one line docs/usage.md promises.
execute_process(COMMAND "${WORK_DIR}/build/saxpy_bench" "--benchmark_filter=^$"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 AND NOT (status EQUAL 4 AND err MATCHES
   "^kernelwatch: no CUDA GPU is visible \\([^\n]*\\); nothing to measure\n$"))
  message(FATAL_ERROR "saxpy_bench without work: exit ${status}, not 0 or 4 with one line:\n${err}")
endif()
