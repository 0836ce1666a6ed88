# storage: what the `volatile` and `logged` consistency levels keep (DESIGN §8): the
# retained history in memory.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/history.cpp)
