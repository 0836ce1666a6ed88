# libFuzzer target for XTypes type information read from discovery (load_type_info).
# Regression inputs and seeds (Cyclone DDS's bytes) live in corpus/type_object/.
spindle_add_fuzzer(type_object ${CMAKE_CURRENT_LIST_DIR}/fuzz_type_object.cpp)
target_link_libraries(type_object PRIVATE spindle_types)
