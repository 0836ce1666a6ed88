# libFuzzer target for the DCPS message parser (dcps/wire.hpp): every delivered SMC slot is
# bytes another process wrote — a sample, a builtin message or a coherent set of messages.
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(sample_message ${CMAKE_CURRENT_LIST_DIR}/sample_message.cpp ${_rt}/dcps/wire.cpp)
target_include_directories(sample_message PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include)
target_link_libraries(sample_message PRIVATE spindle_warnings)
