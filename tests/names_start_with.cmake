# cmake -DBINARY=... -DPREFIX=<family>/ -P names_start_with.cmake
# Lists BINARY's benchmarks (no GPU needed) and fails unless there is at least one and every
# name starts with PREFIX. A PASS_REGULAR_EXPRESSION's `^` anchors at the start of the whole
# output, so on its own it checked the first name only.
execute_process(COMMAND "${BINARY}" --benchmark_list_tests
                RESULT_VARIABLE status OUTPUT_VARIABLE listed ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BINARY} --benchmark_list_tests exited ${status}\n${err}")
endif()
string(REGEX MATCHALL "[^\n]+" names "${listed}")
list(LENGTH names count)
if(count EQUAL 0)
  message(FATAL_ERROR "${BINARY} lists no benchmark")
endif()
string(LENGTH "${PREFIX}" length)
foreach(name IN LISTS names)
  string(SUBSTRING "${name}" 0 ${length} start)
  if(NOT start STREQUAL PREFIX)
    message(FATAL_ERROR "${BINARY} lists '${name}', which does not start with '${PREFIX}'")
  endif()
endforeach()
message(STATUS "${count} benchmarks, each named ${PREFIX}...")
