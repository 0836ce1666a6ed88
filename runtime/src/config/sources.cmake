# config: the domain file (domain id, transport, this node, members or contacts, engine
# knobs) and how a participant finds it (SPINDLE_CONFIG, default locations, built-in).
target_sources(spindle_runtime PRIVATE ${CMAKE_CURRENT_LIST_DIR}/domain_config.cpp)
