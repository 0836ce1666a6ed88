# libFuzzer target for the idlc front end: preprocessor, ANTLR parser, AST builder and sema
# on arbitrary bytes. Regression inputs live in corpus/idl_parser/.
spindle_add_fuzzer(idl_parser ${CMAKE_CURRENT_LIST_DIR}/idl_parser.cpp)
target_link_libraries(idl_parser PRIVATE idlc_frontend)
