# core: pieces the other components share: the strict YAML reader behind every config file
# and the schema tables that loaders, renderers and generated docs are built from.
find_package(yaml-cpp 0.7 REQUIRED)
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/yaml_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/yaml_schema.cpp
  # Blocking socket I/O with deadlines: the join protocol and the client relay link.
  ${CMAKE_CURRENT_LIST_DIR}/socket_io.cpp
  # This host's IPv4 interfaces: node.host auto, the multicast beacon.
  ${CMAKE_CURRENT_LIST_DIR}/interfaces.cpp)
target_link_libraries(spindle_runtime PRIVATE yaml-cpp)
