/*===- Internal.h - shared declarations of the host backend -------*- C -*-===*\
|*                                                                            *|
|* Types and functions shared by the files of the host backend plugin         *|
|* (libkjit-host.so). Nothing here crosses the plugin boundary: with hidden   *|
|* visibility and the version script, only kjit_plugin_negotiate_v1 is        *|
|* exported. docs/HostBackend.md explains the design.                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef KJIT_PLUGINS_HOST_INTERNAL_H
#define KJIT_PLUGINS_HOST_INTERNAL_H

#include "kjit-c/HostKernel.h"
#include "kjit-c/Plugin.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/*===----------------------------------------------------------------------===*\
|* Statuses                                                                   *|
\*===----------------------------------------------------------------------===*/

/** The host's API table, stored by init. Statuses can only be created through
 *  it, so every file that reports an error needs it. */
extern const kjit_host_api *host_api;

/** Creates a status whose message is formatted like printf. Never NULL. */
kjit_status *host_error(int32_t code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/*===----------------------------------------------------------------------===*\
|* Kernels                                                                    *|
\*===----------------------------------------------------------------------===*/

/** A loaded kernel: the handle `load` returns and `launch` receives. */
typedef struct host_kernel {
  void *dl;                 /**< dlopen handle of the kernel's object. */
  kjit_host_entry_fn entry; /**< kjit_host_entry_<name>. */
  uint32_t flags;           /**< kjit_host_flags_<name>. */
  /** kjit_host_signature_<name> (optional, see docs/HostBackend.md), or
   *  NULL when the object does not say what arguments it expects. */
  const char *signature;
  char *name; /**< NUL-terminated copy of the kernel name. */
  int fd;     /**< memfd the object was loaded from, or -1. */
  char *path; /**< The path dlopen saw (unique while the kernel lives). */
} host_kernel;

/*===----------------------------------------------------------------------===*\
|* Launches and the worker pool (Scheduler.c)                                 *|
\*===----------------------------------------------------------------------===*/

/** Settings read once from the environment at init. */
typedef struct host_config {
  unsigned workers;   /**< Worker threads, the launching one included. */
  size_t stack_bytes; /**< Usable bytes of each fiber stack. */
} host_config;

/** One launch, shared read-only by every worker except for `next_program`
 *  and the error record. */
typedef struct host_launch {
  const host_kernel *kernel;
  uint32_t grid[3];
  uint32_t threads;      /**< SIMT threads per program (x dimension). */
  uint64_t num_programs; /**< grid[0] * grid[1] * grid[2]. */
  void *const *args;     /**< HostKernel.h's args[i]. */
  uint64_t next_program; /**< Next linear program id to claim (atomic). */

  /* The first failure by (program, thread) order, and how many there were;
   * guarded by error_lock. */
  pthread_mutex_t error_lock;
  uint64_t error_program; /**< Linear program id of `error`. */
  uint32_t error_thread;
  char *error; /**< malloc'd message, NULL when none. */
  int32_t error_code;
  uint64_t num_errors;
} host_launch;

/** Reads KJIT_HOST_WORKERS and KJIT_HOST_STACK_KIB; never fails. */
void host_config_from_environment(host_config *config);

/** Starts nothing: the pool is created by the first launch. */
void host_pool_init(const host_config *config);

/** Joins the worker threads and unmaps their stacks (plugin fini). */
void host_pool_shutdown(void);

/** Runs every program of `launch` on the pool and returns when all have
 *  finished. Returns a status for a failure of the pool itself (no memory
 *  for stacks); device failures are recorded in `launch`. Launches from
 *  several threads are serialized. */
kjit_status *host_pool_run(host_launch *launch);

/*===----------------------------------------------------------------------===*\
|* Argument conversion (Args.c)                                               *|
\*===----------------------------------------------------------------------===*/

/** Storage of one converted argument: the value a parameter's C type holds,
 *  at the start of the slot (little-endian, so narrower types fit). */
typedef union host_arg_slot {
  uint64_t u64;
  double f64;
  float f32;
  uint32_t u32;
  uint16_t u16;
  uint8_t u8;
  void *ptr;
} host_arg_slot;

/** Converts the launch arguments of `kernel` into `slots` and `pointers`
 *  (arrays of at least `num_args` entries; constexpr arguments are skipped,
 *  so `*count` may be smaller). Checks count and types against the kernel's
 *  signature when it has one. */
kjit_status *host_convert_args(const host_kernel *kernel, size_t num_args,
                               const kjit_arg *const *args,
                               host_arg_slot *slots, void **pointers,
                               size_t *count);

/** IEEE binary16 bits of `value`, rounded to nearest even. */
uint16_t host_double_to_fp16(double value);
/** bfloat16 bits of `value`, rounded to nearest even (directly from the
 *  double, so there is no double rounding through float). */
uint16_t host_double_to_bf16(double value);

#endif /* KJIT_PLUGINS_HOST_INTERNAL_H */
