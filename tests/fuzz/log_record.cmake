# libFuzzer target for the durable log's parser and recovery (storage/log.hpp): segment and
# index files are read back after crashes and disk faults, so any bytes must give records
# or a precise report, never a crash, a hang or a read out of bounds. It compiles the log
# alone. Seeds in corpus/log_record/ are small segments (whole, torn, corrupted).
set(_rt ${PROJECT_SOURCE_DIR}/runtime/src)
spindle_add_fuzzer(log_record ${CMAKE_CURRENT_LIST_DIR}/log_record.cpp ${_rt}/storage/log.cpp
  ${_rt}/storage/log_format.cpp)
target_include_directories(log_record PRIVATE ${_rt})
target_link_libraries(log_record PRIVATE spindle_warnings ${SPINDLE_ISAL_LIBRARY})
