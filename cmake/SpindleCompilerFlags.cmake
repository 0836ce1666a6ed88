# Warnings, sanitizers and fuzzing flags shared by every Spindle target.
add_library(spindle_warnings INTERFACE)
target_compile_options(spindle_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wconversion -Wsign-conversion -Wnull-dereference
  -Wimplicit-fallthrough -Wformat=2)
# GCC 12 reports false maybe-uninitialized warnings inside std::variant/std::optional of
# std::string at -O2 (GCC bugs 105562, 107138); clang builds keep the check.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(spindle_warnings INTERFACE -Wno-maybe-uninitialized)
endif()
# A unity build (the sanitize and fuzz presets) compiles several sources as one: GCC then takes
# each included source for a header and warns where its classes hold types of its anonymous
# namespace. The check stays on in the other builds, where each source is its own unit.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(spindle_warnings INTERFACE -Wno-subobject-linkage)
endif()
if(SPINDLE_WERROR)
  target_compile_options(spindle_warnings INTERFACE -Werror)
endif()

if(SPINDLE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

if(SPINDLE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SPINDLE_FUZZ needs clang (libFuzzer): configure with CXX=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
