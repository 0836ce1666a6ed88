# Manual pages of the installed programs, made at build time by help2man (Debian help2man)
# from each program's --help, and installed in section 1 beside the program (same install
# component). Where help2man is missing the programs are installed without them, said once.
#
#   spindle_man_page(TARGET <program target> NAME "<one line: what it is>")
find_program(SPINDLE_HELP2MAN help2man)
if(NOT SPINDLE_HELP2MAN)
  message(STATUS "help2man not found: no manual pages (tools/install-deps.sh installs it)")
endif()

function(spindle_man_page)
  cmake_parse_arguments(ARG "" "TARGET;NAME" "" ${ARGN})
  if(NOT SPINDLE_HELP2MAN)
    return()
  endif()
  get_target_property(_program ${ARG_TARGET} OUTPUT_NAME)
  if(NOT _program)
    set(_program ${ARG_TARGET})
  endif()
  set(_page ${CMAKE_CURRENT_BINARY_DIR}/${_program}.1)
  add_custom_command(OUTPUT ${_page}
    COMMAND ${SPINDLE_HELP2MAN} --no-info --no-discard-stderr
            --version-string=${PROJECT_VERSION} --name=${ARG_NAME} --output=${_page}
            $<TARGET_FILE:${ARG_TARGET}>
    DEPENDS ${ARG_TARGET}
    COMMENT "help2man: ${_program}.1" VERBATIM)
  add_custom_target(${ARG_TARGET}_man ALL DEPENDS ${_page})
  install(FILES ${_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
