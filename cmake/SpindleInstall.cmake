# Installs the CMake package: find_package(Spindle) gives Spindle::idlc, Spindle::cdr,
# Spindle::spindle (when the runtime is built) and spindle_idl_generate().
include(CMakePackageConfigHelpers)
install(EXPORT SpindleTargets NAMESPACE Spindle:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/SpindleConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/SpindleIdl.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle)
