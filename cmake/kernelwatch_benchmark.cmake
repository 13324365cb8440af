# kernelwatch_add_benchmark(<target> SOURCES <file>... [LIBRARIES <lib>...])
#
# Adds a benchmark executable linked with kernelwatch::main (the main that writes the GPU
# context) and records, at every build, the git commit and build type of the project that
# defines it — so a result names the commit of the code it measured, also when kernelwatch is
# an installed package. The generated file only changes, and the target only relinks, when the
# commit or its dirtiness does. KERNELWATCH_GIT_COMMIT in the build's environment overrides git
# (for trees without .git).
function(kernelwatch_add_benchmark target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBRARIES")
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "kernelwatch_add_benchmark(${target}): SOURCES is required")
  endif()
  # The harness is C++ and its benchmarks CUDA: a project(... LANGUAGES CUDA) failed at generate
  # time with "No known features for CXX compiler", naming neither kernelwatch nor the fix.
  foreach(language IN ITEMS CXX CUDA)
    if(NOT CMAKE_${language}_COMPILER_LOADED)
      message(FATAL_ERROR "kernelwatch_add_benchmark(${target}): the ${language} language is not "
                          "enabled here: project(<name> LANGUAGES CXX CUDA)")
    endif()
  endforeach()
  set(build_info "${CMAKE_CURRENT_BINARY_DIR}/${target}_build_info.cpp")
  add_custom_target(${target}_build_info
    COMMAND "${CMAKE_COMMAND}"
            "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}"
            "-DOUTPUT=${build_info}"
            "-DBUILD_TYPE=$<IF:$<CONFIG:>,unspecified,$<CONFIG>>"
            "-DVERSION=${KERNELWATCH_VERSION}"
            # the script beside this file, wherever the function is called from
            -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/write_build_info.cmake"
    BYPRODUCTS "${build_info}"
    COMMENT "kernelwatch: recording the git commit of ${target}"
    VERBATIM)
  add_executable(${target} ${arg_SOURCES} "${build_info}")
  add_dependencies(${target} ${target}_build_info)
  target_link_libraries(${target} PRIVATE kernelwatch::main ${arg_LIBRARIES})
endfunction()
