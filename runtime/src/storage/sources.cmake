# storage: the durable log of the `logged` consistency level (DESIGN §8; docs/log-format.md),
# one directory of checksummed segment files per topic.
target_sources(spindle_runtime PRIVATE ${CMAKE_CURRENT_LIST_DIR}/log.cpp)
