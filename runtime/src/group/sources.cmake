# group: the static group description (members, subgroups, senders, knobs) from YAML.
find_package(yaml-cpp 0.7 REQUIRED)
target_sources(spindle_runtime PRIVATE ${CMAKE_CURRENT_LIST_DIR}/group.cpp)
target_link_libraries(spindle_runtime PRIVATE yaml-cpp)
