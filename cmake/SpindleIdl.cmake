# spindle_idl_generate(TARGET <name> FILES <a.idl>... [INCLUDE_DIRS <dir>...] [OUTPUT_DIR <dir>]
#                      [DEFINES <NAME[=VALUE]>...])
#
# Runs idlc on each IDL file and builds the generated C++ into the static library <name>,
# which links Spindle's CDR support. `#include "<stem>.hpp"` then gives the types. Works in
# the Spindle source tree (target idlc) and from an installed package (Spindle::idlc).
function(spindle_idl_generate)
  cmake_parse_arguments(ARG "" "TARGET;OUTPUT_DIR" "FILES;INCLUDE_DIRS;DEFINES" ${ARGN})
  if(NOT ARG_TARGET OR NOT ARG_FILES)
    message(FATAL_ERROR "spindle_idl_generate: TARGET and FILES are required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "spindle_idl_generate: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(TARGET Spindle::idlc)
    set(idlc Spindle::idlc)
  elseif(TARGET idlc)
    set(idlc idlc)
  else()
    message(FATAL_ERROR "spindle_idl_generate: no idlc (find_package(Spindle) first)")
  endif()
  if(ARG_OUTPUT_DIR)
    set(outdir ${ARG_OUTPUT_DIR})
  else()
    set(outdir ${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}_idl)
  endif()
  file(MAKE_DIRECTORY ${outdir})

  set(flags "")
  foreach(dir ${ARG_INCLUDE_DIRS})
    get_filename_component(dir ${dir} ABSOLUTE)
    list(APPEND flags -I ${dir})
  endforeach()
  foreach(def ${ARG_DEFINES})
    list(APPEND flags -D ${def})
  endforeach()

  set(sources "")
  set(headers "")
  foreach(idl ${ARG_FILES})
    get_filename_component(abs ${idl} ABSOLUTE)
    get_filename_component(stem ${idl} NAME_WE)
    set(hdr ${outdir}/${stem}.hpp)
    set(src ${outdir}/${stem}.cpp)
    add_custom_command(
      OUTPUT ${hdr} ${src}
      COMMAND ${idlc} ${flags} -o ${outdir} --depfile ${outdir}/${stem}.d ${abs}
      DEPENDS ${abs} ${idlc}
      DEPFILE ${outdir}/${stem}.d
      COMMENT "idlc ${idl}"
      VERBATIM)
    list(APPEND sources ${src})
    list(APPEND headers ${hdr})
  endforeach()

  add_library(${ARG_TARGET} STATIC ${sources} ${headers})
  target_include_directories(${ARG_TARGET} PUBLIC ${outdir})
  if(TARGET Spindle::cdr)
    target_link_libraries(${ARG_TARGET} PUBLIC Spindle::cdr)
  else()
    target_link_libraries(${ARG_TARGET} PUBLIC spindle_cdr)
  endif()
  target_compile_features(${ARG_TARGET} PUBLIC cxx_std_20)
  set_target_properties(${ARG_TARGET} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
