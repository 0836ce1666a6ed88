# group: the static group description (members, subgroups, senders, knobs) from YAML, read
# with the shared strict reader (core/yaml_reader).
target_sources(spindle_runtime PRIVATE ${CMAKE_CURRENT_LIST_DIR}/group.cpp)
