# Dynamic decoding against generated decoding (fuzz_cdr_types comes from cdr_deserialize.cmake).
spindle_add_fuzzer(dynamic_data dynamic_data.cpp)
target_compile_definitions(dynamic_data PRIVATE SPINDLE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(dynamic_data PRIVATE fuzz_cdr_types spindle_types_idl)
