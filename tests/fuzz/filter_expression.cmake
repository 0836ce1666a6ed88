# libFuzzer target for the filter and query language (runtime/src/filter): a filter
# expression and its parameters come from the application, and later from remote readers'
# ContentFilteredTopics. Compiles expression.cpp alone, against the test tables of
# tests/filter/filter_types.hpp. Regression inputs live in corpus/filter_expression/.
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(filter_expression ${CMAKE_CURRENT_LIST_DIR}/filter_expression.cpp
  ${_rt}/filter/expression.cpp)
target_include_directories(filter_expression PRIVATE ${_rt} ${PROJECT_SOURCE_DIR}/runtime/include
                                                     ${PROJECT_SOURCE_DIR}/tests/filter)
target_link_libraries(filter_expression PRIVATE spindle_warnings)
