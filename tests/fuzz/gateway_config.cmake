# libFuzzer target for spindle-gateway's configuration file (interop/gateway/config.cpp):
# any text is refused with a ConfigError naming file:line and key, or read; nothing else
# escapes. Compiles the parser alone (no domain, no Cyclone DDS).
spindle_add_fuzzer(gateway_config ${CMAKE_CURRENT_LIST_DIR}/gateway_config.cpp
  ${PROJECT_SOURCE_DIR}/interop/gateway/config.cpp)
target_include_directories(gateway_config PRIVATE ${PROJECT_SOURCE_DIR}/interop/gateway
                                                 ${PROJECT_SOURCE_DIR}/runtime/src)
find_package(yaml-cpp 0.7 REQUIRED)
target_link_libraries(gateway_config PRIVATE yaml-cpp spindle_warnings)
