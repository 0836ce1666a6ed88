# filter: the DDS content-filter and query expression language (DDS 1.4 annex B) that
# ContentFilteredTopic and QueryCondition evaluate over spindle::reflect tables
# (docs/filters.md).
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/expression.cpp)
