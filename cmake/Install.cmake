#===- cmake/Install.cmake - cmake --install and the kjit CMake package ------===#
#
# What `cmake --install build --prefix P` puts under P (docs/Install.md lists
# the tree; test/Install/tree.test compares the two):
#   bin/        the tools (kjit-run, kjit-opt, kjit-cache) and the backend
#               conformance suite (kjit-backend-conformance, when GoogleTest
#               was found: docs/Conformance.md)
#   lib/        libkjit-runtime/-model/-mlir (versioned, with SONAMEs), the
#               compiler module libkjit-compiler.so and the in-tree plugins
#               libkjit-host/-cuda/-trace.so, all in one directory: the
#               runtime finds the compiler module and a target's in-tree
#               backend beside itself (getRuntimeLibraryDir)
#   include/    kjit-c/ (the plugin ABI: Plugin.h, HostKernel.h) and the C++
#               headers the runtime's public headers include, no more
#   lib/cmake/kjit/    find_package(kjit): kjit::plugin-abi, kjit::runtime,
#                      kjit_add_plugin()
#   lib/pkgconfig/kjit-plugin.pc, share/kjit/plugin.map
#
# Relocatable: run paths are $ORIGIN-relative, and the package files locate
# the prefix from their own directory, so the tree may be moved or unpacked
# anywhere (test/Install/examples.test builds against a moved copy).
#===----------------------------------------------------------------------===#
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KJIT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kjit CACHE STRING
    "Where the kjit CMake package is installed, relative to the prefix")
set(KJIT_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/kjit)

