# The Debian packages (CPack, `cpack -G DEB` in a configured tree; tools/package.sh builds a
# release tree for them). One package per install component (docs/install.md):
#
#   spindle-runtime   what a Spindle program needs at run time: the shipped QoS profiles, and
#                     (Depends) the shared libraries the static Spindle libraries call
#   spindle-dev       headers, static libraries, the CMake package, spindle.pc, spindle-idlc
#   spindle-tools     spindle, spindle-perf, spindle-log
#   spindle-gateway   spindle-gateway, apart because it needs Cyclone DDS's libddsc
#
# None holds a file of Debian's Cyclone DDS packages (its idlc is /usr/bin/idlc; ours is
# spindle-idlc). The packages install where the tree was configured to (CMAKE_INSTALL_PREFIX,
# /usr in the `package` preset), since the runtime looks for the QoS profiles there.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME spindle)
set(CPACK_PACKAGE_VENDOR "Spindle DDS")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Each package's description is its component's: the first line is the summary.
set(SPINDLE_PACKAGE_MAINTAINER "Spindle DDS maintainers <spindle-dds@localhost>"
    CACHE STRING "The Maintainer field of the .deb packages")
set(CPACK_PACKAGE_CONTACT "${SPINDLE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
# Programs stripped (the -g1 line tables of the sanitize tree are most of its size); the
# static libraries keep their symbols.
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tools)
if(TARGET spindle-gateway)
  list(APPEND CPACK_COMPONENTS_ALL gateway)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Depends of the programs from their ELF files (dpkg-shlibdeps), merged with the lists below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(_spindle_same_version "(= ${PROJECT_VERSION})")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME spindle-runtime)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Spindle DDS run-time files\nThe QoS profiles a Spindle DDS program loads, and the shared libraries that\nthe statically linked Spindle DDS libraries call.")
# The runtime's libraries are static (linked into each program), so these are the shared
# libraries they call; names of Debian 12.
set(_spindle_runtime_depends libfastcdr1 libssl3 libyaml-cpp0.7 libisal2)
set(_spindle_dev_depends libfastcdr-dev libssl-dev libyaml-cpp-dev nlohmann-json3-dev
                         libisal-dev)
if(TARGET spindle_transport_rdma)
  list(APPEND _spindle_runtime_depends libibverbs1 librdmacm1)
  list(APPEND _spindle_dev_depends libibverbs-dev librdmacm-dev)
endif()
list(JOIN _spindle_runtime_depends ", " CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME spindle-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "Spindle DDS development files\nHeaders (<dds/dds.hpp>, <spindle/...>), static libraries, the CMake package\n(find_package(Spindle)), spindle.pc for pkg-config and the IDL compiler\nspindle-idlc.")
list(JOIN _spindle_dev_depends ", " _spindle_dev_depends)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "spindle-runtime ${_spindle_same_version}, ${_spindle_dev_depends}")
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "cmake (>= 3.25), pkgconf")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME spindle-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "Spindle DDS command-line tools\nspindle (subscribe, publish and witness in a domain), spindle-perf (latency\nand throughput) and spindle-log (the durable logs of logged topics).")
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "spindle-runtime ${_spindle_same_version}")

set(CPACK_DEBIAN_GATEWAY_PACKAGE_NAME spindle-gateway)
set(CPACK_DEBIAN_GATEWAY_PACKAGE_SECTION net)
set(CPACK_COMPONENT_GATEWAY_DESCRIPTION
    "Spindle DDS to RTPS gateway\nPasses topics between a Spindle DDS domain and an RTPS domain (Cyclone DDS,\nFast DDS, Connext, ROS 2) through Cyclone DDS.")
set(CPACK_DEBIAN_GATEWAY_PACKAGE_DEPENDS "spindle-runtime ${_spindle_same_version}")

include(CPack)
