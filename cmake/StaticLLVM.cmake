#===- cmake/StaticLLVM.cmake - LLVM/MLIR from Debian's static archives ----===#
#
# kjit_llvm_mlir_static: an INTERFACE target that links one self-contained
# copy of LLVM and MLIR from the static archives of llvm-22-dev and
# libmlir-22-dev, for the bundle's compiler module (lib/Compiler,
# docs/Bundle.md). Included from the top level after find_package(MLIR) when
# KJIT_BUNDLE is on. The four traps of Debian's CMake export
# (redteam note 8) and what this file does about each:
#
#  1. LLVMSupport's interface names zstd::libzstd_shared, which only exists
#     when libzstd-dev is installed: defined here on libzstd.so.1 if missing.
#  2. The static MLIR targets name the *shared* "LLVM" (and MLIRExecutionEngine
#     / MLIRJitRunner the shared "MLIR"): every such entry is redirected to
#     the static archives (kjit_llvm_static / kjit_mlir_ee_deps), otherwise
#     libLLVM.so and libMLIR.so end up in a "static" link.
#  3. ExecutionEngine needs LLVMPerfJITEvents: it is in the LLVM set.
#  4. LLVMSupport's interface names libz3.so (not on the GPU machine): the
#     module links with --as-needed, which drops it (LLVM never calls Z3 here).
#
# Which archives: every static LLVM library of the target-independent part
# plus the X86 (host) and NVPTX (cuda) targets, and every static MLIR library
# except tests, the C API, tools' mains and the runtime-support libraries.
# lld (liblld-22-dev), which links host kernels in process, is two more
# archives, liblldELF.a and liblldCommon.a: the host target finds them
# (lib/Target/Host/CMakeLists.txt, kjit_add_target's LINK_ARCHIVES; the dev
# module links them too) and lib/Compiler/CMakeLists.txt puts them before
# these. Its ELF driver initializes every target LLVM was built with; the
# ones left out here are no-op stubs in the static module (the host
# target's STATIC_MODULE_SOURCES, lib/Target/Host/LldTargetStubs.cpp).
# Only the archive members something references are linked (and
# --gc-sections drops what they do not use), so a long list costs link-time
# scanning, not size; in exchange a new kjit source that uses another MLIR
# dialect, conversion or translation (e.g. the cuda target's GPU/NVVM
# libraries) links without an edit here.
#===----------------------------------------------------------------------===#

if(TARGET kjit_llvm_mlir_static)
  return()
endif()

# Trap 1.
if(NOT TARGET zstd::libzstd_shared)
  find_library(KJIT_ZSTD_LIBRARY NAMES zstd libzstd.so.1
    PATHS /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib)
  if(NOT KJIT_ZSTD_LIBRARY)
    message(FATAL_ERROR "KJIT_BUNDLE: libzstd.so.1 not found (LLVMSupport needs it)")
  endif()
  add_library(zstd::libzstd_shared SHARED IMPORTED GLOBAL)
  set_target_properties(zstd::libzstd_shared PROPERTIES
    IMPORTED_LOCATION ${KJIT_ZSTD_LIBRARY})
endif()

# The LLVM archives.
set(_kjit_llvm_exclude
  # Other targets than X86 (host) and NVPTX (cuda).
  "^LLVM(AArch64|AMDGPU|ARM|AVR|BPF|Hexagon|Lanai|LoongArch|Mips|MSP430|PowerPC|RISCV|Sparc|SPIRV|SystemZ|VE|WebAssembly|XCore|M68k|Xtensa)"
  # Shared libraries, tools' libraries, and libraries with extra system deps.
  "^(LLVM|LTO|Remarks|Polly)$" "^LLVMBOLT" "^LLVMExegesis" "^LLVMLineEditor$"
  "^LLVMDebuginfod$" "^LLVMWindowsManifest$" "^LLVMFuzz" "^LLVMTableGen"
  "^LLVMOptDriver$" "^LLVMCFIVerify$" "^LLVMDiff$" "^LLVMSupportLSP$")
set(KJIT_STATIC_LLVM_LIBS)
foreach(lib IN LISTS LLVM_AVAILABLE_LIBS)
  set(_skip OFF)
  foreach(re IN LISTS _kjit_llvm_exclude)
    if(lib MATCHES "${re}")
      set(_skip ON)
    endif()
  endforeach()
  if(NOT _skip AND TARGET ${lib})
    get_target_property(_type ${lib} TYPE)
    if(_type STREQUAL "STATIC_LIBRARY")
      list(APPEND KJIT_STATIC_LLVM_LIBS ${lib})
    endif()
  endif()
