# Installs the CMake package: find_package(Spindle) gives Spindle::dds (what an application
# links), Spindle::idlc, Spindle::cdr, Spindle::spindle, the transports,
# spindle_idl_generate() and SPINDLE_QOS_PROFILE_DIR.
include(CMakePackageConfigHelpers)
install(EXPORT SpindleTargets NAMESPACE Spindle:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle)
# Where runtime/src/qos installs the shipped profiles, relative to the prefix.
set(SPINDLE_QOS_PROFILE_DIR ${CMAKE_INSTALL_DATADIR}/spindle/qos-profiles)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/SpindleConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle
  PATH_VARS SPINDLE_QOS_PROFILE_DIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/SpindleIdl.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle)
