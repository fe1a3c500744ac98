/*===- CompilerAPI.h - what the runtime asks of the compiler ------*- C -*-===*\
|*                                                                            *|
|* The small C interface of libkjit-compiler that the runtime core loads with *|
|* dlopen on the first cache miss (docs/Architecture.md). C so that the       *|
|* runtime includes no LLVM/MLIR header and the two libraries share no C++   *|
|* types. Unlike include/kjit-c, this is not a stable ABI: the runtime and    *|
|* the compiler of one kjit build go together (the version is checked).       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_COMPILER_COMPILERAPI_H
#define KJIT_COMPILER_COMPILERAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KJIT_COMPILER_API_VERSION 1

/** One compile. Strings are NUL-terminated; all are borrowed. */
typedef struct kjit_compile_request {
  const char *ir; /**< The module's text. */
  size_t ir_size;
  const char *source_name; /**< File name for diagnostics. */
  const char *kernel;      /**< Kernel to compile. */
  /** The specialization record (JSON, docs/Specialization.md). */
  const char *record_json;
  /** Global values to bake in: {"NAME": "0x<bits>", ...} (bit patterns of
   *  the global's type); globals not named keep their value in `ir`. */
  const char *globals_json;
  const char *target; /**< "host". */
  int debug;          /**< Keep device asserts. */
} kjit_compile_request;

/** Results are malloc'd by the compiler and freed with `release`. */
typedef struct kjit_compiler_api {
  uint32_t version; /**< KJIT_COMPILER_API_VERSION. */
  /** Reads a module and describes every kernel: its manifest, dependency
   *  key and globals (JSON, see lib/Compiler/CompilerAPI.cpp). Returns 0 and
   *  sets *json, or nonzero and sets *error. */
  int (*analyze)(const char *ir, size_t ir_size, const char *source_name,
                 char **json, char **error);
  /** Compiles one kernel: *artifact (the target's artifact bytes) and
   *  *metadata (JSON), or *error. */
  int (*compile)(const kjit_compile_request *request, char **artifact,
                 size_t *artifact_size, char **metadata, char **error);
  void (*release)(void *buffer);
} kjit_compiler_api;

/** The entry point the runtime looks up. */
__attribute__((visibility("default"))) const kjit_compiler_api *
kjit_compiler_get_api(void);

#ifdef __cplusplus
}
#endif

#endif /* KJIT_COMPILER_COMPILERAPI_H */
