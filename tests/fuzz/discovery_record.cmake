# libFuzzer target for the discovery record decoder (the writer/reader announcements every
# participant decodes). Seed inputs in corpus/discovery_record/ are valid encodings, kept
# current by tests/dcps/discovery_test.cpp. It compiles just the codec and the QoS checks it
# runs (with the YAML helpers those use to print durations), not the whole runtime.
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(discovery_record ${CMAKE_CURRENT_LIST_DIR}/discovery_record.cpp
  ${_rt}/discovery/records.cpp ${_rt}/qos/checks.cpp ${_rt}/core/yaml_reader.cpp)
target_include_directories(discovery_record PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include)
find_package(yaml-cpp 0.7 REQUIRED)
target_link_libraries(discovery_record PRIVATE yaml-cpp spindle_warnings)
