# dcps: the subscriber-side data model and the machinery every entity shares — the reader
# history cache, statuses (StatusBook), conditions and WaitSets, the Entity base.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/history_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/status_book.cpp
  ${CMAKE_CURRENT_LIST_DIR}/condition.cpp
  ${CMAKE_CURRENT_LIST_DIR}/waitset.cpp
  ${CMAKE_CURRENT_LIST_DIR}/entity_delegate.cpp)

# The participant engine: slot wire format, listener/timer thread, the Domain (transport,
# SST, SMC and predicate thread of one participant; topic-to-subgroup mapping).
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/wire.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dispatcher.cpp
  ${CMAKE_CURRENT_LIST_DIR}/domain.cpp)

# Discovery records: the writer/reader announcements every participant multicasts and
# decodes (untrusted bytes; fuzzed by tests/fuzz/discovery_record.cpp).
target_sources(spindle_runtime PRIVATE ${CMAKE_CURRENT_LIST_DIR}/discovery.cpp)
