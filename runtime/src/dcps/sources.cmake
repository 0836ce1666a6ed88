# dcps: the subscriber-side data model and the machinery every entity shares — the reader
# history cache, statuses (StatusBook), conditions and WaitSets, the Entity base.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/history_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/retained.cpp
  ${CMAKE_CURRENT_LIST_DIR}/status_book.cpp
  ${CMAKE_CURRENT_LIST_DIR}/condition.cpp
  ${CMAKE_CURRENT_LIST_DIR}/waitset.cpp
  ${CMAKE_CURRENT_LIST_DIR}/entity_delegate.cpp)

# The DCPS end of the view engine: slot wire format, and the Router (samples into messages
# on a topic's channel; delivered messages parsed and routed to the topic's readers).
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/wire.cpp
  ${CMAKE_CURRENT_LIST_DIR}/router.cpp
  # The entities: participant, topic, publisher/subscriber, writer/reader.
  ${CMAKE_CURRENT_LIST_DIR}/content_filter.cpp
  ${CMAKE_CURRENT_LIST_DIR}/builtin.cpp
  ${CMAKE_CURRENT_LIST_DIR}/domain_status.cpp
  ${CMAKE_CURRENT_LIST_DIR}/participant.cpp
  ${CMAKE_CURRENT_LIST_DIR}/refresh.cpp
  ${CMAKE_CURRENT_LIST_DIR}/repair.cpp
  ${CMAKE_CURRENT_LIST_DIR}/endpoints.cpp)

