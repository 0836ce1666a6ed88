# The layers (DESIGN.md): DCPS sees the group layer only. Fails, naming each file and line,
# when a file under runtime/src/dcps includes a header of the protocol layers below it: smc/,
# sst/, rdmc/, transport/ (the runtime's own, or spindle/transport/). Deliveries reach DCPS
# as group::Message (group/message.hpp). Run: cmake -DSOURCE_DIR=<repo> -P layers.cmake
file(GLOB_RECURSE files ${SOURCE_DIR}/runtime/src/dcps/*.cpp ${SOURCE_DIR}/runtime/src/dcps/*.hpp)
set(found "")
foreach(f ${files})
  file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](smc|sst|rdmc|transport|spindle/transport)/")
  foreach(line ${lines})
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
    string(APPEND found "\n  ${rel}: ${line}")
  endforeach()
endforeach()
list(LENGTH files count)
if(count EQUAL 0)
  message(FATAL_ERROR "no DCPS sources under ${SOURCE_DIR}/runtime/src/dcps")
endif()
if(NOT found STREQUAL "")
  message(FATAL_ERROR "DCPS includes headers of the protocol layers (use the group layer):${found}")
endif()
message(STATUS "${count} DCPS files include no smc/, sst/, rdmc/ or transport header")
