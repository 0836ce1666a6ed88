# client: external clients (docs/membership.md, "External clients") — the link's frames,
# a member's relay for its clients, and the client's Bus (its way into the domain).
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/relay_wire.cpp
  ${CMAKE_CURRENT_LIST_DIR}/relay.cpp
  ${CMAKE_CURRENT_LIST_DIR}/client_bus.cpp)
