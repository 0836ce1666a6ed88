# qos: the YAML profile schema, the QoS consistency and request/offered checks, partition
# matching, the profile loader behind dds::core::QosProvider; installs the shipped profiles.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/schema.cpp
  ${CMAKE_CURRENT_LIST_DIR}/checks.cpp)
