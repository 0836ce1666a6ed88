# libFuzzer target for the multicast beacon's datagram parser (group/beacon.hpp): anything on
# the network may send a datagram to the discovery group and port. It compiles the beacon
# alone.
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(beacon ${CMAKE_CURRENT_LIST_DIR}/beacon.cpp ${_rt}/group/beacon.cpp)
target_include_directories(beacon PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include)
target_link_libraries(beacon PRIVATE spindle_warnings Threads::Threads)
