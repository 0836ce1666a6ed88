# storage: what the `volatile` and `logged` consistency levels keep (DESIGN §8): the retained
# history in memory (docs/storage.md), and the durable log, one directory of checksummed
# segment files per topic (docs/log-format.md).
#
# The durable log, its homes and settings are compiled once, as objects that the runtime,
# spindle-log, the storage tests and the storage bench all take (each needs none of the
# protocol code); so is the retained history.
add_library(spindle_log_objects OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/home.cpp
  ${CMAKE_CURRENT_LIST_DIR}/log.cpp
  ${CMAKE_CURRENT_LIST_DIR}/log_format.cpp
  ${CMAKE_CURRENT_LIST_DIR}/settings.cpp)
add_library(spindle_history_objects OBJECT ${CMAKE_CURRENT_LIST_DIR}/history.cpp)
foreach(objects spindle_log_objects spindle_history_objects)
  target_include_directories(${objects} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..
                                                ${CMAKE_CURRENT_LIST_DIR}/../../include
                                                ${SPINDLE_ISAL_INCLUDE_DIR})
  target_link_libraries(${objects} PRIVATE spindle_warnings)
  target_compile_features(${objects} PRIVATE cxx_std_20)
  set_target_properties(${objects} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endforeach()
target_sources(spindle_runtime PRIVATE $<TARGET_OBJECTS:spindle_log_objects>
                                       $<TARGET_OBJECTS:spindle_history_objects>)
target_include_directories(spindle_runtime PRIVATE ${SPINDLE_ISAL_INCLUDE_DIR})
# The installed package names the library rather than this machine's path to it.
target_link_libraries(spindle_runtime PRIVATE $<BUILD_INTERFACE:${SPINDLE_ISAL_LIBRARY}>
                                              $<INSTALL_INTERFACE:isal>)