endforeach()
foreach(required LLVMSupport LLVMCore LLVMX86CodeGen LLVMNVPTXCodeGen
                 LLVMPerfJITEvents)
  if(NOT required IN_LIST KJIT_STATIC_LLVM_LIBS)
    message(FATAL_ERROR "KJIT_BUNDLE: the static ${required} is missing "
                        "(install llvm-22-dev)")
  endif()
endforeach()
add_library(kjit_llvm_static INTERFACE)
target_link_libraries(kjit_llvm_static INTERFACE ${KJIT_STATIC_LLVM_LIBS})

# The MLIR archives.
get_property(_kjit_mlir_all GLOBAL PROPERTY MLIR_ALL_LIBS)
set(_kjit_mlir_exclude
  "Test" "CAPI" "^MLIR$" "^mlir_" "MlirOptMain" "^MLIROptLib$" "Lsp"
  "Tblgen" "TableGen" "PDLL" "^MLIRQueryLib$" "^MLIRReduceLib$"
  "^MLIRTranslateLib$" "JitRunner" "RegisterAll" "SparseTensorRuntime"
  "^MLIRPluginsLib$" "ExecutionEngineShared")
set(KJIT_STATIC_MLIR_LIBS)
foreach(lib IN LISTS _kjit_mlir_all)
  set(_skip OFF)
  foreach(re IN LISTS _kjit_mlir_exclude)
    if(lib MATCHES "${re}")
      set(_skip ON)
    endif()
  endforeach()
  if(NOT _skip AND TARGET ${lib})
    get_target_property(_type ${lib} TYPE)
    if(_type STREQUAL "STATIC_LIBRARY")
      list(APPEND KJIT_STATIC_MLIR_LIBS ${lib})
    endif()
  endif()
endforeach()

# Trap 2: what MLIRExecutionEngine gets instead of libMLIR.so.
add_library(kjit_mlir_ee_deps INTERFACE)
target_link_libraries(kjit_mlir_ee_deps INTERFACE
  MLIRBuiltinToLLVMIRTranslation MLIRExecutionEngineUtils MLIRLLVMDialect
  MLIRLLVMToLLVMIRTranslation MLIROpenMPToLLVMIRTranslation
  MLIRTargetLLVMIRExport)
# Redirect "LLVM" and "MLIR" in the interface of every static MLIR/LLVM
# target. Only kjit-compiler-static links these targets; the shared dev build
# links the targets "MLIR" and "LLVM" directly, which this does not change.
# Every static target is redirected, also those left out above that an
# included one names.
foreach(t IN LISTS MLIR_EXPORTED_TARGETS LLVM_AVAILABLE_LIBS)
  if(NOT TARGET ${t})
    continue()
  endif()
  get_target_property(_type ${t} TYPE)
  get_target_property(_l ${t} INTERFACE_LINK_LIBRARIES)
  if(_l AND _type STREQUAL "STATIC_LIBRARY")
    list(TRANSFORM _l REPLACE "^LLVM$" kjit_llvm_static)
    list(TRANSFORM _l REPLACE "^MLIR$" kjit_mlir_ee_deps)
    list(TRANSFORM _l REPLACE "^\\$<LINK_ONLY:LLVM>$"
         "$<LINK_ONLY:kjit_llvm_static>")
    list(TRANSFORM _l REPLACE "^\\$<LINK_ONLY:MLIR>$"
         "$<LINK_ONLY:kjit_mlir_ee_deps>")
    # LLVMExtensions names Polly, whose archives Debian does not ship (Polly
    # is the LLVMPolly.so plugin there); nothing kjit links calls it.
    list(REMOVE_ITEM _l Polly PollyISL)
    set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_l}")
  endif()
endforeach()

# The linker (KJIT_STATIC_LINKER, top level).
set(KJIT_STATIC_LINKER_OPTION "")
set(_kjit_linker ${KJIT_STATIC_LINKER})
if(_kjit_linker STREQUAL "auto")
  find_program(KJIT_LD_LLD NAMES ld.lld)
  set(_kjit_linker default)
  if(KJIT_LD_LLD)
    set(_kjit_linker lld)
  endif()
endif()
if(NOT _kjit_linker STREQUAL "default")
  set(KJIT_STATIC_LINKER_OPTION -fuse-ld=${_kjit_linker})
endif()

add_library(kjit_llvm_mlir_static INTERFACE)
target_link_libraries(kjit_llvm_mlir_static INTERFACE
  ${KJIT_STATIC_MLIR_LIBS} kjit_llvm_static)
list(LENGTH KJIT_STATIC_MLIR_LIBS _n_mlir)
list(LENGTH KJIT_STATIC_LLVM_LIBS _n_llvm)
message(STATUS "KJIT_BUNDLE: static compiler module over ${_n_mlir} MLIR and "
               "${_n_llvm} LLVM archives, linker: ${_kjit_linker}")
