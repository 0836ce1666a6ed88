# qos: the YAML profile schema, the QoS consistency and request/offered checks, partition
# matching, and the profile loader behind dds::core::QosProvider. The shipped profiles
# (qos-profiles/*.yaml) install to <prefix>/share/spindle/qos-profiles, the last folder
# the loader searches.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/schema.cpp
  ${CMAKE_CURRENT_LIST_DIR}/checks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/profiles.cpp
  ${CMAKE_CURRENT_LIST_DIR}/qos_provider.cpp)
set(SPINDLE_QOS_PROFILE_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/spindle/qos-profiles)
set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/profiles.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  SPINDLE_QOS_PROFILE_DIR="${CMAKE_INSTALL_FULL_DATADIR}/spindle/qos-profiles")
file(GLOB _spindle_qos_profiles ${PROJECT_SOURCE_DIR}/qos-profiles/*.yaml)
install(FILES ${_spindle_qos_profiles} ${PROJECT_SOURCE_DIR}/qos-profiles/README.md
              ${PROJECT_SOURCE_DIR}/qos-profiles/schema.md
        DESTINATION ${SPINDLE_QOS_PROFILE_INSTALL_DIR} COMPONENT runtime)
