# Installs the CMake package: find_package(Spindle) gives Spindle::dds (what an application
# links), Spindle::idlc (the program spindle-idlc), Spindle::cdr, Spindle::spindle, the
# transports, spindle_idl_generate() and SPINDLE_QOS_PROFILE_DIR; and the pkg-config file
# spindle.pc for builds without CMake. All of it is in the -dev package.
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

# spindle.pc: the libraries of Spindle::dds in link order (each before those it calls), then
# what they call. Keep in step with SpindleConfig.cmake.in's find_dependency() list.
set(SPINDLE_PC_LIBS -lspindle_dds -lspindle_types)
set(SPINDLE_PC_REQUIRES "libssl, libcrypto, yaml-cpp >= 0.7, nlohmann_json >= 3, libisal")
foreach(transport rdma auto tcp shm)
  if(TARGET spindle_transport_${transport})
    list(APPEND SPINDLE_PC_LIBS -lspindle_transport_${transport})
  endif()
endforeach()
list(APPEND SPINDLE_PC_LIBS -lspindle_runtime)
if(TARGET spindle_transport_rdma)
  string(APPEND SPINDLE_PC_REQUIRES ", librdmacm, libibverbs")
endif()
list(JOIN SPINDLE_PC_LIBS " " SPINDLE_PC_LIBS)
file(RELATIVE_PATH SPINDLE_PC_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" SPINDLE_PC_PREFIX "${SPINDLE_PC_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/spindle.pc.in ${CMAKE_CURRENT_BINARY_DIR}/spindle.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/spindle.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
