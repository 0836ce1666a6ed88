# Fuzz target for the TCP frame decoder: the only code that turns network bytes into
# writes to registered memory.
spindle_add_fuzzer(tcp_frames ${CMAKE_CURRENT_LIST_DIR}/tcp_frames.cpp)
target_link_libraries(tcp_frames PRIVATE spindle_tcp_frames)
