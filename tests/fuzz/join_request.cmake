# libFuzzer target for the join request parser (group/join.hpp): anything that connects to
# a domain's join port may send it bytes. It compiles the contact protocol and the View
# YAML it carries (with the shared YAML reader), not the whole runtime.
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(join_request ${CMAKE_CURRENT_LIST_DIR}/join_request.cpp
  ${_rt}/group/join.cpp ${_rt}/group/view.cpp ${_rt}/rdmc/schedule.cpp ${_rt}/core/yaml_reader.cpp
  ${_rt}/core/socket_io.cpp ${_rt}/core/interfaces.cpp ${_rt}/core/yaml_schema.cpp
  ${_rt}/security/tls_socket.cpp
  ${_rt}/security/credentials.cpp)
target_include_directories(join_request PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include)
find_package(yaml-cpp 0.7 REQUIRED)
find_package(OpenSSL 3 REQUIRED COMPONENTS SSL Crypto)
target_link_libraries(join_request PRIVATE yaml-cpp OpenSSL::SSL OpenSSL::Crypto spindle_warnings
                                           Threads::Threads)
