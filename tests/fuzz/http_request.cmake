# libFuzzer target for the request parser of `spindle status --http` (tools/spindle/http.hpp):
# anything that reaches the port may send it bytes. It compiles that one file.
spindle_add_fuzzer(http_request ${CMAKE_CURRENT_LIST_DIR}/http_request.cpp
  ${PROJECT_SOURCE_DIR}/tools/spindle/http.cpp)
target_include_directories(http_request PRIVATE ${PROJECT_SOURCE_DIR}/tools/spindle)
target_link_libraries(http_request PRIVATE spindle_warnings Threads::Threads)
