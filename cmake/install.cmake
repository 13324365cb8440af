# `cmake --install` makes kernelwatch a CMake package: find_package(kernelwatch) gives
# kernelwatch::harness, kernelwatch::main, kernelwatch::kernels and kernelwatch_add_benchmark().
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(kernelwatch_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/kernelwatch")
set_target_properties(kernelwatch_kernels PROPERTIES EXPORT_NAME kernels)
install(TARGETS kernelwatch_harness kernelwatch_main kernelwatch_kernels
        EXPORT kernelwatchTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
# include/kernelwatch/ holds the author's headers (those kernelwatch.hpp includes); detail/ goes
# along because they include some of it (counters, cuda_array) and so does the build_info.cpp
# that kernelwatch_add_benchmark() generates (context), as nvbench ships its detail/.
install(DIRECTORY bench/harness/include/ DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
# Each family's header, as kernelwatch/kernels/<family>.cuh (its folder is families/<family>/).
foreach(family IN LISTS KERNELWATCH_KERNEL_FAMILIES)
  install(FILES families/${family}/${family}.cuh
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/kernelwatch/kernels")
endforeach()
install(EXPORT kernelwatchTargets NAMESPACE kernelwatch:: DESTINATION "${kernelwatch_cmake_dir}")
# The build tree is a package too (kernelwatch_DIR=<build>, or <build> in CMAKE_PREFIX_PATH):
# its kernelwatchConfig.cmake, written below, included files that only the install wrote.
export(EXPORT kernelwatchTargets NAMESPACE kernelwatch::
       FILE "${CMAKE_CURRENT_BINARY_DIR}/kernelwatchTargets.cmake")
configure_file(cmake/kernelwatch_benchmark.cmake kernelwatch_benchmark.cmake COPYONLY)
configure_file(cmake/write_build_info.cmake write_build_info.cmake COPYONLY)
configure_package_config_file(cmake/kernelwatchConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/kernelwatchConfig.cmake"
  INSTALL_DESTINATION "${kernelwatch_cmake_dir}")
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/kernelwatchConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${CMAKE_CURRENT_BINARY_DIR}/kernelwatchConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/kernelwatchConfigVersion.cmake"
  cmake/kernelwatch_benchmark.cmake
  cmake/write_build_info.cmake
  DESTINATION "${kernelwatch_cmake_dir}")
# The licence travels with the package (Apache-2.0 WITH LLVM-exception: the exception lets
# binaries built from these headers ship without the licence's notice conditions).
install(FILES LICENSE DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/kernelwatch")
install(FILES LICENSE DESTINATION "${kernelwatch_cmake_dir}")
