# smc: small-message multicast with the Spindle optimizations.
target_sources(spindle_runtime PRIVATE ${CMAKE_CURRENT_LIST_DIR}/smc.cpp)
