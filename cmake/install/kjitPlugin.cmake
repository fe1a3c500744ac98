# kjit_add_plugin(<target> <sources>... [NO_WERROR] [NO_VERSION_SCRIPT])
#
# Builds lib<target>.so, a kjit plugin. kjit's own plugins are built with this
# same function (plugins/CMakeLists.txt includes this file), so the rules are:
#   - C99 without extensions, -pedantic (and -Werror unless NO_WERROR): the
#     ABI header promises strict C99;
#   - hidden visibility, and a version script (KJIT_PLUGIN_MAP) that makes
#     kjit_plugin_negotiate_v1 the only export, so that two plugins never
#     interpose each other's symbols (NO_VERSION_SCRIPT: export more, for a
#     plugin that must);
#   - -Wl,-z,defs: every symbol resolves at link time against what the plugin
#     links (libc), never against a host it hopes will provide it.
# It links kjit::plugin-abi, and nothing of kjit's libraries.
# Included by kjitConfig.cmake, and by kjit's plugins/CMakeLists.txt; both set
# KJIT_PLUGIN_MAP and define kjit::plugin-abi first.
function(kjit_add_plugin name)
  cmake_parse_arguments(ARG "NO_WERROR;NO_VERSION_SCRIPT" "" "SOURCES" ${ARGN})
  set(_sources ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  if(NOT _sources)
    message(FATAL_ERROR "kjit_add_plugin(${name}): no sources given")
  endif()
  add_library(${name} MODULE ${_sources})
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    C_STANDARD 99
    C_STANDARD_REQUIRED ON
    C_EXTENSIONS OFF
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${name} PRIVATE kjit::plugin-abi)
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:C>:-pedantic>)
  if(NOT ARG_NO_WERROR)
    target_compile_options(${name} PRIVATE -Werror)
  endif()
  target_link_options(${name} PRIVATE -Wl,-z,defs)
  if(NOT ARG_NO_VERSION_SCRIPT)
    target_link_options(${name} PRIVATE
      "-Wl,--version-script=${KJIT_PLUGIN_MAP}")
    set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${KJIT_PLUGIN_MAP})
  endif()
endfunction()
