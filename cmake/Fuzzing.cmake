# libFuzzer targets built by clang, whatever compiler the build uses.
#
# libFuzzer needs clang (-fsanitize=fuzzer), which need not be the build's
# compiler, so a fuzzer is one clang or clang++ command over the sources it
# reads rather than a CMake target of the build's compiler. fuzz/ (the
# cache's readers) and plugins/redis/fuzz/ (the RESP reader) use these two
# functions; a build without a clang that links a fuzzer goes on without
# them.
#
#   kjit_find_fuzz_compiler(<var> LANG C|CXX)
#     Sets <var> to clang-<major> or clang (clang++-<major> or clang++ for
#     CXX), from LLVM's tools first, when it links a -fsanitize=fuzzer
#     program; else to "". The probe runs once per build directory
#     (cached as KJIT_FUZZ_CLANG[XX]_LINKS_FUZZERS).
#
#   kjit_add_fuzzer(<target> COMPILER <clang> OUTPUT <file>
#                   SOURCES <file>... [DEPENDS <file>...] [FLAGS <flag>...]
#                   [LIBS <lib>...] [SANITIZE <flag>...] [COMMENT <text>]
#                   [EXCLUDE_FROM_ALL])
#     Builds <file> (in the current binary directory) with one command:
#     COMPILER FLAGS SANITIZE SOURCES LIBS -o <file>, and a target <target>
#     for it, built by default unless EXCLUDE_FROM_ALL. SANITIZE defaults to
#     -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all. DEPENDS
#     lists what else (headers) a change of should rebuild it.

include_guard(GLOBAL)

function(kjit_find_fuzz_compiler var)
  cmake_parse_arguments(ARG "" "LANG" "" ${ARGN})
  if(ARG_LANG STREQUAL "CXX")
    set(_cache KJIT_FUZZ_CLANGXX)
    set(_names clang++-${LLVM_VERSION_MAJOR} clang++)
    set(_probe ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/fuzzer-probe.cpp)
    set(_source "#include <cstddef>\n#include <cstdint>\n"
      "extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) "
      "{ return 0; }\n")
  elseif(ARG_LANG STREQUAL "C")
    set(_cache KJIT_FUZZ_CLANG)
    set(_names clang-${LLVM_VERSION_MAJOR} clang)
    set(_probe ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/fuzzer-probe.c)
    set(_source "#include <stddef.h>\n#include <stdint.h>\n"
      "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n")
  else()
    message(FATAL_ERROR "kjit_find_fuzz_compiler: LANG must be C or CXX")
  endif()
  find_program(${_cache} NAMES ${_names} HINTS ${LLVM_TOOLS_BINARY_DIR})
  if(${_cache} AND NOT DEFINED ${_cache}_LINKS_FUZZERS)
    file(WRITE ${_probe} ${_source})
    execute_process(
      COMMAND ${${_cache}} -fsanitize=fuzzer ${_probe}
        -o ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/fuzzer-probe
      RESULT_VARIABLE _probe_status OUTPUT_QUIET ERROR_QUIET)
    if(_probe_status EQUAL 0)
      set(${_cache}_LINKS_FUZZERS ON CACHE INTERNAL "")
    else()
      set(${_cache}_LINKS_FUZZERS OFF CACHE INTERNAL "")
    endif()
  endif()
  if(${_cache}_LINKS_FUZZERS)
    set(${var} ${${_cache}} PARENT_SCOPE)
  else()
    set(${var} "" PARENT_SCOPE)
  endif()
endfunction()

function(kjit_add_fuzzer target)
  cmake_parse_arguments(ARG "EXCLUDE_FROM_ALL" "COMPILER;OUTPUT;COMMENT"
    "SOURCES;DEPENDS;FLAGS;LIBS;SANITIZE" ${ARGN})
  if(NOT ARG_SANITIZE)
    set(ARG_SANITIZE -fsanitize=fuzzer,address,undefined
      -fno-sanitize-recover=all)
  endif()
  if(NOT ARG_COMMENT)
    set(ARG_COMMENT "Building ${target} with ${ARG_COMPILER}")
  endif()
  set(_output ${CMAKE_CURRENT_BINARY_DIR}/${ARG_OUTPUT})
  add_custom_command(OUTPUT ${_output}
    COMMAND ${ARG_COMPILER} ${ARG_FLAGS} ${ARG_SANITIZE} ${ARG_SOURCES}
      ${ARG_LIBS} -o ${_output}
    DEPENDS ${ARG_SOURCES} ${ARG_DEPENDS}
    COMMENT "${ARG_COMMENT}"
    COMMAND_EXPAND_LISTS VERBATIM)
  if(ARG_EXCLUDE_FROM_ALL)
    add_custom_target(${target} DEPENDS ${_output})
  else()
    add_custom_target(${target} ALL DEPENDS ${_output})
  endif()
endfunction()
