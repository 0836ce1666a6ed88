# discovery: the endpoint records every participant multicasts and decodes (untrusted
# bytes; fuzzed by tests/fuzz/discovery_record.cpp), and the endpoint table that matches
# writers with readers (topic, type, partitions, RxO rules).
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/records.cpp
  ${CMAKE_CURRENT_LIST_DIR}/endpoint_table.cpp)
