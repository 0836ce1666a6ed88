# libFuzzer target for the QoS profile and domain file loaders (byte 0 picks which).
# Regression inputs live in corpus/qos_yaml/. It compiles just the loaders (core YAML
# reader and schema, qos, config) rather than linking the whole runtime, so it builds and
# runs independently of the protocol code.
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(qos_yaml ${CMAKE_CURRENT_LIST_DIR}/qos_yaml.cpp
  ${_rt}/core/yaml_reader.cpp ${_rt}/core/yaml_schema.cpp
  ${_rt}/qos/schema.cpp ${_rt}/qos/checks.cpp ${_rt}/qos/profiles.cpp
  ${_rt}/config/domain_config.cpp ${_rt}/core/interfaces.cpp ${_rt}/rdmc/schedule.cpp)
target_include_directories(qos_yaml PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include)
# The installed profile folder plays no part: fuzz inputs include nothing from it.
target_compile_definitions(qos_yaml PRIVATE SPINDLE_QOS_PROFILE_DIR="/nonexistent")
find_package(yaml-cpp 0.7 REQUIRED)
target_link_libraries(qos_yaml PRIVATE yaml-cpp spindle_warnings)
