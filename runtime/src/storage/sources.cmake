# storage: what the `volatile` and `logged` consistency levels keep (DESIGN §8): the retained
# history in memory (docs/storage.md), and the durable log, one directory of checksummed
# segment files per topic (docs/log-format.md).
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/history.cpp
  ${CMAKE_CURRENT_LIST_DIR}/home.cpp
  ${CMAKE_CURRENT_LIST_DIR}/log.cpp
  ${CMAKE_CURRENT_LIST_DIR}/log_format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/settings.cpp)
target_include_directories(spindle_runtime PRIVATE ${SPINDLE_ISAL_INCLUDE_DIR})
target_link_libraries(spindle_runtime PRIVATE ${SPINDLE_ISAL_LIBRARY})
