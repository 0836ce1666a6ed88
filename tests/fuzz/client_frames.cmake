# libFuzzer target for the client link's frames (client/relay_wire.hpp): a relay decodes what a
# client sent (HELLO, PUBLISH, WANT), a client what its relay sent (WELCOME, DELIVER, ...).
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(client_frames ${CMAKE_CURRENT_LIST_DIR}/client_frames.cpp
  ${_rt}/client/relay_wire.cpp)
target_include_directories(client_frames PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include)
target_link_libraries(client_frames PRIVATE spindle_warnings)
