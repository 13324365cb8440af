# cmake -DKERNELWATCH_BUILD_DIR=... -DEXAMPLE_DIR=... -DWORK_DIR=... -P external_consumer.cmake
# Installs the built kernelwatch to WORK_DIR/prefix, configures and builds the external example
# against that prefix only, and prints the example's benchmark list.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
run("${CMAKE_COMMAND}" --install "${KERNELWATCH_BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" -S "${EXAMPLE_DIR}" -B "${WORK_DIR}/build"
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}"
    -DCMAKE_BUILD_TYPE=Release)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/saxpy_bench" --benchmark_list_tests)
message("${output}")
