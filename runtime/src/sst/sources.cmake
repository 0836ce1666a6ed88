# sst: the shared state table, its predicate engine and the predicate thread.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/sst.cpp
  ${CMAKE_CURRENT_LIST_DIR}/predicates.cpp
  ${CMAKE_CURRENT_LIST_DIR}/predicate_loop.cpp)
