spindle_idl_generate(TARGET fuzz_cdr_types
  FILES ${PROJECT_SOURCE_DIR}/tests/idlc/idl/all_constructs.idl
        ${PROJECT_SOURCE_DIR}/tests/idlc/idl/common.idl
        ${PROJECT_SOURCE_DIR}/tests/idlc/idl/gaps.idl
        ${PROJECT_SOURCE_DIR}/idl/avionics.idl
        ${PROJECT_SOURCE_DIR}/interop/cdr/cyclone/Vectors.idl
  INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/tests/idlc/idl)
spindle_add_fuzzer(cdr_deserialize cdr_deserialize.cpp)
target_link_libraries(cdr_deserialize PRIVATE fuzz_cdr_types)