# Run paths. Tools find lib/ relative to bin/; libraries and modules find
# each other in their own directory. The LLVM library directory is added for
# what links Debian's libMLIR.so/libLLVM.so, which live outside the default
# search path (/usr/lib/llvm-22/lib): a system path, not a build or install
# path.
file(RELATIVE_PATH _kjit_bin_to_lib
  ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set(_kjit_tool_rpath "\$ORIGIN/${_kjit_bin_to_lib}")
set(_kjit_lib_rpath "\$ORIGIN")

#----------------------------------------------------------------------------#
# Libraries and modules
#----------------------------------------------------------------------------#
# kjit::plugin-abi (plugins/CMakeLists.txt): the C header alone (C99).

# The runtime's include directory, for embedders (in the build tree the
# global include_directories of the top level provide it).
target_include_directories(kjit-runtime INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_include_directories(kjit-model INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(kjit-runtime PROPERTIES EXPORT_NAME runtime
  INSTALL_RPATH "${_kjit_lib_rpath}")
set_target_properties(kjit-model PROPERTIES EXPORT_NAME model
  INSTALL_RPATH "${_kjit_lib_rpath}")

install(TARGETS kjit-plugin-abi kjit-runtime kjit-model
  EXPORT kjitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The compiler: libkjit-mlir (the dialect, passes and targets over
# libMLIR.so; kjit-opt and the compiler module link it) and the module the
# runtime opens. Not exported: the runtime reaches the compiler only through
# dlopen and the one factory of compiler.map, never through a link. A module
# has no SONAME (nothing links it; it is opened by path).
set(_kjit_mlir_rpath "${_kjit_lib_rpath};${LLVM_LIBRARY_DIR}")
set_target_properties(kjit-mlir kjit-compiler PROPERTIES
  INSTALL_RPATH "${_kjit_mlir_rpath}")
install(TARGETS kjit-mlir kjit-compiler
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# In-tree plugins (kjit_add_c_plugin(... SHIPPED), plugins/CMakeLists.txt),
# beside the runtime (Runtime::Impl::find looks for libkjit-<target>.so
# there). They need only libc, and the Redis store libhiredis.
get_property(_kjit_shipped_plugins GLOBAL PROPERTY KJIT_SHIPPED_PLUGINS)
foreach(_kjit_plugin ${_kjit_shipped_plugins})
  install(TARGETS ${_kjit_plugin} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endforeach()

#----------------------------------------------------------------------------#
# Tools
#----------------------------------------------------------------------------#
list(APPEND KJIT_INSTALL_TOOLS kjit-run kjit-opt kjit-cache)
# The conformance suite for backend authors (tools/kjit-backend-conformance).
if(TARGET kjit-backend-conformance)
  list(APPEND KJIT_INSTALL_TOOLS kjit-backend-conformance)
endif()
foreach(_kjit_tool IN LISTS KJIT_INSTALL_TOOLS)
  set(_kjit_rpath "${_kjit_tool_rpath}")
  # kjit-opt links libkjit-mlir and so libMLIR.so.
  if(_kjit_tool STREQUAL "kjit-opt")
    list(APPEND _kjit_rpath "${LLVM_LIBRARY_DIR}")
  endif()
  set_target_properties(${_kjit_tool} PROPERTIES INSTALL_RPATH "${_kjit_rpath}")
  install(TARGETS ${_kjit_tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

#----------------------------------------------------------------------------#
# Headers
#----------------------------------------------------------------------------#
# The plugin ABI (one header for every minor: docs/PluginABI.md) and the
# host kernel ABI.
install(DIRECTORY ${KJIT_SOURCE_DIR}/include/kjit-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

# The runtime's public headers and exactly what they include (transitively):
# Runtime.h -> Module.h, PluginHost.h, LaunchOptions.h; Module.h -> Binder.h,
# KernelManifest.h, Specialization.h; and so on down to DType.h.
# test/Install/examples.test builds a program that embeds the runtime
# (Inputs/embed) against the install tree alone, so a header missing here
# fails there.
set(KJIT_INSTALL_HEADERS
  Runtime/Runtime.h
  Runtime/Module.h
  Runtime/Autotuner.h
  Plugin/PluginHost.h
  Model/Argument.h
  Model/Binder.h
  Model/DType.h
  Model/KernelManifest.h
  Model/LaunchOptions.h
  Model/Specialization.h
)
foreach(_kjit_header IN LISTS KJIT_INSTALL_HEADERS)
  get_filename_component(_kjit_dir ${_kjit_header} DIRECTORY)
  install(FILES ${KJIT_SOURCE_DIR}/include/kjit/${_kjit_header}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kjit/${_kjit_dir})
endforeach()

#----------------------------------------------------------------------------#
# The CMake package and the pkg-config file
#----------------------------------------------------------------------------#
install(FILES ${KJIT_SOURCE_DIR}/plugins/plugin.map
  DESTINATION ${KJIT_INSTALL_DATADIR})

install(EXPORT kjitTargets NAMESPACE kjit::
  DESTINATION ${KJIT_INSTALL_CMAKEDIR})
set(KJIT_INSTALL_PLUGIN_MAP ${KJIT_INSTALL_DATADIR}/plugin.map)
set(KJIT_INSTALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR})
set(KJIT_INSTALL_BIN_DIR ${CMAKE_INSTALL_BINDIR})
configure_package_config_file(
  ${KJIT_SOURCE_DIR}/cmake/install/kjitConfig.cmake.in
  ${KJIT_BINARY_DIR}/cmake/kjitConfig.cmake
  INSTALL_DESTINATION ${KJIT_INSTALL_CMAKEDIR}
  PATH_VARS KJIT_INSTALL_PLUGIN_MAP KJIT_INSTALL_PLUGIN_DIR
            KJIT_INSTALL_BIN_DIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  ${KJIT_BINARY_DIR}/cmake/kjitConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  # 0.x: a minor may change the C++ runtime's interface.
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${KJIT_BINARY_DIR}/cmake/kjitConfig.cmake
  ${KJIT_BINARY_DIR}/cmake/kjitConfigVersion.cmake
  ${KJIT_SOURCE_DIR}/cmake/install/kjitPlugin.cmake
  DESTINATION ${KJIT_INSTALL_CMAKEDIR})

# pkg-config: ${pcfiledir} makes the file relocatable.
file(RELATIVE_PATH _kjit_pc_to_prefix
  ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" _kjit_pc_to_prefix "${_kjit_pc_to_prefix}")
set(KJIT_PC_PREFIX "\${pcfiledir}/${_kjit_pc_to_prefix}")
configure_file(${KJIT_SOURCE_DIR}/cmake/install/kjit-plugin.pc.in
  ${KJIT_BINARY_DIR}/cmake/kjit-plugin.pc @ONLY)
install(FILES ${KJIT_BINARY_DIR}/cmake/kjit-plugin.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
