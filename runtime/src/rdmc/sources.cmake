# rdmc: large messages by multicast of blocks (DESIGN §6; the RDMC paper): the block
# schedules (sequential, chain, binomial tree, binomial pipeline) and the transfers over the
# transport's block send/receive.
target_sources(spindle_runtime PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/schedule.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rdmc.cpp)
