# group: views and the view engine (DESIGN §7). A View (members, subgroups, senders, knobs;
# from YAML through the shared strict reader, core/yaml_reader), today's subgroup layout,
# the Runtime that gives the engine and DCPS their clocks and threads (real threads, or the
# deterministic simulator), and the Engine that builds SST/SMC/predicate loop per view.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/view.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime.cpp
  ${CMAKE_CURRENT_LIST_DIR}/thread_runtime.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sim_runtime.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sim_join.cpp
  ${CMAKE_CURRENT_LIST_DIR}/liveness.cpp
  ${CMAKE_CURRENT_LIST_DIR}/membership.cpp
  ${CMAKE_CURRENT_LIST_DIR}/join.cpp
  ${CMAKE_CURRENT_LIST_DIR}/beacon.cpp
  ${CMAKE_CURRENT_LIST_DIR}/large_pins.cpp
  ${CMAKE_CURRENT_LIST_DIR}/engine.cpp)
